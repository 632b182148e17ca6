"""`blueprint generate FILE -o build/`: every output in one atomic, reproducible build."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from generator.build import BuildRefused, generate
from generator.commands._common import console, err_console
from generator.emit import OUTPUTS
from generator.fsutil import OutputRefused
from generator.pipeline import check
from generator.report import safe, summary_line, text_report

ORDER = 5


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "generate", help="validate, then write every output (cabling, ansible, pulumi, slurm, ...)"
    )
    p.add_argument("file")
    p.add_argument("-o", "--output", default="build", help="build directory (default: build/)")
    p.add_argument("--only", help=f"comma list of outputs: {','.join(OUTPUTS)}")
    p.add_argument(
        "--overwrite-edited", action="store_true", help="replace files changed by hand since the last build"
    )
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    checked = check(args.file)
    if checked.errors:
        text_report(checked.findings, err_console)
        err_console.print(f"[bold red]not generating[/]: {summary_line(checked.findings)} (nothing written)")
        if args.format == "json":
            print(json.dumps({"ok": False, "findings": [f.as_dict() for f in checked.findings]}, indent=2))
        return 1
    only = [o.strip() for o in args.only.split(",") if o.strip()] if args.only else None
    out = Path(args.output)
    show = not args.quiet and args.format == "text"
    try:
        if show:
            with Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                TimeElapsedColumn(),
                console=err_console,
                transient=True,
            ) as bar:
                task = bar.add_task("planning", total=None)
                result = generate(
                    checked,
                    out,
                    only,
                    args.overwrite_edited,
                    progress=lambda name: bar.update(task, description=f"writing {name}/"),
                )
        else:
            result = generate(checked, out, only, args.overwrite_edited)
    except BuildRefused as exc:
        err_console.print(f"[bold red]refused[/]: {safe(exc)}")
        return 1
    except OutputRefused as exc:
        err_console.print(f"[bold red]refused[/]: {safe(exc)} (nothing written)")
        return 2
    if args.format == "json":
        print(
            json.dumps(
                {
                    "ok": True,
                    "output": str(out),
                    "outputs": result.outputs,
                    "skipped": result.skipped,
                    "files": len(result.files),
                },
                indent=2,
            )
        )
    elif not args.quiet:
        if checked.findings:
            text_report(checked.findings, err_console)
        console.print(f"wrote {len(result.files)} files to {safe(out)}/ ({', '.join(result.outputs)})")
        for name, why in result.skipped.items():
            console.print(f"  skipped {name}/: {why}")
    return 0
