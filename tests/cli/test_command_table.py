"""generator/cli.py's written-out command table cannot go stale: it equals what the modules register.

`blueprint --help` lists the sub-commands from ``COMMANDS`` (name, one-line help, module) instead of
importing the 22 command modules; these tests import every module under generator/commands/, let each
register itself on a parser of its own, and require the table to say exactly that, in the order of the
modules' ``ORDER`` (then module name), which is the order `--help` has always listed them in.
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from generator import cli

ROOT = Path(__file__).resolve().parents[2]


def _registered() -> list[tuple[str, str, str]]:
    """(name, help, module) of every command module's own register(), in ORDER, then module name."""
    found: list[tuple[int, str, str, str]] = []
    for path in sorted((ROOT / "generator" / "commands").glob("*.py")):
        if path.stem.startswith("_"):
            continue
        module = importlib.import_module(f"generator.commands.{path.stem}")
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers()
        module.register(sub)
        for choice in sub._choices_actions:  # argparse's record of each sub-command's name and help
            found.append((getattr(module, "ORDER", 50), path.stem, choice.dest, str(choice.help)))
    return [(name, help, stem) for _, stem, name, help in sorted(found, key=lambda f: (f[0], f[1]))]


def test_table_equals_what_the_modules_register() -> None:
    assert list(cli.COMMANDS) == _registered()


def test_table_lists_every_command_module() -> None:
    assert sorted({module for _, _, module in cli.COMMANDS}) == cli.command_names()


def _subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return action


def test_top_level_help_is_the_same_with_or_without_the_modules() -> None:
    full = cli.build_parser()  # every module registered (what completion reads)
    light = cli.build_parser(only="")
    assert light.format_help() == full.format_help()
    assert list(_subcommands(light).choices) == list(_subcommands(full).choices)


@pytest.mark.parametrize(
    ("argv", "word"),
    [
        ([], ""),
        (["--version"], ""),
        (["-h"], ""),
        (["validate", "x.yaml"], "validate"),
        (["--help", "diff", "a", "b"], "diff"),
        (["--", "plan", "-"], "plan"),
        (["-"], "-"),
        (["nosuch"], "nosuch"),
    ],
)
def test_command_word(argv: list[str], word: str) -> None:
    assert cli.command_word(argv) == word


_RUN = """
import contextlib, io, json, sys
from generator import cli
out = io.StringIO()
try:
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = cli.main(json.loads(sys.argv[1]))
except SystemExit as exc:
    code = exc.code
loaded = sorted(m for m in sys.modules if m.startswith("generator.commands.") and m != "generator.commands._common")
sys.stderr.write(json.dumps({"code": code, "commands": loaded, "out": out.getvalue()}))
"""


def _run(*argv: str) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", _RUN, json.dumps(argv)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stderr)


def test_a_command_imports_only_its_own_module() -> None:
    result = _run("validate", "--help")
    assert result["code"] == 0
    assert result["commands"] == ["generator.commands.validate"]
    assert "--fail-on" in str(result["out"])  # the real parser of validate, not a name-only one


def test_help_and_version_import_no_command_module() -> None:
    for argv in (["--help"], ["--version"], ["--vers"]):
        result = _run(*argv)
        assert result["code"] == 0
        assert result["commands"] == []
    assert _run("--version")["out"] == _run("--vers")["out"]  # the short path prints argparse's text


def test_unknown_command_is_refused_with_the_list() -> None:
    result = _run("valdate", "x.yaml")
    assert result["code"] == 2
    assert "invalid choice: 'valdate'" in str(result["out"])
    assert "'validate'" in str(result["out"])
    assert result["commands"] == []


def test_a_command_being_run_gets_its_own_parser_only() -> None:
    """`blueprint validate ...` builds the validate parser alone; top-level help, even with a command after
    it, and a misspelt command still see every command's name."""
    assert list(_subcommands(cli.build_parser(only="validate")).choices) == ["validate"]
    names = [name for name, _, _ in cli.COMMANDS]
    assert list(_subcommands(cli.build_parser(only="validatee")).choices) == names
    top = cli.build_parser(only="diff", top_help=True)
    assert list(_subcommands(top).choices) == names
    assert top.format_help() == cli.build_parser(only="").format_help()


def test_help_before_a_command_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        cli.main(["--help", "diff", "a", "b"])
    assert stop.value.code == 0
    listed = capsys.readouterr().out
    assert all(f"    {name} " in listed or f"    {name}\n" in listed for name, _, _ in cli.COMMANDS)
