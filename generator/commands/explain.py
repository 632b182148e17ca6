"""`blueprint explain RULE`: what a rule checks, why, how to fix."""

from __future__ import annotations

import argparse

from rich.markup import escape
from rich.table import Table

from generator.commands._common import console, err_console
from generator.rules.registry import all_rules, rule_by_id

ORDER = 30


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("explain", help="explain a rule (or --list them all)")
    p.add_argument("rule", nargs="?", help="rule id, e.g. NET003")
    p.add_argument("--list", action="store_true", help="list every rule")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.list or not args.rule:
        table = Table("id", "severity", "title")
        for r in all_rules():
            table.add_row(r.id, str(r.severity), r.title)
        console.print(table)
        return 0
    rule = rule_by_id(args.rule)
    if rule is None:
        import difflib

        close = difflib.get_close_matches(args.rule.upper(), [r.id for r in all_rules()], n=1)
        err_console.print(
            f"unknown rule `{escape(args.rule)}`" + (f"; did you mean `{close[0]}`?" if close else "")
        )
        return 2
    console.print(f"[bold]{rule.id}[/] ({rule.severity}) — {escape(rule.title)}\n")
    console.print(escape(rule.doc()) + "\n")
    console.print(f"[bold]Why:[/] {escape(rule.rationale)}")
    console.print(f"[bold]Fix:[/] {escape(rule.fix)}")
    if rule.tags:
        console.print(f"[dim]tags: {', '.join(rule.tags)}[/]")
    return 0
