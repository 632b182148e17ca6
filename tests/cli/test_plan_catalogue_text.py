"""`blueprint plan` shows catalogue text as it is (review h154 f3): a switch named `QM9700 [/] rev B` made
Rich raise MarkupError (exit 3) and `NVIDIA QM9700 [rev2]` lost its `[rev2]` as an unknown tag."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli
from small_ib_site import switch_catalog, write


@pytest.mark.parametrize(
    "name", ["QM9700 [/] rev B", "NVIDIA QM9700 [rev2]", "QM9700 [bold]x[/bold] :thumbs_up:"]
)
def test_catalogue_text_is_shown_not_read_as_markup(tmp_path: Path, name: str) -> None:
    bp = write(tmp_path, switch_catalog(name=f"'{name}'"))
    code, out, err = run_cli("plan", str(bp))
    assert code == 0, out + err
    assert name in out, out
    report = tmp_path / "plan.txt"
    code, out, err = run_cli("plan", str(bp), "-o", str(report))
    assert code == 0, out + err
    assert name in report.read_text(encoding="utf-8")
