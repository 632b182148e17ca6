"""`blueprint validate FILE...`: schema and performance rules, located findings."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from generator import __version__
from generator.commands._common import console, err_console
from generator.findings import BlueprintError, Finding, Severity
from generator.pipeline import check
from generator.report import dumps, sarif, summary_line, text_report

ORDER = 10


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("validate", help="check blueprints against the schema and the performance rules")
    p.add_argument("files", nargs="+", help="blueprint YAML files (or directories of them)")
    p.add_argument("--format", choices=["text", "json", "sarif"], default="text")
    p.add_argument(
        "--fail-on",
        choices=["error", "warning", "info"],
        default="error",
        help="lowest severity that makes the exit code 1 (default: error)",
    )
    p.add_argument("-o", "--output", help="write the report to a file")
    p.set_defaults(func=run)


def _expand(files: list[str]) -> list[Path]:
    out: list[Path] = []
    for f in files:
        p = Path(f)
        if p.is_dir():
            out.extend(sorted([*p.glob("*.yaml"), *p.glob("*.yml")]))
        else:
            out.append(p)
    return out


def run(args: argparse.Namespace) -> int:
    fail_on = Severity.parse(args.fail_on)
    results: dict[str, list[Finding]] = {}
    unusable = False
    rule_failure = False
    for path in _expand(args.files):
        try:
            findings = check(path).findings
        except BlueprintError as exc:
            findings = exc.findings
            unusable = True
        results[str(path)] = findings
        if any(
            f.severity >= fail_on
            for f in findings
            if f.rule not in ("SCHEMA",) and not f.rule.startswith(("LOAD", "CAT"))
        ):
            rule_failure = True
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
        _emit(dumps(payload), args.output)
    elif args.format == "sarif":
        _emit(json.dumps(sarif(results, __version__), indent=2) + "\n", args.output)
    else:
        for file, fs in results.items():
            text_report(fs, console)
            state = "[red]invalid[/]" if any(f.severity == Severity.ERROR for f in fs) else "[green]valid[/]"
            console.print(f"{file}: {state} — {summary_line(fs)}")
    if unusable:
        return 2
    return 1 if rule_failure else 0


def _emit(text: str, output: str | None) -> None:
    from generator.commands._common import write_text

    write_text(text, output)
    if output:
        err_console.print(f"report written to {output}")
