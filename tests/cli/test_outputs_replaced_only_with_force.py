"""A file the user names as an output (-o FILE, --plot, --write, --calibrate) is replaced only with --force
(review b181): `topology bp.yaml -o notes.txt` replaced the user's notes with JSON (exit 0) and refused
`--force` as an unknown option; `migrate`, `plan`, `validate`, `estimate` (and `--plot`), `explain`,
`schema`, `advise` and others replaced an existing file without a word, where `init -o`, `examples -o`,
`advise --write` refused it. Every such command now refuses it (exit 2, the file byte-identical, no
temporary left) and replaces it with --force; `-o -` stays standard output."""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli

from generator.cli import build_parser

MINE = b"the user's own file\n"
SMALL = str(EXAMPLES / "single-dgx-h100.yaml")
FABRIC = str(EXAMPLES / "roce-rail-2tier.yaml")  # the review's: topology draws a built fabric
FIXTURES = Path(__file__).resolve().parent.parent / "verify" / "fixtures"
RESULTS = Path(__file__).resolve().parent.parent / "perf" / "data" / "nccl_tests"
Args = Callable[[Path, Path], list[str]]  # (folder, the existing file) -> the command line


def _results(folder: Path) -> str:
    out = folder / "results"
    out.mkdir()
    name = "xxrjun-cnode3-003-five-programs.log"
    shutil.copyfile(RESULTS / name, out / name)
    return str(out)


def _accept(option: str) -> Args:
    def args(folder: Path, target: Path) -> list[str]:
        bp = str(EXAMPLES / "superpod-h100-4su.yaml")
        return ["acceptance-report", bp, "--results", _results(folder), option, str(target)]

    return args


def _build(folder: Path) -> str:
    """A build with no switch to bring up: `rehearse` reports so, without containers."""
    build = folder / "build"
    build.mkdir()
    (build / "manifest.json").write_text('{"blueprint": {"name": "t"}}')
    return str(build)


VERIFY = ["--discovered", str(FIXTURES / "tiny-ndr-compute-sim-hdr.ibnetdiscover"), "--sim-speed", "HDR"]

# (the command line, the existing file's name, the exit code of a run that writes it)
CASES: dict[str, tuple[Args, str, int]] = {
    "plan": (lambda _, t: ["plan", SMALL, "-o", str(t)], "notes.txt", 0),
    "topology": (lambda _, t: ["topology", FABRIC, "-o", str(t)], "notes.txt", 0),
    "topology svg": (lambda _, t: ["topology", FABRIC, "--format", "svg", "-o", str(t)], "mine.svg", 0),
    "validate": (lambda _, t: ["validate", SMALL, "-o", str(t)], "notes.txt", 0),
    "estimate": (lambda _, t: ["estimate", SMALL, "-o", str(t)], "notes.txt", 0),
    "estimate --plot": (lambda _, t: ["estimate", SMALL, "--plot", str(t)], "mine.svg", 0),
    "explain": (lambda _, t: ["explain", "PLN001", "-o", str(t)], "notes.txt", 0),
    "explain --list": (lambda _, t: ["explain", "--list", "-o", str(t)], "notes.txt", 0),
    "schema": (lambda _, t: ["schema", "-o", str(t)], "notes.txt", 0),
    "advise": (lambda _, t: ["advise", "--params", "7e9", "-o", str(t)], "notes.txt", 0),
    "advise --write": (lambda _, t: ["advise", "--params", "7e9", "-q", "--write", str(t)], "mine.yaml", 0),
    "migrate": (lambda _, t: ["migrate", SMALL, "-o", str(t)], "other.yaml", 0),
    "catalog": (lambda _, t: ["catalog", "gpus", "-o", str(t)], "notes.txt", 0),
    "completion": (lambda _, t: ["completion", "bash", "-o", str(t)], "notes.txt", 0),
    "examples": (lambda _, t: ["examples", "single-dgx-h100", "-o", str(t)], "mine.yaml", 0),
    "examples list": (lambda _, t: ["examples", "-o", str(t)], "notes.txt", 0),
    "init": (lambda _, t: ["init", "--params", "7e9", "-o", str(t)], "mine.yaml", 0),
    "diff": (lambda _, t: ["diff", SMALL, SMALL, "-o", str(t)], "notes.txt", 0),
    "verify-cabling": (
        lambda _, t: ["verify-cabling", str(FIXTURES / "tiny-ndr.yaml"), *VERIFY, "-o", str(t)],
        "notes.txt",
        0,
    ),
    "acceptance-report": (_accept("-o"), "notes.txt", 0),
    "acceptance-report --plot": (_accept("--plot"), "mine.svg", 0),
    "rehearse": (lambda f, t: ["rehearse", _build(f), "-o", str(t)], "notes.txt", 0),
}

# -o FILE commands whose run needs more than this folder holds, tested with what they need (and
# acceptance-report --calibrate: tests/perf/test_site_calibration.py::test_no_overwrite_without_force)
ELSEWHERE = {
    "configure": "tests/ansible_playbooks/test_configure_force.py",
    "inventory": "tests/hostile/test_inventory_force.py",
    "sot": "tests/sot/test_sot_push_force.py",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_existing_file_is_replaced_only_with_force(tmp_path: Path, case: str) -> None:
    args, name, ok = CASES[case]
    target = tmp_path / "mine" / name
    target.parent.mkdir()
    target.write_bytes(MINE)
    argv = args(tmp_path, target)
    code, out, err = run_cli(*argv)
    assert code == 2, out + err
    assert "exists; add --force to replace it" in err and "nothing written" in err, err
    assert target.read_bytes() == MINE
    assert [p.name for p in target.parent.iterdir()] == [name]  # no temporary file left beside it
    code, out, err = run_cli(*argv, "--force")
    assert code == ok, out + err
    assert target.read_bytes() != MINE and target.stat().st_size > 0
    assert [p.name for p in target.parent.iterdir()] == [name]


@pytest.mark.parametrize("command", ["plan", "schema", "explain"])
def test_dash_is_standard_output_even_beside_a_file_named_dash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "-").write_bytes(MINE)
    argv = {"plan": ["plan", SMALL], "schema": ["schema"], "explain": ["explain", "PLN001"]}[command]
    code, out, err = run_cli(*argv, "-o", "-")
    assert code == 0 and out, err
    assert (tmp_path / "-").read_bytes() == MINE


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    (action,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def test_every_command_writing_a_file_has_force_and_is_tested() -> None:
    """A new command with -o FILE gets --force from add_common; this list makes it get a test too."""
    file_commands = set()
    for name, sub in _subparsers().items():
        options = {o: a for a in sub._actions for o in a.option_strings}
        if options["-o"].metavar != "DIR":
            file_commands.add(name)
            assert "--force" in options, name
    tested = {case.split()[0] for case in CASES} | set(ELSEWHERE)
    assert file_commands == tested
    root = Path(__file__).resolve().parents[2]
    assert all((root / path).is_file() for path in ELSEWHERE.values())
