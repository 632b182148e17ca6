"""The streaming SpreadsheetML writer on its own: package structure, values and types, escaping, sheet
names, print setup, determinism — read back with openpyxl and a plain XML parser."""

from __future__ import annotations

import io
import math
import xml.etree.ElementTree as ET
import zipfile

import openpyxl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.emit.cabling.xlsx_writer import (
    FIXED_TIME,
    MAX_CELL_CHARS,
    Columns,
    PageSetup,
    StableZip,
    Style,
    Workbook,
    column_letter,
    escape_all,
    hf_text,
    sheet_name,
)

MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
TRICKY = [
    "a&b",
    "<tag>",
    "x > y",
    'say "hi"',
    "it's",
    "tab\there",
    "line\nbreak",
    "cr\rhere",
    " leading",
    "trailing ",
    "ünïcödé ✓",
    "emoji 🛠",
    "ctrl\x01\x07gone",
    "nul\x00gone",
    "\ufffe\uffff",
    "=1+1",
]


def _book(build) -> bytes:
    buf = io.BytesIO()
    build(buf)
    return buf.getvalue()


def _one_sheet(rows, header=("A", "B", "C"), **sheet_options) -> bytes:
    def build(buf):
        with Workbook(buf, ["Data"], title="t", creator="me") as wb:
            sheet = wb.sheet(**sheet_options)
            sheet.table(1, header, rows)
            wb.add(sheet)

    return _book(build)


def _values(data: bytes, name: str = "Data") -> list[tuple]:
    return list(openpyxl.load_workbook(io.BytesIO(data))[name].iter_rows(values_only=True))


def test_values_and_types_round_trip() -> None:
    rows = [[1, 2.5, "x"], [None, 3.0, ""], [10**12, -0.125, "y"], [True, float("nan"), None]]
    got = _values(_one_sheet(rows))
    assert got[0] == ("A", "B", "C")
    assert got[1] == (1, 2.5, "x")
    assert got[2][0] is None and got[2][1] == 3 and got[2][2] is None  # "" is an empty cell, as in openpyxl
    assert got[3] == (10**12, -0.125, "y")
    assert got[4][0] is True and got[4][1] is None  # NaN cannot be stored: empty
    assert isinstance(got[1][0], int) and isinstance(got[1][1], float) and isinstance(got[1][2], str)


@pytest.mark.parametrize("shared", [False, True], ids=["rows", "columns"])
def test_tricky_strings_are_escaped_and_cleaned(shared: bool) -> None:
    # Enough rows that the column-wise bulk paths run, not only the per-cell one.
    rows = [[f"{t}-{i}", t, i] for i in range(40) for t in TRICKY]

    def build(buf):
        with Workbook(buf, ["Data"]) as wb:
            sheet = wb.sheet()
            body = Columns([list(c) for c in zip(*rows, strict=True)]) if shared else rows
            sheet.table(1, ("unique", "repeated", "n"), body)
            wb.add(sheet)

    data = _book(build)
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        for name in z.namelist():
            if name.endswith((".xml", ".rels")):
                ET.fromstring(z.read(name))  # well-formed XML 1.0, or this raises
    got = _values(data)[1:]
    illegal = {chr(c) for c in range(32) if c not in (9, 10, 13)} | {"\ufffe", "\uffff"}
    expected = ["".join(ch for ch in s if ch not in illegal) for s in (r[0] for r in rows)]
    assert [g[0] for g in got] == expected
    assert got[0][1] == "a&b" and got[1][1] == "<tag>"
    assert {g[1] for g in got} >= {" leading", "trailing ", "cr\rhere", "line\nbreak", "=1+1"}
    assert all(isinstance(g[1], str) and g[1] != "" for g in got if g[1] is not None)
    assert [g[2] for g in got] == [r[2] for r in rows]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=12), min_size=1, max_size=30))
def test_escape_all_matches_one_by_one(values: list[str]) -> None:
    from xml.sax.saxutils import escape

    illegal = {chr(c) for c in range(32) if c not in (9, 10, 13)} | {"\ufffe", "\uffff"}
    expected = [
        escape(
            "".join(ch for ch in v if ch not in illegal and not 0xD800 <= ord(ch) <= 0xDFFF), {"\r": "&#13;"}
        )
        for v in values
    ]
    assert escape_all(values) == expected


def test_cells_longer_than_excel_allows_are_cut() -> None:
    got = _values(_one_sheet([["x" * (MAX_CELL_CHARS + 10), 1, 2]]))
    assert len(got[1][0]) == MAX_CELL_CHARS


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.integers(-(10**9), 10**9), st.text(max_size=8)),
            st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False, width=32)),
            st.sampled_from(["compute", "storage", "management", None]),
        ),
        min_size=1,
        max_size=40,
    )
)
def test_any_mixture_reads_back(rows: list[tuple]) -> None:
    def build(buf):
        with Workbook(buf, ["Data"]) as wb:
            sheet = wb.sheet()
            sheet.table(1, ("a", "b", "c"), rows, column_styles={2: {"compute": Style.FILL_BLUE}})
            wb.add(sheet)

    illegal = {chr(c) for c in range(32) if c not in (9, 10, 13)} | {"\ufffe", "\uffff"}

    def expect(v):
        if isinstance(v, str):
            v = "".join(ch for ch in v if ch not in illegal and not 0xD800 <= ord(ch) <= 0xDFFF)
            return v or None
        return v

    got = _values(_book(build))[1:]
    assert len(got) <= len(rows)  # trailing empty rows are not written
    padded = got + [(None, None, None)] * (len(rows) - len(got))
    for row, back in zip(rows, padded, strict=True):
        assert back[0] == expect(row[0])
        assert (back[1] is None and row[1] is None) or math.isclose(back[1], row[1], rel_tol=1e-15, abs_tol=0)
        assert back[2] == row[2]


def test_print_setup_views_and_defined_names() -> None:
    def build(buf):
        with Workbook(buf, ["First", "Second"]) as wb:
            one = wb.sheet(
                freeze_rows=2,
                print_title_rows=2,
                autofilter=(2, 4, 3),
                page=PageSetup(
                    gridlines=True,
                    margins=(0.3, 0.3, 0.6, 0.6, 0.3, 0.3),
                    header=f"&L{hf_text('R&D')}&C&A",
                    footer="&RPage &P of &N",
                ),
            )
            one.row(1, ["title"], Style.TITLE)
            last, widths = one.table(2, ("a", "bb", "c"), [[1, "xyz", None], [22, "q", None]])
            one.widths.update({1: 7, 2: 12.5})
            assert (last, widths) == (4, [2, 3, 1])
            wb.add(one)
            two = wb.sheet(page=PageSetup(landscape=False, fit_to_width=False))
            two.row(1, ["only"])
            wb.add(two)

    wb = openpyxl.load_workbook(io.BytesIO(_book(build)))
    ws = wb["First"]
    assert ws.freeze_panes == "A3"
    assert ws.print_title_rows == "$1:$2"
    assert ws.auto_filter.ref == "A2:C4"
    assert (ws.page_setup.orientation, ws.page_setup.fitToWidth, ws.page_setup.fitToHeight) == (
        "landscape",
        1,
        0,
    )
    assert ws.sheet_properties.pageSetUpPr.fitToPage
    assert ws.print_options.gridLines
    m = ws.page_margins
    assert (m.left, m.right, m.top, m.bottom, m.header, m.footer) == (0.3, 0.3, 0.6, 0.6, 0.3, 0.3)
    assert (ws.oddHeader.left.text, ws.oddHeader.center.text, ws.oddFooter.right.text) == (
        "R&&D",
        "&A",
        "Page &P of &N",
    )
    assert (ws.column_dimensions["A"].width, ws.column_dimensions["B"].width) == (7, 12.5)
    assert ws["A1"].font.b and ws["A1"].font.sz == 13
    head = ws["B2"]
    assert head.font.b and head.fill.fgColor.rgb.endswith("D9D9D9") and head.border.bottom.style == "thin"
    assert ws.dimensions == "A1:C4"
    two = wb["Second"]
    assert two.freeze_panes is None and two.print_title_rows is None and not two.auto_filter.ref
    assert two.page_setup.orientation == "portrait"
    with zipfile.ZipFile(io.BytesIO(_book(build))) as z:
        book = z.read("xl/workbook.xml").decode()
    assert '<definedName name="_xlnm._FilterDatabase" localSheetId="0" hidden="1">\'First\'!$A$2:$C$4' in book
    assert '<definedName name="_xlnm.Print_Titles" localSheetId="0">\'First\'!$1:$2' in book


def test_tints_by_value() -> None:
    rows = [[f, i] for i in range(30) for f in ("compute", "storage", "management", "other")]

    def build(buf):
        with Workbook(buf, ["Data"]) as wb:
            sheet = wb.sheet()
            sheet.table(
                1,
                ("fabric", "n"),
                rows,
                column_styles={
                    0: {
                        "compute": Style.FILL_BLUE,
                        "storage": Style.FILL_GREEN,
                        "management": Style.FILL_ORANGE,
                    }
                },
            )
            wb.add(sheet)

    ws = openpyxl.load_workbook(io.BytesIO(_book(build)))["Data"]
    fills = {ws.cell(row=r, column=1).value: ws.cell(row=r, column=1).fill for r in range(2, 6)}
    assert fills["compute"].fgColor.rgb.endswith("DDEBF7")
    assert fills["storage"].fgColor.rgb.endswith("E2EFDA")
    assert fills["management"].fgColor.rgb.endswith("FCE4D6")
    assert fills["other"].fill_type is None


def test_package_parts_content_types_and_relationships() -> None:
    data = _one_sheet([[1, 2, 3]])
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        names = z.namelist()
        assert names[0] == "[Content_Types].xml"  # first, as Office writes it (file-type sniffers look here)
        assert len(names) == len(set(names))
        types = ET.fromstring(z.read("[Content_Types].xml"))
        overrides = {o.get("PartName").lstrip("/") for o in types if o.tag.endswith("Override")}
        assert overrides == {n for n in names if n.endswith(".xml") and n != "[Content_Types].xml"}
        rels = ET.fromstring(z.read("xl/_rels/workbook.xml.rels"))
        targets = {"xl/" + r.get("Target") for r in rels}
        assert targets == {"xl/worksheets/sheet1.xml", "xl/styles.xml"}
        book = ET.fromstring(z.read("xl/workbook.xml"))
        sheet_rids = {
            s.get("{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id")
            for s in book.iter(f"{MAIN}sheet")
        }
        assert sheet_rids <= {r.get("Id") for r in rels}
        assert {i.date_time for i in z.infolist()} == {(2000, 1, 1, 0, 0, 0)}
        assert all(i.compress_type == zipfile.ZIP_DEFLATED for i in z.infolist())
        core = z.read("docProps/core.xml").decode()
    assert core.count(FIXED_TIME.strftime("%Y-%m-%dT%H:%M:%SZ")) == 2
    props = openpyxl.load_workbook(io.BytesIO(data)).properties
    assert (props.title, props.creator, props.created) == ("t", "me", FIXED_TIME)


def test_bytes_are_deterministic() -> None:
    rows = [[i, f"label-{i}", i / 3] for i in range(500)]
    assert _one_sheet(rows) == _one_sheet(rows)


def test_sheet_names_are_made_valid_and_unique() -> None:
    assert sheet_name("r01-05") == "r01-05"
    assert sheet_name("a[b]c:d*e?f/g\\h") == "a_b_c_d_e_f_g_h"
    assert sheet_name("x" * 40) == "x" * 31
    assert sheet_name("'quoted'") == "quoted"
    assert sheet_name("") == "Sheet"
    assert sheet_name("History") == "History (2)"  # reserved by Excel
    assert sheet_name("Rack", ["rack"]) == "Rack (2)"  # unique ignoring case
    assert sheet_name("y" * 31, ["y" * 31]) == "y" * 27 + " (2)"
    names = Workbook(io.BytesIO(), ["Summary", "summary", "a/b", "a_b", "x" * 35]).sheet_names
    assert names == ("Summary", "summary (2)", "a_b", "a_b (2)", "x" * 31)
    assert all(len(n) <= 31 for n in names)


def test_sheet_names_with_apostrophes_in_defined_names() -> None:
    def build(buf):
        with Workbook(buf, ["Bob's rack"]) as wb:
            sheet = wb.sheet(print_title_rows=1, autofilter=(1, 2, 2))
            sheet.table(1, ("a", "b"), [[1, 2]])
            wb.add(sheet)

    ws = openpyxl.load_workbook(io.BytesIO(_book(build)))["Bob's rack"]
    assert ws.print_title_rows == "$1:$1" and ws.auto_filter.ref == "A1:B2"


def test_misuse_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one sheet"):
        Workbook(io.BytesIO(), [])
    wb = Workbook(io.BytesIO(), ["One", "Two"])
    one = wb.sheet()
    one.row(1, ["x"])
    with pytest.raises(ValueError, match="written twice"):
        one.row(1, ["again"])
        wb.add(one)
    wb2 = Workbook(io.BytesIO(), ["One", "Two"])
    wb2.add(wb2.sheet())
    with pytest.raises(ValueError, match="never written"):
        wb2.close()
    sheet = Workbook(io.BytesIO(), ["One"]).sheet()
    with pytest.raises(ValueError, match="3 cells, the header 2"):
        sheet.table(1, ("a", "b"), [[1, 2, 3]])
    with pytest.raises(ValueError, match="3 columns under a header of 2"):
        sheet.table(1, ("a", "b"), Columns([[1], [2], [3]]))
    with pytest.raises(ValueError, match="column 2 has 1 cells, not 2"):
        Columns([[1, 2], [3]])


def test_column_letters() -> None:
    assert [column_letter(c) for c in (1, 26, 27, 52, 53, 702, 703, 16384)] == [
        "A",
        "Z",
        "AA",
        "AZ",
        "BA",
        "ZZ",
        "AAA",
        "XFD",
    ]


def test_shared_columns_slice_per_sheet() -> None:
    body = Columns([list(range(10)), [f"id-{i}" for i in range(10)]])

    def build(buf):
        with Workbook(buf, ["low", "high"]) as wb:
            for span in ((0, 4), (4, 10)):
                sheet = wb.sheet()
                sheet.row(1, ["title"])
                _, widths = sheet.table(2, ("n", "id"), body, span)
                assert widths == [1, 4]
                wb.add(sheet)

    wb = openpyxl.load_workbook(io.BytesIO(_book(build)))
    assert [r[0] for r in wb["low"].iter_rows(min_row=3, values_only=True)] == [0, 1, 2, 3]
    assert [r[1] for r in wb["high"].iter_rows(min_row=3, values_only=True)] == [
        f"id-{i}" for i in range(4, 10)
    ]


def test_stable_zip_pins_time_and_honours_the_archive_level() -> None:
    payload = b"abc" * 100_000
    sizes = {}
    for level in (1, 9):
        buf = io.BytesIO()
        with StableZip(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as z:
            z.writestr("a.txt", payload)
        with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
            assert z.infolist()[0].date_time == (2000, 1, 1, 0, 0, 0)
            assert z.read("a.txt") == payload
        sizes[level] = len(buf.getvalue())
    assert sizes[9] < sizes[1]  # the level reaches the deflater


_cells = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(width=32),
    st.text(max_size=6),
    st.sampled_from(["a&b", "<x>", 'p"q', "a b", " ", "", "compute", "storage", "x\x01"]),
)


@settings(max_examples=150, deadline=None)
@given(
    st.one_of(
        st.lists(_cells, min_size=1, max_size=200),  # mixed
        st.lists(st.sampled_from(["compute", "storage", 3, 4]), min_size=1, max_size=200),  # repeated values
        st.lists(st.sampled_from([0.0, -0.0, 2.5, None]), min_size=1, max_size=200),  # signed zeros
        st.lists(st.integers(), min_size=1, max_size=200),  # unique ints
        st.lists(
            st.text(alphabet="ab&<>'\"-/_0", min_size=1, max_size=10), min_size=1, max_size=200
        ),  # bulk escape
    ),
    st.sampled_from([0, Style.BOLD, {"compute": Style.FILL_BLUE, 3: Style.FILL_GREEN}]),
)
def test_column_fast_paths_write_what_the_per_cell_path_writes(values, style) -> None:
    """Every column-wise shortcut (memo, bulk escape, bulk ints) must equal the plain per-cell rendering."""
    from generator.emit.cabling.xlsx_writer import _column_inner, _inner, text_width

    def style_of(v):
        return (
            style.get(v, 0)
            if isinstance(style, dict) and not isinstance(v, bool) and v == v
            else (0 if isinstance(style, dict) else style)
        )

    done = _column_inner(values, style)
    if all(v is None for v in values):
        assert done is None
        return
    inner, gaps, widths = done
    expected = [_inner(v, style_of(v)) for v in values]
    assert inner == expected
    assert gaps == ("" in expected)
    assert widths == [text_width(v) for v in values]
