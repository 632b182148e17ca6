"""The work order as a technician gets it: printed through LibreOffice (a real spreadsheet application),
landscape, one page wide, one sheet per rack; page count bounded by the lines it holds."""

from __future__ import annotations

import csv
import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import run_cli
from diff_blueprints import variant

ROWS_PER_PAGE = 30  # a landscape page one sheet wide holds far more; fewer means it is not fit to width


def _soffice() -> str:
    tool = shutil.which("soffice") or shutil.which("libreoffice")
    if tool is None:
        if os.environ.get("CI"):
            pytest.fail("LibreOffice (soffice) is required in CI: apt-get install libreoffice-calc-nogui")
        pytest.skip("LibreOffice (soffice) not installed")
    return tool


def _pdf_pages(pdf: bytes) -> list[tuple[float, float]]:
    """(width, height) of each page, read from the PDF's page objects (LibreOffice writes them plain)."""
    boxes = re.findall(rb"/MediaBox\s*\[\s*([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*\]", pdf)
    n = len(re.findall(rb"/Type\s*/Page[^s]", pdf))
    sizes = [(float(x1) - float(x0), float(y1) - float(y0)) for x0, y0, x1, y1 in boxes]
    assert n and sizes, "no pages in the PDF"
    return sizes if len(sizes) == n else [sizes[0]] * n  # one shared MediaBox on the page tree


def test_work_order_prints_landscape_per_rack(tmp_path: Path) -> None:
    soffice = _soffice()
    old, new = variant("wo-su2", dgx=64, growth=128), variant("wo-su3", dgx=96, growth=128)
    out = tmp_path / "wo"
    code, _, err = run_cli("diff", str(old), str(new), "--work-order", str(out), "--quiet")
    assert code == 1, err
    lines = list(csv.DictReader((out / "work-order.csv").open(encoding="utf-8")))
    racks = {r["a_rack"] for r in lines}
    devices = sum(1 for _ in (out / "devices.csv").open(encoding="utf-8")) - 1
    proc = subprocess.run(
        [
            soffice,
            "--headless",
            f"-env:UserInstallation=file://{tmp_path}/lo-profile",
            "--convert-to",
            "pdf",
            "--outdir",
            str(tmp_path),
            str(out / "work-order.xlsx"),
        ],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr
    pages = _pdf_pages((tmp_path / "work-order.pdf").read_bytes())
    assert all(w > h for w, h in pages), "every page landscape"
    # summary (1-2 pages) + devices + one or more pages per rack, never a sheet split across page widths
    most = (
        2
        + math.ceil(devices / ROWS_PER_PAGE)
        + sum(math.ceil(sum(r["a_rack"] == rack for r in lines) / ROWS_PER_PAGE) for rack in racks)
    )
    assert len(racks) + 2 <= len(pages) <= most, (len(pages), len(lines), len(racks))
