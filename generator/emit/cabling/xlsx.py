"""The printable cabling workbook: a summary, the bill of materials, and one sheet per rack.

A technician prints the sheet of the rack they stand at: it lists the pulls that start there (A end) in
pull order, with both labels, the medium, the length and tick boxes. Every sheet has a frozen header,
print titles (the header repeats on each printed page), landscape fit-to-width and an autofilter.

The bytes are deterministic: openpyxl stamps docProps/core.xml with the save time and each zip entry
with the wall clock; both are pinned here (see ``_StableZip`` and ``FIXED_TIME``).
"""

from __future__ import annotations

import datetime as dt
import io
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from openpyxl import Workbook
from openpyxl.styles import Alignment, Border, Font, PatternFill, Side
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.page import PageMargins
from openpyxl.worksheet.worksheet import Worksheet
from openpyxl.writer.excel import ExcelWriter

from generator.emit.cabling.rows import (
    UNRACKED,
    CableRow,
    fmt_num,
    labels_too_long,
    rack_code,
    rows_by_rack,
)
from generator.emit.cabling.tables import BOM_COLUMNS, BomRow, Cell, bom_table, counts
from generator.plan.model import Plan
from generator.resolve import ResolvedCluster

# Any constant works; 2000-01-01 is recognisably "not a real date" and inside the zip format's range.
FIXED_TIME = dt.datetime(2000, 1, 1, 0, 0, 0)
_ZIP_TIME = (2000, 1, 1, 0, 0, 0)

MAX_COL_WIDTH = 44
_THIN = Side(style="thin", color="808080")
_BORDER = Border(left=_THIN, right=_THIN, top=_THIN, bottom=_THIN)
_HEAD_FILL = PatternFill("solid", fgColor="D9D9D9")
_HEAD_FONT = Font(bold=True)
_TITLE_FONT = Font(bold=True, size=13)
_SECTION_FONT = Font(bold=True, size=11)
# Pale fills so a printed sheet still reads in black and white.
_FABRIC_FILL = {
    "compute": PatternFill("solid", fgColor="DDEBF7"),
    "storage": PatternFill("solid", fgColor="E2EFDA"),
    "management": PatternFill("solid", fgColor="FCE4D6"),
}

# Kept narrow so a landscape page stays readable: the labels carry rack, unit, device and port.
PULL_HEADER: tuple[str, ...] = (
    "#", "Cable", "Fabric", "Layer", "From U", "From label", "To label",
    "Medium", "Length m", "Part number", "Optics", "Pulled", "Labelled", "Tested",
)


class _StableZip(zipfile.ZipFile):
    """A ZipFile whose entries all carry one fixed timestamp and fixed permissions."""

    def writestr(self, zinfo_or_arcname: Any, data: Any, compress_type: int | None = None,
                 compresslevel: int | None = None) -> None:
        if not isinstance(zinfo_or_arcname, zipfile.ZipInfo):
            info = zipfile.ZipInfo(str(zinfo_or_arcname), date_time=_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zinfo_or_arcname = info
        else:
            zinfo_or_arcname.date_time = _ZIP_TIME
        super().writestr(zinfo_or_arcname, data, compress_type=compress_type, compresslevel=compresslevel)

    def write(self, filename: Any, arcname: Any = None, compress_type: int | None = None,
              compresslevel: int | None = None) -> None:
        # openpyxl streams each worksheet through a temporary file; ZipFile.write would stamp its mtime.
        with open(filename, "rb") as fh:
            self.writestr(str(arcname if arcname is not None else filename), fh.read())


def _write_table(ws: Worksheet, top: int, header: Sequence[str], rows: Sequence[Sequence[Cell]],
                 fabric_col: int | None = None) -> int:
    """Write header at row ``top`` and the rows below it; returns the last row written."""
    for c, name in enumerate(header, 1):
        cell = ws.cell(row=top, column=c, value=name)
        cell.font = _HEAD_FONT
        cell.fill = _HEAD_FILL
        cell.border = _BORDER
        cell.alignment = Alignment(vertical="center", wrap_text=False)
    # Body cells stay unstyled (openpyxl styles cost a hash per cell; printed gridlines draw the grid);
    # only the fabric cell is tinted so the eye finds storage/management pulls among compute ones.
    r = top
    for r, values in enumerate(rows, top + 1):
        for c, v in enumerate(values, 1):
            ws.cell(row=r, column=c, value=v)
        if fabric_col is not None and (fill := _FABRIC_FILL.get(str(values[fabric_col]))) is not None:
            ws.cell(row=r, column=fabric_col + 1).fill = fill
    return r


def _fit_columns(ws: Worksheet, header: Sequence[str], rows: Sequence[Sequence[Cell]], start: int = 1) -> None:
    widths = [len(h) for h in header]
    for values in rows:
        for i, v in enumerate(values):
            if i < len(widths) and v is not None:
                widths[i] = max(widths[i], len(fmt_num(v) if isinstance(v, float) else str(v)))
    for i, w in enumerate(widths):
        letter = get_column_letter(start + i)
        ws.column_dimensions[letter].width = min(max(w + 2, 5), MAX_COL_WIDTH)


def _printable(ws: Worksheet, cluster: str, header_rows: int, ncols: int, last_row: int) -> None:
    """Freeze and repeat the header, autofilter, landscape, one page wide, page numbers."""
    ws.freeze_panes = ws.cell(row=header_rows + 1, column=1).coordinate
    ws.print_title_rows = f"1:{header_rows}"
    ws.auto_filter.ref = f"A{header_rows}:{get_column_letter(ncols)}{max(last_row, header_rows)}"
    ws.page_setup.orientation = "landscape"
    ws.page_setup.fitToWidth = 1
    ws.page_setup.fitToHeight = 0
    ws.sheet_properties.pageSetUpPr.fitToPage = True
    ws.print_options.gridLines = True
    ws.page_margins = PageMargins(left=0.3, right=0.3, top=0.6, bottom=0.6, header=0.3, footer=0.3)
    ws.oddHeader.left.text = cluster
    ws.oddHeader.center.text = "&A"
    ws.oddFooter.right.text = "Page &P of &N"
    ws.oddFooter.left.text = "cluster-blueprint cabling plan"


def _pull_row(r: CableRow) -> list[Cell]:
    return [r.seq, r.id, r.fabric, r.layer, r.a.u, r.a.label, r.b.label, (r.medium or "").upper(), r.length_m,
            r.part_number or None, "yes" if r.needs_transceivers else None, None, None, None]


def _summary(ws: Worksheet, cluster: ResolvedCluster, plan: Plan, rows: list[CableRow],
             by_rack: dict[str, list[CableRow]]) -> None:
    name = cluster.name
    ws.cell(row=1, column=1, value=f"Cabling plan: {name}").font = _TITLE_FONT
    power = round(sum(r.power_kw for r in plan.racks), 2)
    facts: list[tuple[str, Cell]] = [
        ("Blueprint", Path(cluster.source_file).name),  # the name only: bytes must not depend on the cwd
        ("Blueprint sha256", cluster.sha256),
        ("Site", cluster.blueprint.site.name),
        ("Cables", len(rows)),
        ("Racks", len(plan.racks)),
        ("Devices", len(plan.devices)),
        ("Transceivers", sum(plan.transceivers.values())),
        ("Power kW (planned)", power),
        ("Label convention", "site-R<row>-<position>-U<unit>-device-port (docs/cabling.md)"),
    ]
    too_long = labels_too_long(rows)
    if too_long:
        facts.append(("Labels over 40 chars", len(too_long)))
    r = 3
    for key, value in facts:
        ws.cell(row=r, column=1, value=key).font = _HEAD_FONT
        ws.cell(row=r, column=2, value=value)
        r += 1
    widths: dict[int, int] = {1: max(len(k) for k, _ in facts), 2: 24}

    def section(title: str, header: Sequence[str], table: Sequence[Sequence[Cell]]) -> None:
        nonlocal r
        r += 1
        ws.cell(row=r, column=1, value=title).font = _SECTION_FONT
        r = _write_table(ws, r + 1, header, table) + 1
        for i, h in enumerate(header, 1):
            longest = max([len(h), *(len(fmt_num(v) if isinstance(v, float) else str(v)) for t in table
                                     for v in t[i - 1:i] if v is not None)])
            widths[i] = max(widths.get(i, 0), longest)

    section("Cables by fabric and layer", ("Fabric", "Layer", "Cables"),
            [[f, layer, n] for (f, layer), n in counts(rows, "fabric", "layer")])
    section("Cables by medium", ("Medium", "Kind", "Gb/s", "Cables"),
            [[m, k, s, n] for (m, k, s), n in counts(rows, "medium_name", "medium_kind", "speed_gbps")])
    section("Cables to order (medium, length)", ("Medium", "Length m", "Part number", "Cables"),
            [[m, length, p, n] for (m, length, p), n in counts(rows, "medium_name", "length_m", "part_number")])
    rack_rows: list[list[Cell]] = []
    for rack in sorted(plan.racks, key=lambda x: (x.row, x.position, x.id)):
        rack_rows.append([rack.id, rack_code(rack), rack.purpose, len(rack.devices), rack.used_units, rack.units,
                          rack.power_kw, rack.power_budget_kw, len(by_rack.get(rack.id, []))])
    if UNRACKED in by_rack:
        rack_rows.append([UNRACKED, "", "", "", "", "", "", "", len(by_rack[UNRACKED])])
    section("Racks", ("Rack", "Label code", "Purpose", "Devices", "Used U", "Units", "Power kW", "Budget kW",
                      "Pulls from here"), rack_rows)
    for col, w in widths.items():
        ws.column_dimensions[get_column_letter(col)].width = min(w + 2, MAX_COL_WIDTH)
    ws.freeze_panes = "A2"
    ws.print_title_rows = "1:1"
    ws.page_setup.orientation = "landscape"
    ws.page_setup.fitToWidth = 1
    ws.page_setup.fitToHeight = 0
    ws.sheet_properties.pageSetUpPr.fitToPage = True
    ws.oddHeader.left.text = name
    ws.oddHeader.center.text = "&A"
    ws.oddFooter.right.text = "Page &P of &N"


def _sheet_title(rack_id: str) -> str:
    # Excel: at most 31 characters, none of []:*?/\ — rack ids are r<RR>-<PP>, so this only guards.
    bad = set("[]:*?/\\")
    return "".join("_" if ch in bad else ch for ch in rack_id)[:31]


def render_xlsx(cluster: ResolvedCluster, plan: Plan, rows: list[CableRow], bom: list[BomRow]) -> bytes:
    wb = Workbook()
    props = wb.properties
    props.creator = "cluster-blueprint"
    props.lastModifiedBy = None
    props.title = f"Cabling plan: {cluster.name}"
    props.created = FIXED_TIME
    props.modified = FIXED_TIME
    by_rack = rows_by_rack(rows)

    summary = wb.active
    summary.title = "Summary"
    _summary(summary, cluster, plan, rows, by_rack)

    ws = wb.create_sheet("BOM")
    ws.cell(row=1, column=1, value=f"{cluster.name}: bill of materials").font = _TITLE_FONT
    header = tuple(h.replace("_", " ").capitalize() for h in BOM_COLUMNS)
    table = bom_table(bom)
    last = _write_table(ws, 2, header, table)
    _fit_columns(ws, header, table)
    _printable(ws, cluster.name, 2, len(header), last)

    racks = {rack.id: rack for rack in plan.racks}
    for rack_id, pulls in by_rack.items():
        ws = wb.create_sheet(_sheet_title(rack_id))
        rack = racks.get(rack_id)
        where = f"{rack_code(rack)}, {rack.purpose}" if rack else "devices without a rack"
        ws.cell(row=1, column=1,
                value=f"{cluster.name} · rack {rack_id} ({where}) · {len(pulls)} pulls start here").font = _TITLE_FONT
        table = [_pull_row(r) for r in pulls]
        last = _write_table(ws, 2, PULL_HEADER, table, fabric_col=2)
        _fit_columns(ws, PULL_HEADER, table)
        for col in range(len(PULL_HEADER) - 2, len(PULL_HEADER) + 1):  # tick boxes: wide enough to initial
            ws.column_dimensions[get_column_letter(col)].width = 9
        _printable(ws, cluster.name, 2, len(PULL_HEADER), last)

    buf = io.BytesIO()
    with _StableZip(buf, "w", zipfile.ZIP_DEFLATED, allowZip64=True) as archive:
        ExcelWriter(wb, archive).save()
    return buf.getvalue()
