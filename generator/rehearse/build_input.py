"""What a rehearsal reads from a ``blueprint generate`` output directory (never the blueprint itself).

``manifest.json`` (the design's name), ``cabling/cables.csv`` (the cables technicians pull: the wiring),
``switches/<fabric>/<switch>/startup.yaml|frr.conf`` and ``switches/asn-plan.csv`` (Ethernet/RoCE),
``cabling/ibnetdiscover/<fabric>.net`` and ``subnet_manager/<fabric>/`` (InfiniBand),
``report/plan.json`` (the plan's metrics). The files may have been edited since ``generate`` wrote them,
so they are read as foreign input: bounded, and a bad one is refused with its location.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.foreign import ByteBudget, ForeignInputError, parse_json, read_foreign_text
from generator.rehearse import names
from generator.rehearse.nvue import SwitchConfig, from_frr_conf, from_startup

MAX_FILE = 64 * 1024 * 1024  # a 100k-GPU build's cables.csv is ~60 MB
MAX_CONFIG = 4 * 1024 * 1024  # one switch's configuration


@dataclass(frozen=True)
class Cable:
    id: str
    fabric: str
    layer: str
    a: str  # device
    a_port: str
    a_cage: str
    a_cage_port: str
    b: str
    b_port: str
    b_cage: str
    b_cage_port: str
    a_netdev: str = ""  # the host interface the plan names at this end, "" where it names none
    b_netdev: str = ""
    rail: str = ""


@dataclass(frozen=True)
class AsnEntry:
    fabric: str
    role: str
    asn: int
    loopback: str


@dataclass(frozen=True)
class IbFabric:
    name: str
    netfile: Path
    members: tuple[tuple[str, Path], ...]  # (SM host, its opensm.conf), master first as generated
    partitions: Path | None


@dataclass
class Build:
    root: Path
    name: str
    cables: list[Cable] = field(default_factory=list)
    switches: dict[str, dict[str, SwitchConfig]] = field(default_factory=dict)  # fabric -> name -> config
    asn_plan: dict[str, AsnEntry] = field(default_factory=dict)
    infiniband: dict[str, IbFabric] = field(default_factory=dict)
    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)  # plan.json fabrics

    @property
    def fabrics(self) -> list[str]:
        return sorted({*self.switches, *self.infiniband})

    def cables_of(self, fabric: str) -> list[Cable]:
        return [c for c in self.cables if c.fabric == fabric]


def read_build(root: Path) -> Build:
    """Raises ForeignInputError when ``root`` is not a usable ``generate`` output."""
    budget = ByteBudget()
    manifest = root / "manifest.json"
    if not manifest.is_file():
        raise ForeignInputError(str(root), "not a `blueprint generate` output directory (no manifest.json)")
    doc = parse_json(read_foreign_text(manifest, MAX_FILE, budget), str(manifest))
    blueprint = doc.get("blueprint") if isinstance(doc, dict) else None
    name = blueprint.get("name") if isinstance(blueprint, dict) else None
    build = Build(root, str(name or root.name))
    _read_switches(build, budget)
    _read_infiniband(build)
    if build.fabrics:
        build.cables = _read_cables(root / "cabling" / "cables.csv", budget)
    plan_json = root / "report" / "plan.json"
    if plan_json.is_file():
        plan = parse_json(read_foreign_text(plan_json, MAX_FILE, budget), str(plan_json))
        fabrics = plan.get("fabrics") if isinstance(plan, dict) else None
        build.metrics = fabrics if isinstance(fabrics, dict) else {}
    return build


def _read_cables(path: Path, budget: ByteBudget) -> list[Cable]:
    if not path.is_file():
        raise ForeignInputError(str(path), "missing: the cabling plan is the rehearsal's wiring")
    rows = csv.DictReader(io.StringIO(read_foreign_text(path, MAX_FILE, budget)))
    need = ("cable_id", "fabric", "layer", "a_device", "a_port", "b_device", "b_port")
    with _csv_errors(path, rows):
        header = rows.fieldnames
    if header is None or any(n not in header for n in need):
        raise ForeignInputError(f"{path}:1", f"the header lacks one of {', '.join(need)}")
    cables: list[Cable] = []
    taken: dict[tuple[str, str], str] = {}
    for row in _csv_rows(path, rows):
        where = f"{path}:{rows.line_num}"
        cable = _cable(row, where)
        ends = ((cable.a, cable.a_port), (cable.b, cable.b_port))
        if ends[0] == ends[1]:
            raise ForeignInputError(where, f"cable {cable.id} joins {ends[0][0]} {ends[0][1]} to itself")
        for device, port in ends:  # a port takes one cable: ip(8) refused the second link ("File exists")
            first = taken.setdefault((device, port), where)
            if first != where:
                raise ForeignInputError(where, f"{device} {port} is cabled twice (also at {first})")
        cables.append(cable)
    return cables


def _cable(row: dict[str | Any, Any], where: str) -> Cable:
    """One row, every name it hands to ip(8) and the daemons checked (names.py); a short row refused."""
    if None in row or any(v is None for v in row.values()):
        raise ForeignInputError(where, "the row's field count differs from the header's")

    def field(key: str) -> str:
        value = row.get(key)
        return value if isinstance(value, str) else ""

    ends = {}
    for end in ("a", "b"):
        ends[end] = (
            names.device(field(f"{end}_device"), where),
            names.port(field(f"{end}_port"), where),
            names.number_or_empty(field(f"{end}_cage"), where),
            names.number_or_empty(field(f"{end}_cage_port"), where),
        )
        if field(f"{end}_netdev"):
            names.ifname(field(f"{end}_netdev"), where)
    return Cable(names.text(field("cable_id"), where), names.text(field("fabric"), where),
                 names.text(field("layer"), where), *ends["a"], *ends["b"], field("a_netdev"),
                 field("b_netdev"), names.text(field("rail"), where))  # fmt: skip


def _read_switches(build: Build, budget: ByteBudget) -> None:
    base = build.root / "switches"
    if not base.is_dir():
        return
    for fabric_dir in sorted(p for p in base.iterdir() if p.is_dir()):
        configs: dict[str, SwitchConfig] = {}
        names.device(fabric_dir.name, str(fabric_dir))
        for sw_dir in sorted(p for p in fabric_dir.iterdir() if p.is_dir()):
            configs[names.device(sw_dir.name, str(sw_dir))] = _read_switch(sw_dir, fabric_dir.name, budget)
        if configs:
            build.switches[fabric_dir.name] = configs
    asn_csv = base / "asn-plan.csv"
    if asn_csv.is_file():
        build.asn_plan = _read_asn_plan(asn_csv, budget)


def _read_switch(sw_dir: Path, fabric: str, budget: ByteBudget) -> SwitchConfig:
    nvue, frr = sw_dir / "startup.yaml", sw_dir / "frr.conf"
    if frr.is_file():
        return from_frr_conf(read_foreign_text(frr, MAX_CONFIG, budget), sw_dir.name, fabric, str(frr))
    if nvue.is_file():
        return from_startup(read_foreign_text(nvue, MAX_CONFIG, budget), sw_dir.name, fabric, str(nvue))
    raise ForeignInputError(str(sw_dir), "holds neither startup.yaml (NVUE) nor frr.conf")


def _read_asn_plan(path: Path, budget: ByteBudget) -> dict[str, AsnEntry]:
    out = {}
    rows = csv.DictReader(io.StringIO(read_foreign_text(path, MAX_FILE, budget)))
    for row in _csv_rows(path, rows):
        try:
            out[row["switch"]] = AsnEntry(row["fabric"], row["role"], int(row["asn"]), row["loopback"])
        except (KeyError, TypeError, ValueError):
            raise ForeignInputError(
                f"{path}:{rows.line_num}", "expected fabric, switch, role, asn, loopback"
            ) from None
    return out


@contextmanager
def _csv_errors(path: Path, rows: csv.DictReader[str]) -> Iterator[None]:
    """A csv.Error (a field over csv.field_size_limit(), 128 KiB; a NUL; an unterminated quote at the end)
    as a refusal at the line the reader stopped on: it was an internal error (exit 3)."""
    try:
        yield
    except csv.Error as exc:  # the DictReader's line_num is its last good row's; its reader's, this line's
        line = rows.reader.line_num
        raise ForeignInputError(f"{path}:{line}", f"not CSV this command reads: {exc}") from None


def _csv_rows(path: Path, rows: csv.DictReader[str]) -> Iterator[dict[str | Any, Any]]:
    """The rows of ``rows``, a csv.Error refused at its line (:func:`_csv_errors`)."""
    while True:
        with _csv_errors(path, rows):
            row = next(rows, None)
        if row is None:
            return
        yield row


def _read_infiniband(build: Build) -> None:
    base = build.root / "cabling" / "ibnetdiscover"
    for netfile in sorted(base.glob("*.net")) if base.is_dir() else []:
        fabric = netfile.stem
        sm_dir = build.root / "subnet_manager" / fabric
        members: list[tuple[str, Path]] = []
        if sm_dir.is_dir():
            confs = [p / "opensm.conf" for p in sorted(sm_dir.iterdir()) if (p / "opensm.conf").is_file()]
            members = sorted(((c.parent.name, c) for c in confs), key=lambda m: -_priority(m[1]))
        parts = sm_dir / "partitions.conf"
        build.infiniband[fabric] = IbFabric(
            fabric, netfile, tuple(members), parts if parts.is_file() else None
        )


def _priority(conf: Path) -> int:
    """sm_priority of an opensm.conf (the master has the highest)."""
    for line in read_foreign_text(conf, MAX_CONFIG).splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "sm_priority" and parts[1].isdigit():
            return int(parts[1])
    return 0
