"""What the site should hold: the records of a build's NetBox CSVs (``cabling/netbox/`` of a build).

The CSVs are the one description of the plan's DCIM objects (generator/emit/cabling/netbox.py); reading
them back, rather than planning again, pushes exactly what a reviewer saw in the build. Each record is
in the products' shared vocabulary (NetBox's field names); the backends translate.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from generator.emit.cabling.netbox import SPREADSHEET_PREFIX, csv_records
from generator.foreign import ByteBudget, ForeignInputError, read_foreign_text
from generator.safetext import FORMULA_START

# The kinds in the order the objects refer to one another (NetBox's import order, IMPORT_ORDER).
KINDS: tuple[str, ...] = (
    "manufacturer",
    "role",
    "device_type",
    "site",
    "location",
    "rack",
    "device",
    "interface",
    "cable",
)
FILES: dict[str, str] = {
    "manufacturer": "manufacturers.csv",
    "role": "device-roles.csv",
    "device_type": "device-types.csv",
    "site": "sites.csv",
    "location": "locations.csv",
    "rack": "racks.csv",
    "device": "devices.csv",
    "interface": "interfaces.csv",
    "cable": "cables.csv",
}
# A 32-SU build's interfaces.csv is ~8 MB; a 100k-GPU one ~90 MB.
FILE_LIMIT = 256 * 1024 * 1024
_INT = ("u_height", "position", "width", "outer_width", "outer_depth", "speed")
_BOOL = ("enabled", "mgmt_only", "is_full_depth")
_LONE_CR = re.compile("\r(?!\n)")

Key = tuple[str, ...]
T = TypeVar("T")


@dataclass(frozen=True)
class Record:
    """One object to have: its key among its kind, its own fields and its references (kind, key)."""

    kind: str
    key: Key
    fields: dict[str, Any]
    refs: dict[str, tuple[str, Key]] = field(default_factory=dict)


@dataclass
class Desired:
    """Every record of a build, by kind, in file order."""

    records: dict[str, list[Record]]

    def count(self, kind: str) -> int:
        return len(self.records.get(kind, []))


def netbox_dir(build: Path) -> Path:
    """The folder of the NetBox CSVs: BUILD/cabling/netbox, or BUILD itself when it holds them."""
    for candidate in (build / "cabling" / "netbox", build):
        if (candidate / FILES["device"]).is_file():
            return candidate
    from generator.build import MANIFEST

    if (build / MANIFEST).is_file():  # a build, whose plan has no cable: a single node or a cloud target
        raise ForeignInputError(
            str(build),
            "this build has no NetBox files (cabling/netbox/devices.csv): its plan cables nothing (a single "
            "node or a cloud target), so there is nothing to export",
        )
    raise ForeignInputError(
        str(build), "no NetBox files here (cabling/netbox/devices.csv): give a `blueprint generate` output"
    )


def build_files(build: Path) -> list[Path]:
    """The files ``read_build`` reads."""
    folder = netbox_dir(build)
    return [folder / FILES[kind] for kind in KINDS]


def read_build(build: Path, budget: ByteBudget | None = None) -> Desired:
    """Every record of the build's NetBox CSVs; a missing column or bad number is a located refusal."""
    folder = netbox_dir(build)
    budget = budget or ByteBudget()
    site = _rows(folder / FILES["site"], budget)
    if len(site) != 1:
        raise ForeignInputError(str(folder / FILES["site"]), "expected exactly one site")
    site_name = _typed(folder / FILES["site"], site[0][0], lambda: site[0][1]["name"])
    records: dict[str, list[Record]] = {}
    for kind in KINDS:
        path = folder / FILES[kind]
        make = _MAKERS[kind]
        records[kind] = [
            _typed(path, line, partial(make, row, site_name)) for line, row in _rows(path, budget)
        ]
    return Desired(records)


def quotes_closed(path: Path, text: str) -> None:
    """A quote left open (or one not doubled, as RFC 4180 writes a quote in a cell) runs to the end of
    the file: every later line would be one cell (`sot push` merged the next device into a description)."""
    _, records = csv_records(text)
    if records and records[-1].count('"') % 2:
        line = text.count("\n") - records[-1].count("\n") + 1
        raise ForeignInputError(
            f"{path}:{line}", "an odd number of quotes from this line on: a quoted cell is never closed"
        )


def read_csv(path: Path, budget: ByteBudget) -> str:
    """A NetBox CSV of the build, quotes checked, without the byte-order mark a spreadsheet saves UTF-8 CSV
    with (Excel's "CSV UTF-8"): kept, it was part of the first column's name (`no column name`), and `sot
    csv` copied it into the middle of every numbered file after the first."""
    text = read_foreign_text(path, FILE_LIMIT, budget).removeprefix("\ufeff")
    quotes_closed(path, text)
    lines_end_in_lf(path, text)
    return text


def lines_end_in_lf(path: Path, text: str) -> None:
    """Lines ended by CR alone (classic Mac OS; Excel for Mac's "CSV (Macintosh)") are refused by `sot push`
    and `sot csv` alike: the csv module refuses a CR outside a quoted cell, while csv_records, which ends a
    record at LF as the writer does, took the whole file for its header line (`sot csv` wrote no file, exit
    0). A CR inside a quoted cell is text, as csv.writer writes it; LF and CRLF line ends read alike."""
    if _LONE_CR.search(text) is None:
        return
    reader = csv.reader(io.StringIO(text))
    try:
        for _ in reader:
            pass
    except csv.Error as exc:
        # CPython's _csv.c words it "new-line character seen in unquoted field" (3.11 to 3.13); other faults
        # (a field past the limit) are located where the rows are read
        if "new-line character" in str(exc):
            raise ForeignInputError(
                f"{path}:{reader.line_num}",
                "a line ends in a carriage return alone (a Mac CSV?): save it with LF or CRLF line ends",
            ) from None


def _rows(path: Path, budget: ByteBudget) -> list[tuple[int, dict[str, str]]]:
    text = read_csv(path, budget)
    reader = csv.DictReader(io.StringIO(text))
    try:
        return [(reader.line_num, {k: cell_text(v or "") for k, v in row.items() if k}) for row in reader]
    except csv.Error as exc:  # a field past the csv module's limit: the file's fault, located
        raise ForeignInputError(f"{path}:{reader.line_num + 1}", f"not a CSV row: {exc}") from None


def cell_text(cell: str) -> str:
    """The text a cell of a build's NetBox file holds: the cell as it is, since their writer puts no
    spreadsheet `'` before a name (emit/cabling/netbox.py SPREADSHEET_PREFIX); taking one off anyway pushed
    a catalogue manufacturer `'=Lab` as `=Lab`."""
    return uncell(cell) if SPREADSHEET_PREFIX else cell


def uncell(cell: str) -> str:
    """The text safetext.csv_cell wrote as ``cell``: it put a ``'`` before a text a spreadsheet would evaluate
    (= + - @ TAB CR) and before one that starts with ``'``; exactly that one is taken off."""
    return cell[1:] if cell[:1] == "'" and cell[1:2] in (*FORMULA_START, "'") else cell


def _typed(path: Path, line: int, make: Callable[[], T]) -> T:
    try:
        return make()
    except KeyError as exc:
        raise ForeignInputError(f"{path}:{line}", f"no column {exc.args[0]}") from None
    except ValueError as exc:
        raise ForeignInputError(f"{path}:{line}", str(exc)) from None


def _values(row: dict[str, str], names: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in names:
        cell = row[name]
        if name in _INT:
            out[name] = int(cell) if cell else None
        elif name in _BOOL:
            out[name] = cell.lower() == "true"
        elif name == "length":
            out[name] = _number(cell)
        else:
            out[name] = cell
    return out


def _number(cell: str) -> int | float | None:
    if not cell:
        return None
    value = float(cell)
    if not math.isfinite(value) or value < 0:  # `inf` overflowed Nautobot's whole-number length (exit 3)
        raise ValueError(f"length `{cell[:40]}` is not a length")
    return int(value) if value.is_integer() else value


def _manufacturer(row: dict[str, str], site: str) -> Record:
    return Record("manufacturer", (row["name"],), _values(row, ("name", "slug")))


def _role(row: dict[str, str], site: str) -> Record:
    return Record("role", (row["name"],), _values(row, ("name", "slug", "color", "description")))


def _device_type(row: dict[str, str], site: str) -> Record:
    fields = _values(row, ("model", "slug", "u_height", "is_full_depth", "description"))
    return Record(
        "device_type",
        (row["manufacturer"], row["model"]),
        fields,
        {"manufacturer": ("manufacturer", (row["manufacturer"],))},
    )


def _site(row: dict[str, str], site: str) -> Record:
    return Record("site", (row["name"],), _values(row, ("name", "slug", "status", "description")))


def _location(row: dict[str, str], site: str) -> Record:
    fields = _values(row, ("name", "slug", "status", "description"))
    return Record("location", (row["name"],), fields, {"site": ("site", (site,))})


def _rack(row: dict[str, str], site: str) -> Record:
    names = ("name", "facility_id", "status", "width", "u_height", "outer_width", "outer_depth")
    fields = _values(row, (*names, "outer_unit", "description"))
    return Record(
        "rack",
        (row["name"],),
        fields,
        {"site": ("site", (site,)), "location": ("location", (row["location"],))},
    )


def _device(row: dict[str, str], site: str) -> Record:
    fields = _values(row, ("name", "position", "face", "status", "description"))
    refs: dict[str, tuple[str, Key]] = {
        "role": ("role", (row["role"],)),
        "device_type": ("device_type", (row["manufacturer"], row["device_type"])),
        "site": ("site", (site,)),
    }
    if row["rack"]:
        refs["rack"] = ("rack", (row["rack"],))
        refs["location"] = ("location", (row["location"],))
    return Record("device", (row["name"],), fields, refs)


def _interface(row: dict[str, str], site: str) -> Record:
    names = ("name", "label", "type", "speed", "enabled", "mgmt_only", "description")
    return Record(
        "interface",
        (row["device"], row["name"]),
        _values(row, names),
        {"device": ("device", (row["device"],))},
    )


def _cable(row: dict[str, str], site: str) -> Record:
    fields = _values(row, ("type", "status", "label", "length", "length_unit"))
    refs: dict[str, tuple[str, Key]] = {
        "a": ("interface", (row["side_a_device"], row["side_a_name"])),
        "b": ("interface", (row["side_b_device"], row["side_b_name"])),
    }
    return Record("cable", (row["label"],), fields, refs)


_MAKERS: dict[str, Callable[[dict[str, str], str], Record]] = {
    "manufacturer": _manufacturer,
    "role": _role,
    "device_type": _device_type,
    "site": _site,
    "location": _location,
    "rack": _rack,
    "device": _device,
    "interface": _interface,
    "cable": _cable,
}


def chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
