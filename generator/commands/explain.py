"""`blueprint explain ID`: what a rule or diagnostic checks, why, how to fix."""

from __future__ import annotations

import argparse
import sys

from generator.commands._common import (
    add_common,
    check_outputs,
    command,
    err_console,
    print_table,
    text_output,
    write_text,
)
from generator.report import dumps

TYPE_CHECKING = (
    False  # start-up: heavy modules are imported in run() (generator/cli.py); mypy reads this as True
)
if TYPE_CHECKING:
    from generator.rule_index import Entry

ORDER = 30


def register(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "explain", "explain a rule or diagnostic id (or --list them all)")
    p.add_argument(
        "rule", nargs="?", metavar="ID", help="rule or diagnostic id as printed, e.g. NET003, CAT001"
    )
    p.add_argument("--list", action="store_true", help="list every rule and diagnostic id")
    add_common(p)
    p.set_defaults(func=run)


def _public(entry: Entry) -> dict[str, str]:
    """An entry as `--format json` prints it (the tags are in the text form only)."""
    return {k: v for k, v in entry.items() if isinstance(v, str)}


def run(args: argparse.Namespace) -> int:
    # the index of every id, cached between processes: printing one never imports the rules (issue 32)
    from generator.rule_index import load_index

    check_outputs([("-o", args.output)], [], force=args.force)
    index = load_index()
    if args.list or not args.rule:
        return _list(sorted(index.entries, key=lambda e: e["id"]), args)
    wanted = args.rule.upper()
    renamed = index.renamed.get(wanted)
    entry = index.find(renamed or wanted)
    if entry is None:
        return _unknown(args.rule, wanted, index.ids())
    if renamed and not args.quiet:
        sys.stderr.write(f"{wanted} is now spelt {renamed}\n")  # plain: no Rich for one line
    if args.format == "json":
        write_text(dumps(_public(entry)), args.output, replace=args.force)
        return 0
    text = (
        f"{entry['id']} ({entry['severity']}) — {entry['title']}\n\n{entry['doc']}\n\n"
        f"Why: {entry['why']}\nFix: {entry['fix']}\n"
    )
    if entry["tags"]:
        text += f"tags: {', '.join(entry['tags'])}\n"
    # plain text (the console would print it unwrapped, soft_wrap)
    write_text(text, args.output, replace=args.force)
    return 0


def _list(entries: list[Entry], args: argparse.Namespace) -> int:
    if args.format == "json":
        write_text(dumps([_public(e) for e in entries]), args.output, replace=args.force)
        return 0
    from rich.table import Table

    table = Table("id", "severity", "title")
    for e in entries:
        table.add_row(e["id"], e["severity"], e["title"])
    # -o FILE: the table goes there, as every command's -o
    with text_output(args.output, replace=args.force) as out:
        print_table(table, out)
    return 0


def _unknown(given: str, wanted: str, ids: list[str]) -> int:
    import difflib

    from generator.report import safe

    close = difflib.get_close_matches(wanted, ids, n=1)
    err_console.print(
        f"unknown rule or diagnostic `{safe(given)}`"
        + (f"; did you mean `{close[0]}`?" if close else "")
        + " (`blueprint explain --list` lists them all)"
    )
    return 2
