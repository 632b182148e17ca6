"""Plain tables shared by the CSV and XLSX writers: the pull list, the bill of materials, the labels.

Each table is a header plus rows of strings/numbers, so the CSV and the spreadsheet say the same thing.
"""

from __future__ import annotations

import csv
import io
import operator
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from operator import attrgetter
from typing import Any, cast

from generator.emit.cabling.rows import CableEnd, CableRow, fmt_num
from generator.plan.model import Plan
from generator.resolve import ResolvedCluster
from generator.safetext import csv_cell, csv_needs_neutralising

Cell = str | int | float | None

CABLE_COLUMNS: tuple[str, ...] = (
    "seq",
    "cable_id",
    "fabric",
    "layer",
    "speed_gbps",
    "a_label",
    "a_rack",
    "a_row",
    "a_position",
    "a_u",
    "a_device",
    "a_port",
    "a_cage",
    "a_cage_port",
    "a_netdev",
    "b_label",
    "b_rack",
    "b_row",
    "b_position",
    "b_u",
    "b_device",
    "b_port",
    "b_cage",
    "b_cage_port",
    "b_netdev",
    "medium",
    "medium_kind",
    "length_m",
    "part_number",
    "transceivers",
    "rail",
)
BOM_COLUMNS: tuple[str, ...] = ("item", "model", "detail", "part_number", "count")
# interface: the OS name of this end's port (swp17s0 on an Ethernet switch, the netdev on a node; blank when
# unknown), so whoever cables or imports the plan need not derive it from the faceplate port
LABEL_COLUMNS: tuple[str, ...] = ("cable_id", "end", "label", "line1", "line2", "far_end", "interface")


_END_FIELDS = ("label", "rack", "row", "position", "u", "device", "port", "cage", "cage_port", "netdev")
_YES_NO = {True: "yes", False: "no"}


def cable_columns(rows: Sequence[CableRow]) -> list[Sequence[Cell]]:
    """The CABLE_COLUMNS of ``rows`` as columns, by transposing the row tuples (one C-level pass) rather
    than a Python step per cell: 315k rows x 31 columns at 100k GPUs."""
    if not rows:
        return [[] for _ in CABLE_COLUMNS]
    f = dict(zip(CableRow._fields, zip(*rows, strict=True), strict=True))
    a = dict(zip(CableEnd._fields, zip(*f["a"], strict=True), strict=True))
    b = dict(zip(CableEnd._fields, zip(*f["b"], strict=True), strict=True))
    return [
        f["seq"],
        f["id"],
        f["fabric"],
        f["layer"],
        f["speed_gbps"],
        *(a[k] for k in _END_FIELDS),
        *(b[k] for k in _END_FIELDS),
        f["medium"],
        f["medium_kind"],
        f["length_m"],
        f["part_number"],
        list(map(_YES_NO.__getitem__, map(bool, f["needs_transceivers"]))),
        f["rail"],
    ]


def cable_table(rows: Iterable[CableRow]) -> list[list[Cell]]:
    """CABLE_COLUMNS, one list per cable."""
    return [list(cells) for cells in zip(*cable_columns(list(rows)), strict=True)]


def _interleave(first: Iterable[Cell], second: Iterable[Cell]) -> list[Cell]:
    return list(chain.from_iterable(zip(first, second, strict=True)))


def label_columns(rows: Sequence[CableRow]) -> list[list[Cell]]:
    """LABEL_COLUMNS as columns: two labels per cable (A end, then B end)."""
    a_label, b_label = [r.a.label for r in rows], [r.b.label for r in rows]
    ids = [r.id for r in rows]
    return [
        _interleave(ids, ids),
        ["A", "B"] * len(rows),
        _interleave(a_label, b_label),
        _interleave((r.a.location for r in rows), (r.b.location for r in rows)),
        _interleave(
            (f"{r.a.device}-{r.a.label_port}" for r in rows), (f"{r.b.device}-{r.b.label_port}" for r in rows)
        ),
        _interleave(b_label, a_label),
        _interleave((r.a.netdev or "" for r in rows), (r.b.netdev or "" for r in rows)),
    ]


def label_table(rows: Iterable[CableRow]) -> list[list[Cell]]:
    """Two labels per cable, one for each end; line1/line2 split the label for two-line printers."""
    return [list(cells) for cells in zip(*label_columns(list(rows)), strict=True)]


@dataclass(frozen=True, slots=True)
class BomRow:
    item: str
    model: str
    detail: str
    part_number: str
    count: int


def bom_rows(cluster: ResolvedCluster, plan: Plan) -> list[BomRow]:
    """Plan.bom, plus one line per transceiver model from Plan.transceivers unless the BOM already lists
    them."""
    cat = cluster.catalog
    out: list[BomRow] = []
    for line in plan.bom:
        out.append(BomRow(line.item, line.model, line.detail, line.part_number or "", line.count))
    if not any(line.item == "transceiver" for line in plan.bom):
        for tid, count in sorted(plan.transceivers.items()):
            t = cat.transceivers.get(tid)
            out.append(
                BomRow("transceiver", tid, t.name if t else "", (t.part_number or "") if t else "", count)
            )
    return out


def bom_table(rows: Iterable[BomRow]) -> list[list[Cell]]:
    return [[b.item, b.model, b.detail, b.part_number, b.count] for b in rows]


def _csv_cell(v: Cell, neutralise: bool = True) -> str:
    return (
        ""
        if v is None
        else fmt_num(v)
        if isinstance(v, float)
        else (csv_cell(v) if neutralise else v)
        if isinstance(v, str)
        else str(v)
    )


def _csv_quoted(field: str) -> str:
    return '"' + field.replace('"', '""') + '"' if ("," in field or '"' in field or "\n" in field) else field


def _csv_column(column: Sequence[Cell], neutralise: bool = True) -> Sequence[str]:
    """One column as the csv module writes it (QUOTE_MINIMAL), converted a column at a time; with
    ``neutralise`` a text a spreadsheet would evaluate gets safetext.csv_cell's `'`."""
    kinds = set(map(type, column))
    out: Sequence[str]
    if kinds <= {str}:
        out = cast(Sequence[str], column)
    elif (
        len(kinds - {type(None)}) <= 1
        and len(distinct := set(column)) * 4 < len(column)
        and not (float in kinds and 0.0 in distinct)
    ):
        # One value type (no 1 == 1.0 == True clashes among the memo's keys; nor 0.0 == -0.0, which
        # print differently) and few values: units, cages, lengths — converted once each, then looked up.
        memo = {v: _csv_cell(v, neutralise) for v in distinct}
        out = list(map(memo.__getitem__, column))
    elif kinds <= {str, int}:
        out = list(map(str, column))
    else:
        out = list(map(_csv_cell, column, repeat(neutralise)))
    if neutralise and str in kinds and csv_needs_neutralising(list(out)):  # text only: numbers stay numbers
        # from the text itself: `out` may hold it converted already, and csv_cell("'=x") is "''=x"
        out = [csv_cell(c) if type(c) is str else o for o, c in zip(out, column, strict=True)]
    text = "".join(out)
    if "," in text or '"' in text or "\n" in text:
        if (
            '"' not in text
            and "\n" not in text
            and "\x00" not in text
            and all(map(operator.contains, out, repeat(",")))
        ):
            # Every field has a comma (NetBox descriptions): quote them all with one join and one split.
            out = ('"' + '"\x00"'.join(out) + '"').split("\x00")
        else:
            out = list(map(_csv_quoted, out))
    return out


def _joined(
    header: Sequence[str], columns: Sequence[Sequence[Cell]], first: bool = True, neutralise: bool = True
) -> str | None:
    """The CSV text by column-wise conversion and plain joins, or None to leave it to csv.writer.

    ~5x faster than csv.writer on 600k-row tables and the same bytes: fields are quoted as QUOTE_MINIMAL
    does (a comma, quote or LF inside); the rare shapes whose quoting differs between Python versions (a
    CR inside a field, a row of one empty field) go to csv.writer. ``first``: with the header line.
    """
    if len(header) < 2 or len(columns) != len(header):
        return None
    converted = [_csv_column(c, neutralise) for c in columns]
    lines = map(",".join, zip(*converted, strict=True))
    text = "\n".join([",".join(map(_csv_quoted, header)), *lines] if first else lines)
    return None if "\r" in text else text + "\n"


def _written(
    header: Sequence[str], rows: Iterable[Sequence[Cell]], first: bool = True, neutralise: bool = True
) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    if first:
        writer.writerow(header)
    writer.writerows([_csv_cell(v, neutralise) for v in row] for row in rows)
    return buf.getvalue()


def to_csv(header: Sequence[str], rows: Iterable[Sequence[Cell]], *, neutralise: bool = True) -> str:
    """RFC 4180-style CSV (csv.writer, minimal quoting, LF line ends); floats as people write them
    (3, 0.5). ``neutralise``: the spreadsheet prefix of safetext.csv_cell, for files people open; a machine's
    import file (NetBox's, which stores the `'` as part of the name) is written without."""
    rows = rows if isinstance(rows, list) else list(rows)
    if not rows:
        return _written(header, rows, neutralise=neutralise)
    if set(map(len, rows)) == {len(header)}:
        fast = _joined(header, list(zip(*rows, strict=True)), neutralise=neutralise)
        if fast is not None:
            return fast
    return _written(header, rows, neutralise=neutralise)


def _row_count(columns: Sequence[Sequence[Cell]]) -> int:
    """How many rows a table given as columns has; its columns must be the same length."""
    lengths = {len(c) for c in columns}
    if len(lengths) > 1:
        raise ValueError(f"columns of different lengths: {sorted(lengths)}")
    return lengths.pop() if lengths else 0


def _columns_text(
    header: Sequence[str], columns: Sequence[Sequence[Cell]], first: bool, neutralise: bool = True
) -> str:
    if _row_count(columns):
        fast = _joined(header, columns, first, neutralise)
        if fast is not None:
            return fast
    return _written(header, zip(*columns, strict=True), first, neutralise)


def columns_to_csv(header: Sequence[str], columns: Sequence[Sequence[Cell]]) -> str:
    """to_csv of a table given as columns (one sequence per header field, all the same length)."""
    return _columns_text(header, columns, True)


# Rows per slice of a streamed CSV: big enough that the per-slice joins stay C-speed, small enough that a
# slice's text and converted cells are a few MB, not the 70-90 MB of a 100k-GPU table's whole text.
CSV_SLICE_ROWS = 32_768


@dataclass(frozen=True)
class CsvStream:
    """A CSV file made a slice of rows at a time, so the big tables of a 100k-GPU plan (labels, cables,
    NetBox interfaces: 70-90 MB each) are written without ever holding one whole, with its bytes copy.

    ``columns_of(start, stop)`` gives the columns of rows ``start:stop``; every cell is converted and
    quoted on its own, so the slices joined are exactly ``columns_to_csv`` of the whole table."""

    header: tuple[str, ...]
    rows: int
    columns_of: Callable[[int, int], Sequence[Sequence[Cell]]]
    neutralise: bool = True  # to_csv's: the spreadsheet prefix, off for a machine's import file

    def parts(self) -> Iterator[str]:
        if self.rows == 0:
            yield _columns_text(self.header, self.columns_of(0, 0), True, self.neutralise)
        for start in range(0, self.rows, CSV_SLICE_ROWS):
            stop = min(start + CSV_SLICE_ROWS, self.rows)
            yield _columns_text(self.header, self.columns_of(start, stop), start == 0, self.neutralise)

    def text(self) -> str:
        return "".join(self.parts())


def rows_csv(
    header: Sequence[str],
    rows: Sequence[CableRow],
    columns: Callable[[Sequence[CableRow]], Sequence[Sequence[Cell]]],
) -> CsvStream:
    """A CsvStream of a table whose columns are made from each slice of ``rows`` by ``columns``."""
    return CsvStream(tuple(header), len(rows), lambda start, stop: columns(rows[start:stop]))


def sliced_csv(
    header: Sequence[str], columns: Sequence[Sequence[Cell]], *, neutralise: bool = True
) -> CsvStream:
    """A CsvStream of a table already made as whole columns (sorted tables such as NetBox interfaces)."""
    return CsvStream(
        tuple(header), _row_count(columns), lambda start, stop: [c[start:stop] for c in columns], neutralise
    )


def counts(rows: Iterable[CableRow], *keys: str) -> list[tuple[tuple[Cell, ...], int]]:
    """Cable counts grouped by row attributes, sorted by key (e.g. counts(rows, "fabric", "layer"))."""
    get: Callable[[CableRow], Any] = attrgetter(*keys)  # one value, or a tuple of several
    keyed: Iterable[tuple[Cell, ...]] = map(get, rows) if len(keys) > 1 else ((v,) for v in map(get, rows))
    c = Counter(keyed)
    return sorted(c.items(), key=lambda kv: tuple((v is None, 0 if v is None else v) for v in kv[0]))
