"""Renders findings as text (Rich), JSON or SARIF."""

from __future__ import annotations

from generator.safetext import terminal

# Rich, json and the findings model are imported where they are used: every command module imports
# `safe` or `dumps` from here, and `blueprint --help` must not pay for them
# (tests/cli/test_startup_imports.py).
TYPE_CHECKING = False  # typing itself costs start-up time; mypy treats this name as True
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from rich.console import Console

    from generator.findings import Finding, Severity


def _style(severity: Severity) -> str:
    from generator.findings import Severity

    return {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}[severity]


def safe(text: object) -> str:
    """Any text for a Rich console: control/escape sequences removed, ``[...]`` shown, never markup."""
    from rich.markup import escape

    return escape(terminal(str(text)))


# emoji=False: a finding's text is data; Rich would otherwise turn `:100:` (a location on line 100) or
# `:smile:` in a message into an emoji.
def text_report(findings: Iterable[Finding], console: Console) -> None:
    for f in findings:
        loc = f"{f.location}: " if f.location else ""
        console.print(
            f"{safe(loc)}[{_style(f.severity)}]{f.severity}[/] [bold]{f.rule}[/] {safe(f.message)}",
            highlight=False,
            soft_wrap=True,
            emoji=False,
        )
        if f.hint:
            console.print(f"    [dim]hint:[/] {safe(f.hint)}", highlight=False, soft_wrap=True, emoji=False)


def plain_text_report(findings: Iterable[Finding]) -> str | None:
    """What :func:`text_report` prints on a console without colour (not a terminal), made without
    importing Rich (~40 ms of a short command's CPU); None when Rich would print something else."""
    out: list[str] = []
    for f in findings:
        loc, message = plain(f"{f.location}: " if f.location else ""), plain(f.message)
        hint = plain(f.hint) if f.hint else ""
        if loc is None or message is None or hint is None:
            return None
        out.append(f"{loc}{f.severity} {f.rule} {message}\n")
        if f.hint:
            out.append(f"    hint: {hint}\n")
    return "".join(out)


def plain(text: str) -> str | None:
    """What Rich prints for ``safe(text)`` without colour, or None where it would not print the text as
    it is: it expands tabs by cell widths, drops the backslash of a ``\\[`` that is no markup and
    doubles a trailing backslash (tests/cli/test_validate_plain_text.py compares the two)."""
    shown = terminal(text)
    return None if "\t" in shown or "\\[" in shown or shown.endswith("\\") else shown


def summary_line(findings: list[Finding]) -> str:
    from generator.findings import Severity

    counts = {s: sum(1 for f in findings if f.severity == s) for s in Severity}
    return (
        f"{counts[Severity.ERROR]} error(s), {counts[Severity.WARNING]} warning(s), "
        f"{counts[Severity.INFO]} info"
    )


def sarif(results: dict[str, list[Finding]], version: str) -> dict[str, Any]:
    from generator.rules.registry import all_rules

    rules = [
        {
            "id": r.id,
            "name": r.title,
            "shortDescription": {"text": r.title},
            "fullDescription": {"text": r.rationale},
            "help": {"text": f"{r.doc()}\n\nFix: {r.fix}"},
            "defaultConfiguration": {"level": _level(r.severity)},
        }
        for r in all_rules()
    ]
    out_results = []
    for file, findings in results.items():
        for f in findings:
            loc = f.location
            out_results.append(
                {
                    "ruleId": f.rule,
                    "level": _level(f.severity),
                    "message": {"text": f.message + (f" (hint: {f.hint})" if f.hint else "")},
                    "locations": [
                        {
                            "physicalLocation": {
                                "artifactLocation": {"uri": loc.file if loc else file},
                                "region": {
                                    "startLine": loc.line if loc else 1,
                                    "startColumn": loc.column if loc else 1,
                                },
                            }
                        }
                    ],
                }
            )
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "cluster-blueprint", "version": version, "rules": rules}},
                "results": out_results,
            }
        ],
    }


def _level(sev: Severity) -> str:
    from generator.findings import Severity

    return {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}[sev]


def dumps(data: Any, sort_keys: bool = False) -> str:
    """JSON text; a lone surrogate (a byte of a file name that is not UTF-8, as os.fsdecode keeps it), which
    no UTF-8 output can hold, is written as its ``\\udcXX`` escape, as ``ensure_ascii`` would write it."""
    import json
    import re

    text = json.dumps(data, indent=2, sort_keys=sort_keys, ensure_ascii=False) + "\n"
    return re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m[0]):04x}", text)
