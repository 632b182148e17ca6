"""`blueprint diff OLD NEW`: what a change of blueprint means on the floor (day 2).

Exit codes: 0 no physical difference, 1 differences, 2 unusable input (either blueprint).
"""

from __future__ import annotations

import argparse

from generator.commands._common import add_common, check_outputs, command, file_name, note, write_text
from generator.report import dumps

TYPE_CHECKING = (
    False  # start-up: heavy modules are imported in run() (generator/cli.py); mypy reads this as True
)
if TYPE_CHECKING:
    from generator.plan.model import Plan

ORDER = 40
FABRICS = ("compute", "storage", "management")


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "diff",
        "compare two blueprints' physical plans (devices, cables, moves, live or not)",
        description="Compare two blueprints' physical plans: what a change means on the floor (devices and "
        "cables added, removed or moved; whether it can be done live). Exit 0 when the plans are "
        "physically identical, 1 when they differ, 2 when either blueprint cannot be used.",
    )
    p.add_argument(
        "old", metavar="OLD_BLUEPRINT", help="the blueprint as built (- reads it from standard input)"
    )
    p.add_argument(
        "new", metavar="NEW_BLUEPRINT", help="the blueprint to build (- reads it from standard input)"
    )
    p.add_argument(
        "--fabric",
        action="append",
        choices=FABRICS,
        help="compare only this fabric (repeatable; default: every fabric and device)",
    )
    p.add_argument(
        "--work-order",
        metavar="DIR",
        type=file_name,
        help="write the change's cabling work order (CSV, XLSX) to DIR",
    )
    add_common(
        p,
        output_help="write the report to this file instead of standard output",
        force_help="replace the -o file if it exists, and with --work-order the work-order files DIR holds",
    )
    p.set_defaults(func=run)


def _plan(path: str, label: str, inputs: list[tuple[str, str | None]]) -> Plan:
    """The plan of the blueprint at ``path``; the files it was read from are added to ``inputs``."""
    from generator.commands._common import blueprint_inputs
    from generator.pipeline import load_and_resolve
    from generator.plan.build import plan_or_raise

    loaded, cluster = load_and_resolve(path)
    inputs += blueprint_inputs(label, loaded)
    return plan_or_raise(cluster, loaded.locate)


def _check_outputs_spare(args: argparse.Namespace, inputs: list[tuple[str, str | None]]) -> None:
    """The report and the work-order files are none of the files read, the catalogues included (`diff A B
    -o cat.yaml` replaced A's catalogue; `--work-order DIR --force` a blueprint saved as DIR/summary.txt)."""
    from pathlib import Path

    outputs: list[tuple[str, str | None]] = [("-o", args.output)]
    if args.work_order is not None:
        from generator.diff.workorder import WORK_ORDER_FILES

        outputs += [
            (f"--work-order {args.work_order}", str(Path(args.work_order) / n)) for n in WORK_ORDER_FILES
        ]
    check_outputs(outputs, inputs, force=args.force)


def run(args: argparse.Namespace) -> int:
    from generator.diff import compare
    from generator.diff.render import to_json, to_text
    from generator.findings import BlueprintError

    if args.old == args.new == "-":
        from generator.commands._common import err_console

        err_console.print("[bold red]diff[/]: only one of the two blueprints can come from standard input")
        return 2
    # before anything is read or written: `diff A B -o B` replaced the new blueprint with the report, and an
    # existing -o without --force was refused only once both blueprints were planned
    check_outputs(
        [("-o", args.output)], [("OLD_BLUEPRINT", args.old), ("NEW_BLUEPRINT", args.new)], force=args.force
    )
    if args.work_order is not None:
        from generator.diff.workorder import check_work_order_target

        check_work_order_target(args.work_order, args.output, args.force)
    errors = []
    plans: list[Plan] = []
    inputs: list[tuple[str, str | None]] = []
    for path, label in ((args.old, "OLD_BLUEPRINT"), (args.new, "NEW_BLUEPRINT")):
        try:
            plans.append(_plan(path, label, inputs))
        except BlueprintError as exc:  # report both files' problems at once
            errors.extend(exc.findings)
    if errors:
        raise BlueprintError(errors)
    _check_outputs_spare(args, inputs)
    unknown = sorted(set(args.fabric or ()) - {*plans[0].metrics, *plans[1].metrics})
    if unknown:  # a mistyped --fabric compared nothing and reported "0 changed, live"
        from generator.commands._common import err_console

        has = sorted({*plans[0].metrics, *plans[1].metrics})
        err_console.print(
            f"[bold red]diff[/]: neither blueprint has a built {', '.join(f'`{f}`' for f in unknown)} fabric "
            f"(they have: {', '.join(has) or 'none'})",
            markup=True,
            highlight=False,
        )
        return 2
    diff = compare(plans[0], plans[1], args.fabric)
    report = dumps(to_json(diff)) if args.format == "json" else to_text(diff)
    if args.work_order:  # first: a refused folder left the report written, under "nothing written"
        from generator.diff.workorder import write_work_order

        names = write_work_order(diff, args.work_order)
        note(args, f"work order: {args.work_order}/ ({', '.join(names)})")
    write_text(report, args.output, replace=args.force)
    return 0 if diff.identical else 1
