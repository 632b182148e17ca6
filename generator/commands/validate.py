"""`blueprint validate FILE...`: schema and performance rules, located findings."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

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


def _expand(files: list[str]) -> tuple[list[Path], list[Path]]:
    """The blueprints to check, and the catalogue side files skipped among them."""
    out: list[Path] = []
    skipped: list[Path] = []
    for f in files:
        p = Path(f)
        candidates = sorted([*p.glob("*.yaml"), *p.glob("*.yml")]) if p.is_dir() else [p]
        for c in candidates:
            (skipped if is_catalog_file(c) else out).append(c)
    return out, skipped


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
    paths, skipped = _expand(args.blueprint)
    for path in skipped:
        note(args, f"{path}: skipped, a hardware catalogue file (named by `catalog:`), not a blueprint")
    if not paths and not skipped:
        from generator.commands._common import err_console

        err_console.print(
            f"[bold red]validate[/]: no *.yaml or *.yml blueprints in {', '.join(args.blueprint)}"
        )
        return 2
    results, unusable, rule_failure = _check_all(paths, fail_on)
    _report(results, args, fail_on)
    if unusable:
        return 2
    return 1 if rule_failure else 0


def _check_all(paths: list[Path], fail_on: Severity) -> tuple[dict[str, list[Finding]], bool, bool]:
    """Findings per file; whether one was unusable; whether one has a rule finding at ``fail_on``."""
    from generator.findings import BlueprintError
    from generator.pipeline import check

    results: dict[str, list[Finding]] = {}
    unusable = rule_failure = False
    for path in paths:
        try:
            findings = check(path).findings
        except BlueprintError as exc:
            findings = exc.findings
            unusable = True
        results["<stdin>" if str(path) == "-" else str(path)] = findings
        if any(
            f.severity >= fail_on
            for f in findings
            if f.rule not in ("SCHEMA",) and not f.rule.startswith(("LOAD", "CAT"))
        ):
            rule_failure = True
    return results, unusable, rule_failure


def _report(results: dict[str, list[Finding]], args: argparse.Namespace, fail_on: Severity) -> None:
    from generator import __version__
    from generator.findings import Severity
    from generator.report import dumps, sarif, summary_line, text_report

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
        with text_output(args.output) as out:
            for file, fs in results.items():
                text_report([f for f in fs if not args.quiet or f.severity >= fail_on], out)
                state = (
                    "[red]invalid[/]" if any(f.severity == Severity.ERROR for f in fs) else "[green]valid[/]"
                )
                if not args.quiet or any(f.severity >= fail_on for f in fs):
                    out.print(f"{file}: {state} — {summary_line(fs)}")


def _emit(text: str, output: str | None, args: argparse.Namespace) -> None:
    write_text(text, output)
    if output not in (None, "-"):
        note(args, f"report written to {output}")
