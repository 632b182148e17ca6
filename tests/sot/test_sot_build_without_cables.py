"""`sot csv` of a real build with nothing cabled (a single node) said "give a `blueprint generate` output" of
a folder that is one: it now says the plan cables nothing, so there is nothing to export (still exit 2)."""

from __future__ import annotations

from pathlib import Path

from conftest import run_cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "single-dgx-h100.yaml"


def test_a_build_without_cables_says_it_has_nothing_to_export(tmp_path: Path) -> None:
    build = tmp_path / "build"
    code, _, err = run_cli("generate", str(EXAMPLE), "-o", str(build), "-q")
    assert code == 0, err
    code, _, err = run_cli("sot", "csv", str(build), "-o", str(tmp_path / "out"))
    assert code == 2
    assert "plan cables nothing" in err and "give a `blueprint generate` output" not in err
    assert not (tmp_path / "out").exists()


def test_a_folder_that_is_no_build_still_asks_for_one(tmp_path: Path) -> None:
    code, _, err = run_cli("sot", "csv", str(tmp_path), "-o", str(tmp_path / "out"))
    assert code == 2 and "give a `blueprint generate` output" in err
