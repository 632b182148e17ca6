"""The air-gapped path: a build's NetBox CSVs as numbered files NetBox's bulk import takes one by one,
optionally only the objects an older build did not have (a grown cluster: ``blueprint diff`` 2 -> 3 SU).

The import can only create: moved devices and re-routed or re-sized cables of a grown build are not in
the "new only" files (``sot push`` updates them; docs/cabling.md says how by hand).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from generator.emit.cabling.netbox import IMPORT_ORDER, SPREADSHEET_PREFIX, csv_records
from generator.foreign import ByteBudget, ForeignInputError
from generator.fsutil import OutputRefused, atomic_dir, checked_output_dir, write_new_text
from generator.sot.build import cell_text, netbox_dir, read_csv

# The columns that name an object in each file (what makes a row "the same object" in two builds).
KEY_COLUMNS: dict[str, tuple[str, ...]] = {
    "sites.csv": ("name",),
    "locations.csv": ("site", "name"),
    "manufacturers.csv": ("name",),
    "device-roles.csv": ("name",),
    "device-types.csv": ("slug",),
    "racks.csv": ("name",),
    "devices.csv": ("name",),
    "interfaces.csv": ("device", "name"),
    "cables.csv": ("label",),
}


def read_files(build: Path, budget: ByteBudget) -> dict[str, str]:
    folder = netbox_dir(build)
    return {name: for_import(folder / name, read_csv(folder / name, budget)) for name in IMPORT_ORDER}


def for_import(path: Path, text: str) -> str:
    """``text`` as NetBox's importer must get it, each cell as `sot push` reads it (build.cell_text): the
    importer stores a cell as it is. ``text`` itself when the build's writer put no spreadsheet ``'`` on
    (SPREADSHEET_PREFIX); otherwise rewritten by the csv module where a cell had one."""
    if not SPREADSHEET_PREFIX or "'" not in text:
        return text
    reader = csv.reader(io.StringIO(text))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    changed = False
    try:
        for index, row in enumerate(reader):
            cells = row if index == 0 else [cell_text(cell) for cell in row]
            changed = changed or cells != row
            writer.writerow(cells)
    except csv.Error as exc:  # a field past the csv module's limit: the file's fault, located
        raise ForeignInputError(f"{path}:{reader.line_num + 1}", f"not a CSV row: {exc}") from None
    return out.getvalue() if changed else text


def new_only(files: dict[str, str], old: dict[str, str], new_dir: Path, old_dir: Path) -> dict[str, str]:
    """``files`` (read from ``new_dir``) less every row whose object (KEY_COLUMNS) ``old`` (from
    ``old_dir``) already has."""
    out = {}
    for name in IMPORT_ORDER:
        header, records = csv_records(files[name])
        had = {key for key in _keys(old_dir / name, old.get(name, ""))}
        keys = _record_keys(new_dir / name, header, records)
        out[name] = header + "".join(r for r, key in zip(records, keys, strict=True) if key not in had)
    return out


def _record_keys(path: Path, header: str, records: list[str]) -> list[tuple[str, ...]]:
    columns = _row(path, 1, header)
    try:
        at = [columns.index(c) for c in KEY_COLUMNS[path.name]]
    except ValueError:
        raise ForeignInputError(str(path), f"no column {', '.join(KEY_COLUMNS[path.name])}") from None
    keys = []
    line = 2
    for record in records:
        row = _row(path, line, record)
        keys.append(tuple(row[i] if i < len(row) else "" for i in at))
        line += record.count("\n")
    return keys


def _row(path: Path, line: int, record: str) -> list[str]:
    try:
        return next(csv.reader(io.StringIO(record)), [])
    except csv.Error as exc:  # a field past the csv module's limit, a stray quote: the file's fault, located
        raise ForeignInputError(f"{path}:{line}", f"not a CSV row: {exc}") from None


def _keys(path: Path, text: str) -> list[tuple[str, ...]]:
    header, records = csv_records(text)
    return _record_keys(path, header, records) if header else []


def write_chunks(out: Path, chunks: dict[str, str], force: bool) -> None:
    """The numbered files into a new (or empty) folder; an existing non-empty one only with ``force``,
    and then replaced whole so no file of an earlier run is left to be imported by mistake."""
    target = checked_output_dir(out, None)
    if target.exists() and any(target.iterdir()) and not force:
        raise OutputRefused(f"{out} is not empty; give a new folder, or --force to replace it")

    def fill(tmp: Path) -> None:
        for name, text in chunks.items():
            write_new_text(tmp / name, text)

    atomic_dir(target, fill)
