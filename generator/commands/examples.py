"""`blueprint examples [NAME]`: list the shipped example blueprints, or copy one (or all) to start from.

The examples ship inside the wheel (pyproject force-include), so an installed `blueprint` reaches them
without a source checkout. Existing files are never replaced unless --force is given (check_outputs, as
for every command).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from generator.commands._common import (
    add_common,
    check_outputs,
    command,
    err_console,
    note,
    print_table,
    text_output,
    write_text,
)
from generator.resources import examples_dir

ORDER = 6


def escape(text: str) -> str:
    """Rich's markup escape, imported on use: Rich costs more start-up than the rest of the CLI."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "examples",
        "list the shipped example blueprints, or copy one (or --all) to start from",
        description="List the example blueprints shipped with cluster-blueprint (one per interconnect, "
        "fabric, topology and deployment target), or copy one: `blueprint examples superpod-h100-4su -o "
        "my.yaml`; without -o the example is printed.",
    )
    p.add_argument("name", nargs="?", metavar="EXAMPLE", help="example to copy or print (see the list)")
    p.add_argument("--all", action="store_true", help="copy every example into the -o directory")
    add_common(
        p,
        formats=("text", "json", "yaml"),
        format_help="text/json: the list; yaml: an example's text",
        output_help="file (or, with --all, directory) to copy to; - or none prints",
        force_help="replace the -o file if it exists (with --all: the files of those names in the directory)",
    )
    p.set_defaults(func=run)


def shipped() -> dict[str, Path]:
    return {p.stem: p for p in sorted(examples_dir().glob("*.yaml"))}


def summary(path: Path) -> str:
    """The example's first comment line: what it demonstrates."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#") and "yaml-language-server" not in line and line.strip("# "):
            return line.lstrip("# ").strip()
    return ""


def run(args: argparse.Namespace) -> int:
    examples = shipped()
    if args.all:
        return _copy_all(args, examples)
    check_outputs([("-o", args.output)], [], force=args.force)  # the list too: `-o list.txt` replaced it
    if args.name is None:
        return _list(args, examples)
    path = examples.get(args.name.removesuffix(".yaml"))
    if path is None:
        import difflib

        close = difflib.get_close_matches(args.name, list(examples), n=1)
        err_console.print(
            f"[bold red]examples[/]: no example `{escape(args.name)}`"
            + (f"; did you mean `{close[0]}`?" if close else "")
            + " (`blueprint examples` lists them)"
        )
        return 2
    write_text(path.read_text(encoding="utf-8"), args.output, replace=args.force)
    if args.output not in (None, "-"):
        note(args, f"copied {path.stem} to {args.output}; next: `blueprint validate {args.output}`")
    return 0


def _list(args: argparse.Namespace, examples: dict[str, Path]) -> int:
    if args.format == "json":
        write_text(
            json.dumps({k: summary(p) for k, p in examples.items()}, indent=2) + "\n",
            args.output,
            replace=args.force,
        )
        return 0
    from rich.table import Table

    table = Table("example", "what it shows", title="shipped examples (`blueprint examples NAME -o FILE`)")
    for name, path in examples.items():
        table.add_row(name, summary(path))
    with text_output(args.output, replace=args.force) as out:
        print_table(table, out)
    return 0


def _copy_all(args: argparse.Namespace, examples: dict[str, Path]) -> int:
    if args.output in (None, "-"):
        err_console.print("[bold red]examples[/]: --all needs -o DIR")
        return 2
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        err_console.print(f"[bold red]examples[/]: {escape(str(out))} is not a directory")
        return 2
    targets = {out / p.name: p for p in examples.values()}
    clash = [t for t in targets if t.exists()]
    if clash and not args.force:
        err_console.print(
            f"[bold red]examples[/]: {len(clash)} file(s) exist in {escape(str(out))} "
            f"(e.g. {escape(clash[0].name)}); add --force to replace them"
        )
        return 2
    from generator.fsutil import atomic_write_text

    out.mkdir(parents=True, exist_ok=True)
    for target, source in targets.items():
        atomic_write_text(target, source.read_text(encoding="utf-8"), replace=args.force)
    note(args, f"copied {len(targets)} examples to {out}/")
    return 0
