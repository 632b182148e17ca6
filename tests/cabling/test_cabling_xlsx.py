"""The printable workbook: sheets, print setup, rack sheets, determinism (hand-built plan)."""

from __future__ import annotations

import io
import zipfile

import openpyxl
from cabling_plans import small_plan

from generator.emit.cabling import XLSX_NAME, render_format
from generator.emit.cabling.xlsx import PULL_HEADER


def _xlsx(plan=None) -> bytes:
    plan = plan or small_plan()
    return render_format(plan.cluster, plan, "xlsx")[XLSX_NAME]


def check_printable(ws, header_rows: int = 2) -> None:
    """Frozen header, header repeated on every printed page, autofilter, landscape one page wide, printed
    gridlines, narrow margins, cluster/sheet name in the header and page numbers in the footer."""
    assert ws.freeze_panes == f"A{header_rows + 1}"
    assert ws.print_title_rows == f"$1:${header_rows}"
    assert ws.auto_filter.ref and ws.auto_filter.ref.startswith(f"A{header_rows}:")
    assert ws.auto_filter.ref.endswith(str(max(ws.max_row, header_rows)))
    assert ws.page_setup.orientation == "landscape"
    assert ws.page_setup.fitToWidth == 1 and ws.page_setup.fitToHeight == 0
    assert ws.sheet_properties.pageSetUpPr.fitToPage
    assert ws.print_options.gridLines
    m = ws.page_margins
    assert (m.left, m.right, m.top, m.bottom, m.header, m.footer) == (0.3, 0.3, 0.6, 0.6, 0.3, 0.3)
    assert (ws.oddHeader.left.text, ws.oddHeader.center.text) == ("superpod-h100-4su", "&A")
    assert (ws.oddFooter.left.text, ws.oddFooter.right.text) == (
        "cluster-blueprint cabling plan",
        "Page &P of &N",
    )
    for cell in ws[header_rows]:  # the header row: bold on grey with a thin border
        assert cell.font.b and cell.fill.fgColor.rgb.endswith("D9D9D9") and cell.border.top.style == "thin"
    for col in "ABCDEFGH":
        assert ws.column_dimensions[col].width and ws.column_dimensions[col].width > 3


def test_sheets_and_rack_pulls() -> None:
    plan = small_plan()
    wb = openpyxl.load_workbook(io.BytesIO(_xlsx(plan)))
    assert wb.sheetnames == ["Summary", "BOM", "r01-01", "r01-02"]
    links = {link.id: link for link in plan.links}
    devices = plan.device_by_name
    seen = []
    for name in ("r01-01", "r01-02"):
        ws = wb[name]
        check_printable(ws)
        header = [c.value for c in ws[2]]
        assert tuple(header) == PULL_HEADER
        col = {h: i for i, h in enumerate(header)}
        for row in ws.iter_rows(min_row=3, values_only=True):
            link = links[row[col["Cable"]]]
            # every pull on a rack's sheet starts in that rack
            assert devices[link.a.device].rack == name
            assert row[col["From U"]] == devices[link.a.device].u
            assert row[col["From label"]].endswith(f"-{link.a.device}-{link.a.label_port}")
            assert row[col["To label"]].endswith(f"-{link.b.device}-{link.b.label_port}")
            seen.append(link.id)
    assert sorted(seen) == sorted(links)
    r1 = list(wb["r01-01"].iter_rows(min_row=3, values_only=True))
    assert [r[1] for r in r1] == ["C-NL-000001", "C-NL-000003", "M-NL-000001", "C-NL-000002"]
    first = dict(zip(PULL_HEADER, r1[0], strict=True))
    assert first["From label"] == "dc1-R01-01-U01-dgx001-P01/1"
    assert first["To label"] == "dc1-R01-02-U01-c-leaf-001-P01/1"
    assert (first["Medium"], first["Length m"], first["Part number"], first["Optics"]) == (
        "MMF",
        5,
        "MFP7E10-N0xx",
        "yes",
    )
    assert first["Pulled"] is None and first["Tested"] is None
    # numbers are numbers (sortable, summable), text is text
    assert (
        type(first["#"]) is int
        and type(first["From U"]) is int
        and isinstance(first["Length m"], int | float)
    )
    assert all(
        isinstance(first[k], str) for k in ("Cable", "Fabric", "Layer", "From label", "To label", "Medium")
    )
    mgmt = dict(zip(PULL_HEADER, r1[2], strict=True))
    assert (mgmt["Medium"], mgmt["Part number"], mgmt["Optics"]) == ("CAT6", None, None)  # copper: no optics
    # the fabric cell is tinted so management pulls stand out among compute ones; tick columns are sized
    ws = wb["r01-01"]
    fabric_col = PULL_HEADER.index("Fabric") + 1
    assert ws.cell(row=3, column=fabric_col).fill.fgColor.rgb.endswith("DDEBF7")  # compute
    assert ws.cell(row=5, column=fabric_col).fill.fgColor.rgb.endswith("FCE4D6")  # management
    assert ws.cell(row=3, column=1).fill.fill_type is None
    assert [ws.column_dimensions[c].width for c in "NOP"] == [9, 9, 9]
    label_col = PULL_HEADER.index("From label") + 1
    longest = max(len(str(c.value)) for c in ws[chr(64 + label_col)][1:])
    assert ws.column_dimensions[chr(64 + label_col)].width == min(longest + 2, 44)
    assert (
        ws["A1"].value.startswith("superpod-h100-4su · rack r01-01")
        and ws["A1"].font.b
        and ws["A1"].font.sz == 13
    )


def test_summary_and_bom() -> None:
    wb = openpyxl.load_workbook(io.BytesIO(_xlsx()))
    summary: dict = {}
    for r in wb["Summary"].iter_rows(values_only=True):
        if r[0] is not None:
            summary.setdefault(r[0], r[1])  # facts come first; later section titles reuse some words
    assert summary["Cables"] == 5
    assert summary["Racks"] == 2
    assert summary["Power kW (planned)"] == 23.9
    ws = wb["Summary"]
    assert ws.freeze_panes == "A2" and ws.print_title_rows == "$1:$1"
    assert ws.page_setup.orientation == "landscape" and ws.sheet_properties.pageSetUpPr.fitToPage
    assert type(summary["Cables"]) is int and isinstance(summary["Power kW (planned)"], float)
    assert ws["A3"].font.b and ws["A1"].font.sz == 13
    values = [r for r in ws.iter_rows(values_only=True)]
    assert ("compute", "node_leaf", 3) in [tuple(v[:3]) for v in values]
    assert ("compute", "leaf_spine", 1) in [tuple(v[:3]) for v in values]
    bom = wb["BOM"]
    check_printable(bom)
    counts = {(r[0], r[1]): r[4] for r in bom.iter_rows(min_row=3, values_only=True)}
    assert counts[("transceiver", "mma4z00-ns")] == 4
    assert counts[("server", "dgx-h100")] == 2
    assert all(type(n) is int for n in counts.values())
    assert [c.value for c in bom[2]] == ["Item", "Model", "Detail", "Part number", "Count"]
    assert bom["A1"].value == "superpod-h100-4su: bill of materials"
    assert bom.cell(row=3, column=4).value is None  # an empty part number is an empty cell, not ""


def test_package_is_well_formed_office_open_xml() -> None:
    import xml.etree.ElementTree as ET

    with zipfile.ZipFile(io.BytesIO(_xlsx())) as z:
        names = z.namelist()
        assert names[0] == "[Content_Types].xml"
        assert {
            "_rels/.rels",
            "docProps/app.xml",
            "docProps/core.xml",
            "xl/workbook.xml",
            "xl/_rels/workbook.xml.rels",
            "xl/styles.xml",
        } <= set(names)
        assert sum(n.startswith("xl/worksheets/sheet") for n in names) == 4
        for name in names:
            ET.fromstring(z.read(name))  # every part is well-formed XML
        types = z.read("[Content_Types].xml").decode()
        assert all(f'PartName="/{n}"' in types for n in names if n.startswith("xl/") and n.endswith(".xml"))


def test_bytes_are_reproducible_and_carry_no_clock() -> None:
    one, two = _xlsx(), _xlsx()
    assert one == two
    with zipfile.ZipFile(io.BytesIO(one)) as z:
        assert {i.date_time for i in z.infolist()} == {(2000, 1, 1, 0, 0, 0)}
        core = z.read("docProps/core.xml").decode()
    assert "2000-01-01T00:00:00Z" in core
    assert core.count("2000-01-01T00:00:00Z") == 2  # created and modified


def test_unracked_devices_get_their_own_sheet_last() -> None:
    from dataclasses import replace

    plan = small_plan()
    devices = tuple(d._replace(rack=None, u=None) if d.name == "dgx002" else d for d in plan.devices)
    plan = replace(plan, devices=devices)
    wb = openpyxl.load_workbook(io.BytesIO(_xlsx(plan)))
    assert wb.sheetnames == ["Summary", "BOM", "r01-01", "r01-02", "unracked"]
    rows = list(wb["unracked"].iter_rows(min_row=3, values_only=True))
    assert [(r[1], r[PULL_HEADER.index("From label")]) for r in rows] == [("C-NL-000002", "dc1-dgx002-P01/1")]
    assert rows[0][PULL_HEADER.index("From U")] is None
