"""An existing -o file is refused before the blueprint is read (review b180): validate, estimate, diff,
migrate, verify-cabling and acceptance-report first checked only that -o was none of their inputs, read and
resolved the blueprint (seconds for a big one), and only then refused the existing file. Its refusal now
comes first, without --force: a blueprint that cannot even be loaded gets the "exists" refusal, not its own
errors. With --force the output is still never the catalogue file the blueprint names, which is known only
once it is read (tests/cli/test_no_command_replaces_the_catalogue.py)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import run_cli

RESULTS = Path(__file__).resolve().parent.parent / "perf" / "data" / "nccl_tests"
FIXTURES = Path(__file__).resolve().parent.parent / "verify" / "fixtures"
SIM = str(FIXTURES / "tiny-ndr-compute-sim-hdr.ibnetdiscover")
MINE = b"the user's own file\n"
BROKEN = "apiVersion: cluster-blueprint/v1\nname: [unclosed\n"  # no YAML loader takes this
Args = Callable[[Path, Path, Path], list[str]]  # (folder, blueprint, the existing -o file)


def _results(folder: Path) -> str:
    out = folder / "results"
    out.mkdir()
    name = "xxrjun-cnode3-003-five-programs.log"
    shutil.copyfile(RESULTS / name, out / name)
    return str(out)


COMMANDS: dict[str, Args] = {
    "validate": lambda _, bp, o: ["validate", str(bp), "-o", str(o)],
    "estimate": lambda _, bp, o: ["estimate", str(bp), "-o", str(o)],
    "estimate --plot": lambda _, bp, o: ["estimate", str(bp), "--plot", str(o.with_suffix(".svg"))],
    "diff": lambda _, bp, o: ["diff", str(bp), str(bp), "-o", str(o)],
    "migrate": lambda _, bp, o: ["migrate", str(bp), "-o", str(o)],
    "verify-cabling": lambda _, bp, o: ["verify-cabling", str(bp), "--discovered", SIM, "-o", str(o)],
    "acceptance-report": lambda f, bp, o: [
        "acceptance-report",
        str(bp),
        "--results",
        _results(f),
        "-o",
        str(o),
    ],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_existing_output_is_refused_before_the_blueprint_is_read(tmp_path: Path, command: str) -> None:
    bp = tmp_path / "bp.yaml"
    bp.write_text(BROKEN, encoding="utf-8")
    mine = tmp_path / "mine" / "notes.txt"
    mine.parent.mkdir()
    mine.write_bytes(MINE)
    mine.with_suffix(".svg").write_bytes(MINE)
    code, out, err = run_cli(*COMMANDS[command](tmp_path, bp, mine))
    assert code == 2, out + err
    assert "exists; add --force to replace it" in err and "nothing written" in err, err
    assert "cannot use this blueprint" not in err and "YAML" not in err, err  # the blueprint was never read
    assert mine.read_bytes() == MINE and mine.with_suffix(".svg").read_bytes() == MINE


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_with_force_the_blueprint_is_read_and_its_errors_said(tmp_path: Path, command: str) -> None:
    """The early refusal is only the existing file's: with --force the run goes on to the blueprint."""
    bp = tmp_path / "bp.yaml"
    bp.write_text(BROKEN, encoding="utf-8")
    mine = tmp_path / "mine" / "notes.txt"
    mine.parent.mkdir()
    mine.write_bytes(MINE)
    mine.with_suffix(".svg").write_bytes(MINE)
    code, out, err = run_cli(*COMMANDS[command](tmp_path, bp, mine), "--force")
    assert code == 2, out + err
    assert "exists" not in err, err
    assert mine.with_suffix(".svg").read_bytes() == MINE


def test_validate_reads_no_blueprint_before_refusing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """validate reports an unusable blueprint rather than stopping, so its refusal read the same both ways:
    what tells is that no blueprint is checked at all (seconds of work for a big one)."""
    import generator.commands.validate as validate

    def never(*_: object) -> None:
        raise AssertionError("a blueprint was read before the existing -o file was refused")

    monkeypatch.setattr(validate, "_check_all", never)
    bp = tmp_path / "bp.yaml"
    bp.write_text(BROKEN, encoding="utf-8")
    mine = tmp_path / "notes.txt"
    mine.write_bytes(MINE)
    code, out, err = run_cli("validate", str(bp), "-o", str(mine))
    assert code == 2 and "exists; add --force to replace it" in err, out + err
    assert mine.read_bytes() == MINE
