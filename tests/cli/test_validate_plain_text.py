"""`validate`'s text report to a pipe or file is written without Rich, byte for byte what Rich prints.

Rich costs ~40 ms of CPU to import and set up, a tenth of `validate` (issue 32); when stdout is not a
terminal it prints no styles, so the report is plain text that generator/report.py
(`plain_text_report`) and generator/commands/validate.py (`_plain_text`) write directly. Each test here
prints the same findings both ways, through the real Rich console, and compares the bytes: on every
shipped example, and on random findings built from what Rich treats specially (markup brackets,
backslashes, emoji codes, tabs, newlines, wide and combining characters, control characters).
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

import pytest

from generator.commands import validate
from generator.findings import Finding, Location, Severity
from generator.pipeline import check

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))


def _both(
    results: dict[str, list[Finding]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    **kw: object,
) -> tuple[str, str, bool]:
    """(plain, Rich, whether the plain path was taken) for the text report of ``results``."""
    args = argparse.Namespace(format="text", output=None, force=False, quiet=False, **kw)
    fail_on = Severity.parse("error")
    took = validate._plain_stdout(args) and validate._plain_text(results, args, fail_on) is not None
    validate._report(results, args, fail_on)
    plain = capsys.readouterr().out
    with monkeypatch.context() as m:
        m.setattr(validate, "_plain_stdout", lambda _args: False)
        validate._report(results, args, fail_on)
    return plain, capsys.readouterr().out, took


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
@pytest.mark.parametrize("quiet", [False, True])
def test_every_example_prints_what_rich_prints(
    example: Path, quiet: bool, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    results = {str(example.relative_to(ROOT)): check(example).findings}
    args = argparse.Namespace(format="text", output=None, force=False, quiet=quiet)
    fail_on = Severity.parse("warning")  # with -q, what is left to print
    assert validate._plain_stdout(args) and validate._plain_text(results, args, fail_on) is not None
    validate._report(results, args, fail_on)
    plain = capsys.readouterr().out
    with monkeypatch.context() as m:
        m.setattr(validate, "_plain_stdout", lambda _args: False)
        validate._report(results, args, fail_on)
    assert plain == capsys.readouterr().out


PIECES = [
    "a",
    "Z",
    "0",
    "100",
    "1234",
    " ",
    "  ",
    ":",
    "::",
    ":smile:",
    ":100:",
    ":thumbs_up:",
    ":red_heart-emoji:",
    "[",
    "]",
    "[b]",
    "[/]",
    "[bold red]",
    "[link=x]",
    "[0]",
    "[@click]",
    "[#fff]",
    "\\",
    "\\[",
    "\\\\[b]",
    "\t",
    "\n",
    "—",
    "×",
    "é",
    "e\u0301",
    "中文",
    "\u200b",
    "\u2028",
    "\x1b[31m",
    "\x07",
    "\r",
    "\x7f",
    "pools[0].ports",
    "https://x.example/a:b:c",
    "fe80::1%eth0",
    "`x`",
    "*",
    "_",
    "~",
    "-",
]


# Rich alone prints these: most cases leave them out, so that the plain path is tested as often
SOFT = [p for p in PIECES if "\\" not in p and "\t" not in p]


def _text(rng: random.Random) -> str:
    pieces = PIECES if rng.random() < 0.3 else SOFT
    return "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))


def _finding(rng: random.Random) -> Finding:
    location = (
        Location(_text(rng) or "f.yaml", rng.randint(1, 200), rng.randint(1, 120))
        if rng.random() < 0.8
        else None
    )
    hint = _text(rng) if rng.random() < 0.6 else None
    severity = rng.choice([Severity.ERROR, Severity.WARNING, Severity.INFO])
    return Finding(
        rng.choice(["NET019", "PWR005", "LOAD002", "SUP001"]), severity, _text(rng), (), hint, location
    )


def test_random_findings_print_what_rich_prints(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(32)
    taken = 0
    for _ in range(400):
        results = {
            rng.choice(["bp.yaml", "dir/x.yaml", _text(rng) or "y.yml"]): [_finding(rng) for _ in range(3)]
        }
        plain, rich, took = _both(results, capsys, monkeypatch)
        assert plain == rich, results
        taken += took
    assert 100 < taken < 400  # both paths exercised: the plain path was exercised, not only the fallback


def test_emoji_codes_are_printed_as_written(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Rich's default would print `bp.yaml💯3:` for a finding on line 100
    results = {
        "bp.yaml": [Finding("NET019", Severity.WARNING, "say :smile:", (), None, Location("bp.yaml", 100, 3))]
    }
    plain, rich, took = _both(results, capsys, monkeypatch)
    assert took and plain == rich
    assert plain.startswith("bp.yaml:100:3: warning NET019 say :smile:\n")


def test_a_terminal_or_forced_colour_gets_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    args = argparse.Namespace(output=None)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    assert validate._plain_stdout(args)
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert not validate._plain_stdout(args)
    monkeypatch.delenv("FORCE_COLOR")
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    assert not validate._plain_stdout(args)
    monkeypatch.delenv("TTY_COMPATIBLE")
    assert not validate._plain_stdout(argparse.Namespace(output="report.txt"))
    monkeypatch.setattr("sys.stdout.isatty", lambda: True, raising=False)
    assert not validate._plain_stdout(args)


@pytest.mark.parametrize("force_colour", [False, True])
def test_a_file_name_is_not_markup(
    tmp_path: Path, force_colour: bool, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from generator.cli import main

    (tmp_path / "x[").mkdir()
    blueprint = tmp_path / "x[" / "]y.yaml"  # the path holds `[/]`, Rich's closing tag
    blueprint.write_bytes((ROOT / "examples" / "single-dgx-h100.yaml").read_bytes())
    if force_colour:  # Rich prints (with styles): the name must still be text
        monkeypatch.setenv("FORCE_COLOR", "1")
    assert main(["validate", str(blueprint)]) == 0
    assert f"{blueprint}: " in capsys.readouterr().out.replace("\x1b[0m", "").replace("\x1b[32m", "")
