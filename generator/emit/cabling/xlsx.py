"""The printable cabling workbook: a summary, the bill of materials, and one sheet per rack.

A technician prints the sheet of the rack they stand at: it lists the pulls that start there (A end) in
pull order, with both labels, the medium, the length and tick boxes. Every sheet has a frozen header,
print titles (the header repeats on each printed page), landscape fit-to-width and an autofilter.

Written with the package's own streaming SpreadsheetML writer (xlsx_writer): openpyxl needs ~30 s for
the 315k pulls of a 100k-GPU plan. The bytes are deterministic (fixed zip times, fixed document dates).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path

from generator.emit.cabling.rows import (
    UNRACKED,
    CableRow,
    labels_too_long,
    rack_code,
    rows_by_rack,
)
from generator.emit.cabling.tables import BOM_COLUMNS, BomRow, Cell, bom_table, counts
from generator.emit.cabling.xlsx_writer import (
    FIXED_TIME,
    Columns,
    PageSetup,
    Sheet,
    StableZip,
    Style,
    Workbook,
    hf_text,
)
from generator.plan.model import Plan
from generator.resolve import ResolvedCluster

__all__ = ["FIXED_TIME", "PULL_HEADER", "StableZip", "render_xlsx"]

MAX_COL_WIDTH = 44
TICK_COL_WIDTH = 9  # wide enough to initial
# Pale fills so a printed sheet still reads in black and white.
_FABRIC_FILL = {"compute": Style.FILL_BLUE, "storage": Style.FILL_GREEN, "management": Style.FILL_ORANGE}
_MARGINS = (0.3, 0.3, 0.6, 0.6, 0.3, 0.3)  # inches: left, right, top, bottom, header, footer

# Kept narrow so a landscape page stays readable: the labels carry rack, unit, device and port.
PULL_HEADER: tuple[str, ...] = (
    "#",
    "Cable",
    "Fabric",
    "Layer",
    "From U",
    "From label",
    "From interface",  # the OS name of the port (swp17s0, a node's netdev), as the LLDP and NetBox files
    "To label",
    "To interface",
    "Medium",
    "Length m",
    "Part number",
    "Optics",
    "Pulled",
    "Labelled",
    "Tested",
)
_TICKS = 3  # Pulled, Labelled, Tested: left blank to tick on paper


def fit_widths(sheet: Sheet, widths: Sequence[int], first_col: int = 1) -> None:
    for i, w in enumerate(widths):
        sheet.widths[first_col + i] = min(max(w + 2, 5), MAX_COL_WIDTH)


def printable(
    sheet: Sheet, title: str, header_row: int, ncols: int, last_row: int, document: str = "cabling plan"
) -> None:
    """Freeze and repeat the header, autofilter, landscape one page wide, gridlines, page numbers."""
    sheet.freeze_rows = header_row
    sheet.print_title_rows = header_row
    sheet.autofilter = (header_row, last_row, ncols)
    sheet.page = PageSetup(
        landscape=True,
        fit_to_width=True,
        gridlines=True,
        margins=_MARGINS,
        header=f"&L{hf_text(title)}&C&A",
        footer=f"&Lcluster-blueprint {document}&RPage &P of &N",
    )


def _summary(
    sheet: Sheet,
    cluster: ResolvedCluster,
    plan: Plan,
    rows: list[CableRow],
    by_rack: dict[str, list[CableRow]],
) -> None:
    """The first sheet: the plan's facts, then cable counts by fabric, medium and length, then the racks."""
    sheet.row(1, [f"Cabling plan: {cluster.name}"], Style.TITLE)
    facts = _facts(cluster, plan, rows)
    for r, (key, value) in enumerate(facts, 3):
        sheet.row(r, [key, value], [Style.BOLD, Style.DEFAULT])
    sections = _Sections(sheet, 3 + len(facts) - 1, {1: max(len(k) for k, _ in facts), 2: 24})
    sections.add(
        "Cables by fabric and layer",
        ("Fabric", "Layer", "Cables"),
        [[f, layer, n] for (f, layer), n in counts(rows, "fabric", "layer")],
    )
    sections.add(
        "Cables by medium",
        ("Medium", "Kind", "Gb/s", "Cables"),
        [[m, k, s, n] for (m, k, s), n in counts(rows, "medium_name", "medium_kind", "speed_gbps")],
    )
    sections.add(
        "Cables to order (medium, length)",
        ("Medium", "Length m", "Part number", "Cables"),
        [[m, length, p, n] for (m, length, p), n in counts(rows, "medium_name", "length_m", "part_number")],
    )
    sections.add("Racks", _RACK_HEADER, _rack_table(plan, by_rack))
    for col, w in sections.widths.items():
        sheet.widths[col] = min(w + 2, MAX_COL_WIDTH)
    sheet.freeze_rows = 1
    sheet.print_title_rows = 1
    sheet.page = PageSetup(
        landscape=True, fit_to_width=True, header=f"&L{hf_text(cluster.name)}&C&A", footer="&RPage &P of &N"
    )


def _facts(cluster: ResolvedCluster, plan: Plan, rows: list[CableRow]) -> list[tuple[str, Cell]]:
    facts: list[tuple[str, Cell]] = [
        ("Blueprint", Path(cluster.source_file).name),  # the name only: bytes must not depend on the cwd
        ("Blueprint sha256", cluster.sha256),
        ("Site", cluster.blueprint.site.name),
        ("Cables", len(rows)),
        ("Racks", len(plan.racks)),
        ("Devices", len(plan.devices)),
        ("Transceivers", sum(plan.transceivers.values())),
        ("Power kW (planned)", round(sum(r.power_kw for r in plan.racks), 2)),
        ("Label convention", "site-R<row>-<position>-U<unit>-device-port (docs/cabling.md)"),
    ]
    too_long = labels_too_long(rows)
    if too_long:
        facts.append(("Labels over 40 chars", len(too_long)))
    return facts


@dataclass
class _Sections:
    """Titled tables one below the other, each a blank row after the last; column widths fit them all."""

    sheet: Sheet
    last_row: int
    widths: dict[int, int]

    def add(self, title: str, header: Sequence[str], table: Sequence[Sequence[Cell]]) -> None:
        title_row = self.last_row + 2
        self.sheet.row(title_row, [title], Style.SECTION)
        last, table_widths = self.sheet.table(title_row + 1, header, table)
        self.last_row = last
        for i, w in enumerate(table_widths, 1):
            self.widths[i] = max(self.widths.get(i, 0), w)


_RACK_HEADER = (
    "Rack",
    "Label code",
    "Purpose",
    "Devices",
    "Used U",
    "Units",
    "Power kW",
    "Budget kW",
    "Pulls from here",
)


def _rack_table(plan: Plan, by_rack: dict[str, list[CableRow]]) -> list[list[Cell]]:
    rack_rows: list[list[Cell]] = [
        [
            rack.id,
            rack_code(rack),
            rack.purpose,
            len(rack.devices),
            rack.used_units,
            rack.units,
            rack.power_kw,
            rack.power_budget_kw,
            len(by_rack.get(rack.id, [])),
        ]
        for rack in sorted(plan.racks, key=lambda x: (x.row, x.position, x.id))
    ]
    if UNRACKED in by_rack:
        rack_rows.append([UNRACKED, "", "", "", "", "", "", "", len(by_rack[UNRACKED])])
    return rack_rows


def _pull_columns(pulls: list[CableRow]) -> list[list[Cell]]:
    """The PULL_HEADER columns, built a column at a time (C-level maps, not a Python step per cell)."""
    upper = {m: (m or "").upper() for m in {r.medium for r in pulls}}
    return [
        list(map(attrgetter("seq"), pulls)),
        list(map(attrgetter("id"), pulls)),
        list(map(attrgetter("fabric"), pulls)),
        list(map(attrgetter("layer"), pulls)),
        list(map(attrgetter("a.u"), pulls)),
        list(map(attrgetter("a.label"), pulls)),
        list(map(attrgetter("a.netdev"), pulls)),
        list(map(attrgetter("b.label"), pulls)),
        list(map(attrgetter("b.netdev"), pulls)),
        [upper[r.medium] for r in pulls],
        list(map(attrgetter("length_m"), pulls)),
        [r.part_number or None for r in pulls],
        ["yes" if r.needs_transceivers else None for r in pulls],
        *([None] * len(pulls) for _ in range(_TICKS)),
    ]


def render_xlsx(cluster: ResolvedCluster, plan: Plan, rows: list[CableRow], bom: list[BomRow]) -> bytes:
    by_rack = rows_by_rack(rows)
    buf = io.BytesIO()
    with Workbook(
        buf, ["Summary", "BOM", *by_rack], title=f"Cabling plan: {cluster.name}", creator="cluster-blueprint"
    ) as wb:
        summary = wb.sheet()
        _summary(summary, cluster, plan, rows, by_rack)
        wb.add(summary)

        sheet = wb.sheet()
        sheet.row(1, [f"{cluster.name}: bill of materials"], Style.TITLE)
        header = tuple(h.replace("_", " ").capitalize() for h in BOM_COLUMNS)
        last, widths = sheet.table(2, header, bom_table(bom))
        fit_widths(sheet, widths)
        printable(sheet, cluster.name, 2, len(header), last)
        wb.add(sheet)

        # One body for all rack sheets, each showing its slice (rows grouped by rack, in pull order).
        pulls_in_order = [r for pulls in by_rack.values() for r in pulls]
        body = Columns(_pull_columns(pulls_in_order), {PULL_HEADER.index("Fabric"): _FABRIC_FILL})
        racks = {rack.id: rack for rack in plan.racks}
        start = 0
        for rack_id, pulls in by_rack.items():
            sheet = wb.sheet()
            rack = racks.get(rack_id)
            where = f"{rack_code(rack)}, {rack.purpose}" if rack else "devices without a rack"
            sheet.row(
                1, [f"{cluster.name} · rack {rack_id} ({where}) · {len(pulls)} pulls start here"], Style.TITLE
            )
            last, widths = sheet.table(2, PULL_HEADER, body, (start, start + len(pulls)))
            start += len(pulls)
            fit_widths(sheet, widths)
            for col in range(len(PULL_HEADER) - _TICKS + 1, len(PULL_HEADER) + 1):
                sheet.widths[col] = TICK_COL_WIDTH
            printable(sheet, cluster.name, 2, len(PULL_HEADER), last)
            wb.add(sheet)
    return buf.getvalue()
