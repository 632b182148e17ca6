"""`blueprint generate FILE -o build/`: every output in one atomic, reproducible build."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from generator.commands._common import add_blueprint, add_common, command, console, err_console
from generator.emit import OUTPUTS  # a tuple in a module that imports no emitter until asked
from generator.report import safe, summary_line, text_report

TYPE_CHECKING = (
    False  # start-up: heavy modules are imported in run() (generator/cli.py); mypy reads this as True
)
if TYPE_CHECKING:
    from generator.build import BuildResult
    from generator.findings import Finding
    from generator.pipeline import Checked

ORDER = 5


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "generate",
        "validate, then write every output (cabling, ansible, pulumi, slurm, ...)",
        description="Validate the blueprint, then write every output into one build directory, atomically "
        "and reproducibly, with a manifest of file hashes. Nothing is written when validation finds "
        "errors.",
    )
    add_blueprint(p)
    p.add_argument("--only", metavar="LIST", help=f"comma list of outputs: {','.join(OUTPUTS)}")
    p.add_argument(
        "--overwrite-edited", action="store_true", help="replace files changed by hand since the last build"
    )
    add_common(
        p,
        format_help="text: progress and a summary; json: one result object on stdout",
        output_help="build directory (default: build/)",
        output_metavar="DIR",
        output_default="build",
        force_help=None,  # a build folder is replaced whole (a folder that is not one is refused): no --force
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from generator.build import BuildRefused
    from generator.fsutil import OutputRefused
    from generator.pipeline import check

    if args.output == "-":
        err_console.print("[bold red]generate[/]: -o takes a directory; the build has many files")
        return 2
    checked = check(args.blueprint)
    if checked.errors:
        text_report(checked.findings, err_console)
        err_console.print(f"[bold red]not generating[/]: {summary_line(checked.findings)} (nothing written)")
        if args.format == "json":
            print(json.dumps({"ok": False, **_counts(checked.findings)}, indent=2))
        return 1
    out = Path(args.output)
    try:
        result = _build(checked, out, args)
    except BuildRefused as exc:
        err_console.print(f"[bold red]refused[/]: {safe(exc)}")
        return 1
    except OutputRefused as exc:
        err_console.print(f"[bold red]refused[/]: {safe(exc)} (nothing written)")
        return 2
    _summary(checked, result, out, args)
    return 0


def _build(checked: Checked, out: Path, args: argparse.Namespace) -> BuildResult:
    """Every output, with a progress line on a terminal."""
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from generator.build import generate

    only = [o.strip() for o in args.only.split(",") if o.strip()] if args.only else None
    if args.quiet or args.format != "text":
        return generate(checked, out, only, args.overwrite_edited)
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    ) as bar:
        task = bar.add_task("planning", total=None)
        return generate(
            checked,
            out,
            only,
            args.overwrite_edited,
            progress=lambda name: bar.update(task, description=f"writing {name}/"),
        )


def _summary(checked: Checked, result: BuildResult, out: Path, args: argparse.Namespace) -> None:
    if args.format == "json":
        payload = {
            "ok": True,
            "output": str(out),
            "outputs": result.outputs,
            "skipped": result.skipped,
            "files": len(result.files),
            **_counts(checked.findings),
        }
        print(json.dumps(payload, indent=2))
    elif not args.quiet:
        if checked.findings:
            text_report(checked.findings, err_console)
        console.print(f"wrote {len(result.files)} files to {safe(out)}/ ({', '.join(result.outputs)})")
        for name, why in result.skipped.items():
            console.print(f"  skipped {name}/: {why}")


def _counts(findings: list[Finding]) -> dict[str, object]:
    """The findings and their counts by severity, as `validate --format json` reports them."""
    from generator.findings import Severity

    return {
        "errors": sum(1 for f in findings if f.severity == Severity.ERROR),
        "warnings": sum(1 for f in findings if f.severity == Severity.WARNING),
        "infos": sum(1 for f in findings if f.severity == Severity.INFO),
        "findings": [f.as_dict() for f in findings],
    }
