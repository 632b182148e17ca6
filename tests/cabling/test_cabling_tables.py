"""The shared tables and the CSV writer: the fast column-wise CSV must be csv.writer's output byte for byte,
and the column-built tables must be the row-by-row ones."""

from __future__ import annotations

import csv
import io
import re

from cabling_plans import SUPERPOD, cluster_of, plan_of, small_plan
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.emit.cabling import tables
from generator.emit.cabling.rows import cable_rows, fmt_num
from generator.emit.cabling.tables import (
    CABLE_COLUMNS,
    LABEL_COLUMNS,
    cable_columns,
    cable_table,
    columns_to_csv,
    counts,
    label_columns,
    label_table,
    rows_csv,
    sliced_csv,
    to_csv,
)

# OWASP "CSV Injection": a text cell starting with one of these is a formula to Excel/LibreOffice/Sheets;
# the defence is a leading single quote. A cell that reads as a plain number is data, not a formula.
FORMULA_START = "=+-@\t\r"
PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def owasp(v: object) -> object:
    if isinstance(v, str) and v[:1] and v[0] in FORMULA_START and not PLAIN_NUMBER.fullmatch(v):
        return "'" + v
    if isinstance(v, str) and v[:1] == "'":  # the prefix escaped, so a reader takes exactly one off
        return "'" + v
    return v


def reference_csv(header, rows) -> str:
    """What to_csv means: csv.writer, LF line ends, floats as fmt_num, None as empty, text cells OWASP-safe."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(["" if v is None else fmt_num(v) if isinstance(v, float) else owasp(v) for v in row])
    return buf.getvalue()


_cell = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.floats(),
    st.text(max_size=8),
    st.sampled_from(
        [
            "",
            ",",
            '"',
            "=1+1",
            "@SUM(A1)",
            "-x",
            "-3.5",
            "+cmd|' /C calc'!A0",
            'a "b"',
            "x,y",
            "line\nbreak",
            "cr\rhere",
            "nul\x00",
            " pad ",
            "ünï",
            "1.0",
        ]
    ),
)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 5).flatmap(
        lambda w: st.tuples(
            st.lists(st.text(alphabet='ab ,"', min_size=1, max_size=4), min_size=w, max_size=w),
            st.lists(st.lists(_cell, min_size=w, max_size=w), max_size=12),
        )
    )
)
def test_to_csv_is_csv_writer_byte_for_byte(table) -> None:
    header, rows = table
    assert to_csv(header, rows) == reference_csv(header, rows)
    columns = [list(c) for c in zip(*rows, strict=True)] if rows else [[] for _ in header]
    assert columns_to_csv(header, columns) == reference_csv(header, rows)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.sampled_from([1, 2, 3, None]), min_size=40, max_size=80),
    st.lists(st.sampled_from([0.5, 3.0, 10.0]), min_size=40, max_size=80),
    st.lists(st.sampled_from(["a,b", "c", 'd"e']), min_size=40, max_size=80),
)
def test_memoised_and_quoted_columns(ints, floats, texts) -> None:
    """Columns with few distinct values take the memo path; columns needing quotes the quoting path."""
    n = min(len(ints), len(floats), len(texts))
    rows = [[ints[i], floats[i], texts[i], f"desc, {i}"] for i in range(n)]
    assert to_csv(("i", "f", "t", "d"), rows) == reference_csv(("i", "f", "t", "d"), rows)


def test_ragged_and_odd_tables_fall_back_to_csv_writer() -> None:
    assert to_csv(("a", "b"), [[1], [1, 2, 3]]) == reference_csv(("a", "b"), [[1], [1, 2, 3]])
    assert to_csv(("only",), [[""], [None], ["x"]]) == 'only\n""\n""\nx\n'
    assert to_csv(("a", "b"), []) == "a,b\n"
    assert to_csv(("a", "b"), iter([(1, 2.0)])) == "a,b\n1,2\n"


def _reference_cable_table(rows):
    def end(e):
        return [e.label, e.rack, e.row, e.position, e.u, e.device, e.port, e.cage, e.cage_port, e.netdev]

    return [
        [
            r.seq,
            r.id,
            r.fabric,
            r.layer,
            r.speed_gbps,
            *end(r.a),
            *end(r.b),
            r.medium,
            r.medium_kind,
            r.length_m,
            r.part_number,
            "yes" if r.needs_transceivers else "no",
            r.rail,
        ]
        for r in rows
    ]


def _reference_label_table(rows):
    return [
        [
            r.id,
            name,
            here.label,
            here.location,
            f"{here.device}-{here.label_port}",
            there.label,
            here.netdev or "",
        ]
        for r in rows
        for name, here, there in (("A", r.a, r.b), ("B", r.b, r.a))
    ]


def test_column_built_tables_are_the_row_built_ones() -> None:
    for cluster, plan in ((small_plan().cluster, small_plan()), (cluster_of(SUPERPOD), plan_of(SUPERPOD))):
        rows = cable_rows(cluster, plan)
        expected = _reference_cable_table(rows)
        assert cable_table(rows) == expected
        assert [list(c) for c in zip(*cable_columns(rows), strict=True)] == expected
        assert len(expected[0]) == len(CABLE_COLUMNS)
        labels = _reference_label_table(rows)
        assert label_table(rows) == labels
        assert [list(c) for c in zip(*label_columns(rows), strict=True)] == labels
        assert len(labels[0]) == len(LABEL_COLUMNS)
        assert columns_to_csv(CABLE_COLUMNS, cable_columns(rows)) == reference_csv(CABLE_COLUMNS, expected)
    assert cable_columns([]) == [[] for _ in CABLE_COLUMNS]
    assert cable_table([]) == []


def test_counts_group_and_sort() -> None:
    plan = small_plan()
    rows = cable_rows(plan.cluster, plan)
    assert counts(rows, "fabric", "layer") == [
        (("compute", "leaf_spine"), 1),
        (("compute", "node_leaf"), 3),
        (("management", "node_leaf"), 1),
    ]
    assert counts(rows, "fabric") == [(("compute",), 4), (("management",), 1)]


def test_signed_zero_and_nan_survive_the_memo() -> None:
    """0.0 == -0.0 (and 1 == 1.0 == True) hash alike: a value memo must not merge them."""
    nan = float("nan")
    rows = [[v, i] for i in range(20) for v in (0.0, -0.0, nan, 2.5)]
    assert to_csv(("v", "i"), rows) == reference_csv(("v", "i"), rows)
    mixed = [[v, i] for i in range(20) for v in (1, 1.0, True)]
    assert to_csv(("v", "i"), mixed) == reference_csv(("v", "i"), mixed)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(2, 4).flatmap(
        lambda w: st.tuples(
            st.lists(st.text(alphabet="ab_", min_size=1, max_size=3), min_size=w, max_size=w),
            st.lists(st.lists(_cell, min_size=w, max_size=w), max_size=14),
        )
    ),
    st.integers(1, 5),
)
def test_streamed_csv_slices_are_the_whole_table(table, slice_rows) -> None:
    """A CsvStream written a slice at a time is csv.writer's text of the whole table, whatever the slice
    size: a header once, no line lost or doubled at a slice boundary, quoting and formula guards per cell
    (a CR in one slice sends only that slice to csv.writer)."""
    header, rows = table
    columns = [list(c) for c in zip(*rows, strict=True)] if rows else [[] for _ in header]
    old, tables.CSV_SLICE_ROWS = tables.CSV_SLICE_ROWS, slice_rows
    try:
        stream = sliced_csv(header, columns)
        parts = list(stream.parts())
    finally:
        tables.CSV_SLICE_ROWS = old
    assert "".join(parts) == reference_csv(header, rows)
    assert len(parts) == max(1, -(-len(rows) // slice_rows))


def test_streamed_labels_of_a_plan_are_label_table(monkeypatch) -> None:
    """The labels sheet streamed in slices of 2 cables (two label rows each) is label_table's rows."""
    plan = small_plan()
    rows = cable_rows(plan.cluster, plan)
    monkeypatch.setattr(tables, "CSV_SLICE_ROWS", 2)
    stream = rows_csv(LABEL_COLUMNS, rows, label_columns)
    assert len(rows) > 2
    assert stream.text() == reference_csv(LABEL_COLUMNS, label_table(rows))
