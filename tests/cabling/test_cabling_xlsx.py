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
    """Frozen header, header repeated on every printed page, autofilter, landscape one page wide."""
    assert ws.freeze_panes == f"A{header_rows + 1}"
    assert ws.print_title_rows == f"$1:${header_rows}"
    assert ws.auto_filter.ref and ws.auto_filter.ref.startswith(f"A{header_rows}:")
    assert ws.page_setup.orientation == "landscape"
    assert ws.page_setup.fitToWidth == 1 and ws.page_setup.fitToHeight == 0
    assert ws.sheet_properties.pageSetUpPr.fitToPage
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
    assert (first["Medium"], first["Length m"], first["Part number"], first["Optics"]) == ("MMF", 5, "MFP7E10-N0xx", "yes")
    assert first["Pulled"] is None and first["Tested"] is None


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
    values = [r for r in ws.iter_rows(values_only=True)]
    assert ("compute", "node_leaf", 3) in [tuple(v[:3]) for v in values]
    assert ("compute", "leaf_spine", 1) in [tuple(v[:3]) for v in values]
    bom = wb["BOM"]
    check_printable(bom)
    counts = {(r[0], r[1]): r[4] for r in bom.iter_rows(min_row=3, values_only=True)}
    assert counts[("transceiver", "mma4z00-ns")] == 4
    assert counts[("server", "dgx-h100")] == 2


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
