"""`blueprint validate FILE...`: schema and performance rules, located findings."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from generator.commands._common import (
    add_blueprint,
    add_common,
    command,
    note,
    text_output,
    write_text,
)

if TYPE_CHECKING:
    from generator.findings import Finding, Severity

ORDER = 10


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "validate",
        "check blueprints against the schema and the performance rules",
        description="Check blueprints against the schema and the performance rules; every finding is "
        "located (file:line:col) and has an id `blueprint explain` describes.\n"
        "Directories are searched for *.yaml/*.yml; `catalog:` side files (hardware catalogue "
        "extensions) are skipped, as they are not blueprints.",
    )
    add_blueprint(
        p, many=True, help="blueprint YAML files or directories of them (- reads one from standard input)"
    )
    p.add_argument(
        "--fail-on",
        choices=["error", "warning", "info"],
        default="error",
        help="lowest severity that makes the exit code 1 (default: error)",
    )
    add_common(p, formats=("text", "json", "sarif"), output_help="write the report to this file")
    p.set_defaults(func=run)


def _expand(files: list[str]) -> list[Path]:
    """The files to check: each file named, and the *.yaml/*.yml of each directory named."""
    out: list[Path] = []
    for f in files:
        p = Path(f)
        out.extend(sorted([*p.glob("*.yaml"), *p.glob("*.yml")]) if p.is_dir() else [p])
    return out


def is_catalog_file(path: Path) -> bool:
    """A `catalog:` side file: a mapping of catalogue sections only, with no blueprint key."""
    if str(path) == "-" or not path.is_file() or path.stat().st_size > 4 * 1024 * 1024:
        return False
    from blueprints.catalog.load import SECTIONS
    from generator.findings import BlueprintError
    from generator.foreign import read_foreign_text
    from generator.load import MAX_BYTES, parse_yaml

    try:  # the loader's own bounded read and parse: a hostile file is reported by the loader, not here
        data = parse_yaml(read_foreign_text(path, MAX_BYTES), str(path)).data
    except (BlueprintError, UnicodeDecodeError, OSError, ValueError, RecursionError):
        return False  # not readable YAML: let the loader report it, located
    return isinstance(data, Mapping) and bool(data) and set(data) <= {*SECTIONS, "cloud"}


def run(args: argparse.Namespace) -> int:
    from generator.findings import Severity  # the model and the pipeline load only when a command runs

    fail_on = Severity.parse(args.fail_on)
    paths = _expand(args.blueprint)
    if not paths:
        from generator.commands._common import err_console

        err_console.print(
            f"[bold red]validate[/]: no *.yaml or *.yml blueprints in {', '.join(args.blueprint)}"
        )
        return 2
    from generator.commands._common import check_outputs

    # `validate bp.yaml -o bp.yaml` replaced the blueprint with the report (exit 0); an existing -o without
    # --force is refused before any blueprint is read, not seconds later
    check_outputs([("-o", args.output)], [("BLUEPRINT", str(p)) for p in paths], force=args.force)
    from generator.gcpause import gc_paused

    with gc_paused():  # loading the model, catalogue and rules makes no garbage cycles worth a pass (~17 ms)
        checked = _check_all(paths, fail_on)
    # and no catalogue file a blueprint names, even with --force: `validate bp.yaml -o cat.yaml` replaced it
    check_outputs([("-o", args.output)], checked.inputs, force=args.force)
    for path in checked.skipped:
        note(args, f"{path}: skipped, a hardware catalogue file (named by `catalog:`), not a blueprint")
    _report(checked.results, args, fail_on)
    if checked.unusable:
        return 2
    return 1 if checked.rule_failure else 0


class _Checked(NamedTuple):
    results: dict[str, list[Finding]]  # findings per blueprint
    skipped: list[Path]  # catalogue side files
    unusable: bool  # a blueprint could not be loaded or resolved
    rule_failure: bool  # a rule finding at or above --fail-on
    inputs: list[tuple[str, str | None]]  # the files read: each blueprint that loaded and its catalogue file


def _check_all(paths: list[Path], fail_on: Severity) -> _Checked:
    """Each file checked, or skipped as a catalogue side file.

    A catalogue file is never a blueprint (it has no apiVersion, name or pools), so only a file the loader
    refuses is parsed a second time to tell which it is: a blueprint is parsed once. A blueprint's catalogue
    file is known once it loads, even when resolving it then fails (the report still names it)."""
    from generator.commands._common import blueprint_inputs
    from generator.findings import BlueprintError
    from generator.load import load_file
    from generator.pipeline import check

    out = _Checked({}, [], False, False, [])
    unusable = rule_failure = False
    for path in paths:
        try:
            loaded = load_file(path)
        except BlueprintError as exc:
            if is_catalog_file(path):
                out.skipped.append(path)
                continue
            findings, unusable = exc.findings, True
        else:
            label = "the blueprint on standard input" if str(path) == "-" else f"the blueprint {path}"
            out.inputs.extend(blueprint_inputs(label, loaded))
            try:
                findings = check(loaded).findings
            except BlueprintError as exc:
                findings, unusable = exc.findings, True
        out.results["<stdin>" if str(path) == "-" else str(path)] = findings
        if any(
            f.severity >= fail_on
            for f in findings
            if f.rule not in ("SCHEMA",) and not f.rule.startswith(("LOAD", "CAT"))
        ):
            rule_failure = True
    return out._replace(unusable=unusable, rule_failure=rule_failure)


def _report(results: dict[str, list[Finding]], args: argparse.Namespace, fail_on: Severity) -> None:
    from generator import __version__
    from generator.findings import Severity
    from generator.report import dumps, safe, sarif, summary_line, text_report

    if args.format == "json":
        payload = {
            "version": __version__,
            "files": [
                {
                    "file": file,
                    "valid": not any(f.severity == Severity.ERROR for f in fs),
                    "findings": [f.as_dict() for f in fs],
                }
                for file, fs in results.items()
            ],
        }
        _emit(dumps(payload), args.output, args)
    elif args.format == "sarif":
        _emit(json.dumps(sarif(results, __version__), indent=2) + "\n", args.output, args)
    else:
        plain = _plain_text(results, args, fail_on) if _plain_stdout(args) else None
        if plain is not None:
            write_text(plain, None, replace=False)  # standard output
            return
        with text_output(args.output, replace=args.force) as out:
            for file, fs in results.items():
                text_report([f for f in fs if not args.quiet or f.severity >= fail_on], out)
                state = (
                    "[red]invalid[/]" if any(f.severity == Severity.ERROR for f in fs) else "[green]valid[/]"
                )
                if not args.quiet or any(f.severity >= fail_on for f in fs):  # a file name is not markup
                    out.print(f"{safe(file)}: {state} — {summary_line(fs)}", emoji=False)


def _plain_stdout(args: argparse.Namespace) -> bool:
    """Whether Rich would print the text report to stdout without styles: not a terminal, and nothing in
    the environment that makes Rich treat it as one (FORCE_COLOR, TTY_COMPATIBLE) or render for Jupyter."""
    if args.output not in (None, "-") or {"FORCE_COLOR", "TTY_COMPATIBLE"} & set(os.environ):
        return False
    if "IPython" in sys.modules:
        return False
    try:
        return not sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def _plain_text(results: dict[str, list[Finding]], args: argparse.Namespace, fail_on: Severity) -> str | None:
    """The text report exactly as Rich prints it to a pipe or file, or None where only Rich can say
    (tests/cli/test_validate_plain_text.py compares the two)."""
    from generator.findings import Severity
    from generator.report import plain, plain_text_report, summary_line

    parts: list[str] = []
    for file, fs in results.items():
        shown = plain_text_report([f for f in fs if not args.quiet or f.severity >= fail_on])
        name = plain(file)
        if shown is None or name is None:
            return None
        parts.append(shown)
        if not args.quiet or any(f.severity >= fail_on for f in fs):
            state = "invalid" if any(f.severity == Severity.ERROR for f in fs) else "valid"
            parts.append(f"{name}: {state} — {summary_line(fs)}\n")
    return "".join(parts)


def _emit(text: str, output: str | None, args: argparse.Namespace) -> None:
    write_text(text, output, replace=args.force)
    if output not in (None, "-"):
        note(args, f"report written to {output}")
