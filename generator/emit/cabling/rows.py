"""One row per cable, in pull order: the table every cabling format (CSV, XLSX, NetBox) is written from.

Everything here is read from the plan (``Plan.links``, ``Plan.device_by_name``, ``Plan.rack_by_id``) and the
catalogue's media entries; nothing about the fabric is re-derived.

Label convention (docs/cabling.md): ``<site>-R<row>-<position>-U<unit>-<device>-<port>``, e.g.
``dc1-R01-05-U12-c-leaf-su1-r0-P09/2`` — site, rack (row and position in the row, as on the floor plan),
lowest rack unit of the device, device name, port as printed on the faceplate (``P<cage>/<sub-port>`` for
twin-port cages, ``P<n>`` for single ports, the RDMA port ``mlx5_3/1`` for adapters without cages).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from generator.plan.model import Device, Endpoint, Link, Plan, Rack
from generator.resolve import ResolvedCluster

# Label printers (wrap-around cable labels) take one or two lines of about 20-24 characters; a label
# longer than two such lines is still printed but reported (labels_too_long) so the site can shorten names.
LABEL_SOFT_MAX = 40
UNRACKED = "unracked"

_PRINTABLE = re.compile(r"^[!-~]+$")  # printable ASCII without spaces: survives every label printer
_DIGITS = re.compile(r"(\d+)")


class CablingError(ValueError):
    """The plan cannot be turned into a cable plan (a duplicate label, an unprintable name)."""


@dataclass(frozen=True, slots=True)
class CableEnd:
    device: str
    port: str  # plan port id: "17" (switch logical port) or "mlx5_0/1" (node RDMA port)
    label_port: str  # faceplate port: "P09/1", "P17", "mlx5_0/1"
    cage: int | None
    cage_port: int | None
    netdev: str | None
    kind: str  # node | switch
    role: str
    model: str
    rack: str  # Rack.id, or "" when the device has no rack
    row: int | None
    position: int | None
    u: int | None
    location: str  # "<site>-R01-05-U12" (the part of the label before the device)
    label: str  # the full end label
    endpoint: Endpoint  # the plan's endpoint, for writers that name ports as a device's OS does

    @property
    def rack_or_unracked(self) -> str:
        return self.rack or UNRACKED


@dataclass(frozen=True, slots=True)
class CableRow:
    seq: int  # pull order, 1-based
    id: str
    fabric: str
    layer: str
    speed_gbps: float
    a: CableEnd
    b: CableEnd
    medium: str  # media catalogue id
    medium_name: str
    medium_kind: str  # dac | acc | aoc | mmf | smf | utp
    netbox_type: str
    needs_transceivers: bool
    length_m: float
    run_m: float
    part_number: str
    rail: int | None


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders ``mlx5_10/1`` after ``mlx5_2/1`` and port ``10`` after ``9``."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in _DIGITS.split(text) if p)


def rack_code(rack: Rack) -> str:
    """``R<row>-<position>`` with at least two digits each (``R01-05``)."""
    return f"R{rack.row:02d}-{rack.position:02d}"


def end_location(site: str, rack: Rack | None, device: Device) -> str:
    parts = [site]
    if rack is not None:
        parts.append(rack_code(rack))
    if device.u is not None:
        parts.append(f"U{device.u:02d}")
    return "-".join(parts)


def end_label(site: str, rack: Rack | None, device: Device, ep: Endpoint) -> str:
    return f"{end_location(site, rack, device)}-{device.name}-{ep.label_port}"


def _end(site: str, plan: Plan, ep: Endpoint, link_id: str) -> CableEnd:
    device = plan.device_by_name.get(ep.device)
    if device is None:
        raise CablingError(f"cable {link_id}: device `{ep.device}` is not in the plan")
    rack = plan.rack_by_id.get(device.rack) if device.rack else None
    if device.rack and rack is None:
        raise CablingError(f"cable {link_id}: rack `{device.rack}` of `{device.name}` is not in the plan")
    location = end_location(site, rack, device)
    label = end_label(site, rack, device, ep)
    if not _PRINTABLE.match(label):
        raise CablingError(f"cable {link_id}: label {label!r} is not printable ASCII without spaces")
    return CableEnd(
        device=device.name, port=ep.port, label_port=ep.label_port, cage=ep.cage, cage_port=ep.cage_port,
        netdev=ep.netdev, kind=device.kind, role=device.role, model=device.model,
        rack=rack.id if rack else "", row=rack.row if rack else None, position=rack.position if rack else None,
        u=device.u, location=location, label=label, endpoint=ep,
    )


def _pull_key(row: CableRow) -> tuple:
    a = row.a
    racked = 0 if a.rack else 1
    return (racked, a.row or 0, a.position or 0, a.rack, a.u if a.u is not None else -1, a.device,
            natural_key(a.port), natural_key(row.id))


def cable_rows(cluster: ResolvedCluster, plan: Plan, links: Iterable[Link] | None = None) -> list[CableRow]:
    """Every cable of the plan (or of ``links``), sorted by A-end rack, then unit, then device and port."""
    site = cluster.blueprint.site.name
    media = cluster.catalog.media
    rows: list[CableRow] = []
    for link in plan.links if links is None else links:
        medium = media.get(link.medium)
        part = link.part_number or (medium.part_numbers.get(link.speed_gbps, "") if medium else "")
        rows.append(CableRow(
            seq=0, id=link.id, fabric=link.fabric, layer=link.layer, speed_gbps=link.speed_gbps,
            a=_end(site, plan, link.a, link.id), b=_end(site, plan, link.b, link.id),
            medium=link.medium, medium_name=medium.name if medium else link.medium,
            medium_kind=medium.kind if medium else "", netbox_type=medium.netbox_type if medium else "",
            needs_transceivers=bool(medium and medium.needs_transceivers),
            length_m=link.length_m, run_m=link.run_m, part_number=part or "", rail=link.rail,
        ))
    rows.sort(key=_pull_key)
    rows = [_with_seq(r, i) for i, r in enumerate(rows, 1)]
    _check_unique(rows)
    return rows


def _with_seq(row: CableRow, seq: int) -> CableRow:
    return replace(row, seq=seq)


def _check_unique(rows: list[CableRow]) -> None:
    """Two cables on one port, or two ports printing the same label, would send a technician astray."""
    seen: dict[str, str] = {}
    ids: set[str] = set()
    for row in rows:
        if row.id in ids:
            raise CablingError(f"cable id {row.id} appears twice in the plan")
        ids.add(row.id)
        for end in (row.a, row.b):
            other = seen.get(end.label)
            if other is not None:
                raise CablingError(f"label {end.label} is used by cables {other} and {row.id}")
            seen[end.label] = row.id


def rows_by_rack(rows: list[CableRow]) -> dict[str, list[CableRow]]:
    """Pulls grouped by the rack they start in (A end), in pull order; unracked pulls last."""
    out: dict[str, list[CableRow]] = {}
    for row in rows:
        out.setdefault(row.a.rack_or_unracked, []).append(row)
    return out


def labels_too_long(rows: list[CableRow]) -> list[str]:
    return sorted({e.label for r in rows for e in (r.a, r.b) if len(e.label) > LABEL_SOFT_MAX})


def fmt_num(x: float) -> str:
    """Numbers as a person writes them: 3 not 3.0, 0.5, 2.25."""
    return f"{x:g}" if x == x else ""
