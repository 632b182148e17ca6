"""`blueprint explain ID`: what a rule or diagnostic checks, why, how to fix."""

from __future__ import annotations

import argparse

from generator.commands._common import add_common, command, console, err_console, print_table, write_text
from generator.report import dumps

TYPE_CHECKING = (
    False  # start-up: heavy modules are imported in run() (generator/cli.py); mypy reads this as True
)
if TYPE_CHECKING:
    from generator.diagnostics import Diagnostic
    from generator.rules.base import Rule

ORDER = 30


def register(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "explain", "explain a rule or diagnostic id (or --list them all)")
    p.add_argument(
        "rule", nargs="?", metavar="ID", help="rule or diagnostic id as printed, e.g. NET003, CAT001"
    )
    p.add_argument("--list", action="store_true", help="list every rule and diagnostic id")
    add_common(p)
    p.set_defaults(func=run)


def known_ids() -> list[str]:
    """Every id the tool can print: the rules and the other diagnostics."""
    from generator.diagnostics import DIAGNOSTICS
    from generator.rules.registry import all_rules

    return sorted([r.id for r in all_rules()] + list(DIAGNOSTICS))


def _entry(item: type[Rule] | Diagnostic) -> dict[str, str]:
    doc = item.doc() if isinstance(item, type) else item.doc
    return {
        "id": item.id,
        "severity": str(item.severity),
        "title": item.title,
        "doc": doc,
        "why": item.rationale,
        "fix": item.fix,
    }


def run(args: argparse.Namespace) -> int:
    from rich.markup import escape
    from rich.table import Table

    from generator.diagnostics import DIAGNOSTICS, RENAMED, diagnostic_by_id
    from generator.rules.registry import all_rules, rule_by_id

    items: list[type[Rule] | Diagnostic] = [*all_rules(), *DIAGNOSTICS.values()]
    if args.list or not args.rule:
        items.sort(key=lambda i: i.id)
        if args.format == "json":
            write_text(dumps([_entry(i) for i in items]), args.output)
            return 0
        table = Table("id", "severity", "title")
        for i in items:
            table.add_row(i.id, str(i.severity), i.title)
        print_table(table)
        return 0
    wanted = args.rule.upper()
    renamed = RENAMED.get(wanted)
    item = rule_by_id(renamed or wanted) or diagnostic_by_id(renamed or wanted)
    if item is None:
        import difflib

        close = difflib.get_close_matches(wanted, known_ids(), n=1)
        err_console.print(
            f"unknown rule or diagnostic `{escape(args.rule)}`"
            + (f"; did you mean `{close[0]}`?" if close else "")
            + " (`blueprint explain --list` lists them all)"
        )
        return 2
    if renamed and not args.quiet:
        err_console.print(f"{wanted} is now spelt {renamed}")
    entry = _entry(item)
    if args.format == "json":
        write_text(dumps(entry), args.output)
        return 0
    text = (
        f"{entry['id']} ({entry['severity']}) — {entry['title']}\n\n{entry['doc']}\n\n"
        f"Why: {entry['why']}\nFix: {entry['fix']}\n"
    )
    if isinstance(item, type) and item.tags:
        text += f"tags: {', '.join(item.tags)}\n"
    if args.output not in (None, "-"):
        write_text(text, args.output)
    else:
        console.print(escape(text), end="")
    return 0
