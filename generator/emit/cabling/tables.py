"""Plain tables shared by the CSV and XLSX writers: the pull list, the bill of materials, the labels.

Each table is a header plus rows of strings/numbers, so the CSV and the spreadsheet say the same thing.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from generator.emit.cabling.rows import CableEnd, CableRow, fmt_num
from generator.plan.model import Plan
from generator.resolve import ResolvedCluster

Cell = str | int | float | None

CABLE_COLUMNS: tuple[str, ...] = (
    "seq", "cable_id", "fabric", "layer", "speed_gbps",
    "a_label", "a_rack", "a_row", "a_position", "a_u", "a_device", "a_port", "a_cage", "a_cage_port", "a_netdev",
    "b_label", "b_rack", "b_row", "b_position", "b_u", "b_device", "b_port", "b_cage", "b_cage_port", "b_netdev",
    "medium", "medium_kind", "length_m", "part_number", "transceivers", "rail",
)
BOM_COLUMNS: tuple[str, ...] = ("item", "model", "detail", "part_number", "count")
LABEL_COLUMNS: tuple[str, ...] = ("cable_id", "end", "label", "line1", "line2", "far_end")


def _end_cells(end: CableEnd) -> list[Cell]:
    return [end.label, end.rack, end.row, end.position, end.u, end.device, end.port, end.cage, end.cage_port,
            end.netdev]


def cable_table(rows: Iterable[CableRow]) -> list[list[Cell]]:
    out: list[list[Cell]] = []
    for r in rows:
        out.append([
            r.seq, r.id, r.fabric, r.layer, r.speed_gbps, *_end_cells(r.a), *_end_cells(r.b),
            r.medium, r.medium_kind, r.length_m, r.part_number, "yes" if r.needs_transceivers else "no", r.rail,
        ])
    return out


def label_table(rows: Iterable[CableRow]) -> list[list[Cell]]:
    """Two labels per cable, one for each end; line1/line2 split the label for two-line printers."""
    out: list[list[Cell]] = []
    for r in rows:
        for name, here, there in (("A", r.a, r.b), ("B", r.b, r.a)):
            out.append([r.id, name, here.label, here.location, f"{here.device}-{here.label_port}", there.label])
    return out


@dataclass(frozen=True, slots=True)
class BomRow:
    item: str
    model: str
    detail: str
    part_number: str
    count: int


def bom_rows(cluster: ResolvedCluster, plan: Plan) -> list[BomRow]:
    """Plan.bom, plus one line per transceiver model from Plan.transceivers unless the BOM already lists them."""
    cat = cluster.catalog
    out: list[BomRow] = []
    for line in plan.bom:
        out.append(BomRow(line.item, line.model, line.detail, line.part_number or "", line.count))
    if not any(line.item == "transceiver" for line in plan.bom):
        for tid, count in sorted(plan.transceivers.items()):
            t = cat.transceivers.get(tid)
            out.append(BomRow("transceiver", tid, t.name if t else "", (t.part_number or "") if t else "", count))
    return out


def bom_table(rows: Iterable[BomRow]) -> list[list[Cell]]:
    return [[b.item, b.model, b.detail, b.part_number, b.count] for b in rows]


def to_csv(header: Sequence[str], rows: Iterable[Sequence[Cell]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(["" if v is None else fmt_num(v) if isinstance(v, float) else v for v in row])
    return buf.getvalue()


def counts(rows: Iterable[CableRow], *keys: str) -> list[tuple[tuple[Cell, ...], int]]:
    """Cable counts grouped by row attributes, sorted by key (e.g. counts(rows, "fabric", "layer"))."""
    c: Counter[tuple[Cell, ...]] = Counter(tuple(getattr(r, k) for k in keys) for r in rows)
    return sorted(c.items(), key=lambda kv: tuple((v is None, 0 if v is None else v) for v in kv[0]))
