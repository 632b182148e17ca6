"""`advise --write` and `init --from-advice` of one advice write one blueprint: advise wrote the advisor's
starter unsettled, so it warned about its own design (TOP017: 8 leaves on one spine) where init's, with the
fix and its note, did not."""

from __future__ import annotations

from pathlib import Path

from conftest import run_cli

from generator.pipeline import check


def _body(path: Path) -> list[str]:
    """The file without the lines that name the tool or the file."""
    return [
        line
        for line in path.read_text().splitlines()
        if "written by `blueprint" not in line and not line.startswith("name:")
    ]


def test_advise_write_writes_what_init_from_advice_writes(tmp_path: Path) -> None:
    advice, by_advise, by_init = tmp_path / "a.json", tmp_path / "advise.yaml", tmp_path / "init.yaml"
    args = ("--params", "70e9", "--gpus", "16", "--gpu", "h100-sxm", "--budget", "high")
    code, _, err = run_cli(
        "advise", "-q", *args, "--format", "json", "-o", str(advice), "--write", str(by_advise)
    )
    assert code == 0, err
    code, _, err = run_cli("init", "-q", "--from-advice", str(advice), "-o", str(by_init))
    assert code == 0, err
    assert _body(by_advise) == _body(by_init)
    assert "written by `blueprint advise`" in by_advise.read_text()
    assert [f.rule for f in check(by_advise).findings if f.rule == "TOP017"] == []
