"""`blueprint rehearse BUILD_DIR`: bring the generated network up on this machine before the hardware arrives.

Ethernet/RoCE fabrics run Debian's FRR from the generated switch configuration, one network namespace per
switch and one veth pair per cable; InfiniBand fabrics run ibsim, ibnetdiscover and OpenSM from the
generated files (generator/rehearse/). Needs root (network namespaces). Exit 0 when every check of every
fabric holds, 1 when one fails, 2 when the build, the options or the machine cannot be used.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from generator.commands._common import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_UNUSABLE,
    add_common,
    build_files,
    check_outputs,
    command,
    err_console,
    note,
    print_table,
    seconds,
    text_output,
    write_text,
)
from generator.report import safe

if TYPE_CHECKING:
    from generator.rehearse.build_input import Build

ORDER = 62
MAX_TIMEOUT_S = 86_400.0  # a day: a longer wait is a typo, not a plan


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "rehearse",
        "bring the generated network up in namespaces (FRR) and ibsim (OpenSM) and check it",
        description="Run the build's switch configuration in Debian's FRR (a network namespace per switch, "
        "a veth pair per cable of cabling/cables.csv) and its InfiniBand fabric in ibsim with the generated "
        "OpenSM files; check BGP sessions, leaf-to-leaf reachability, ECMP first hops against the plan, "
        "discovery against the cabling plan and the subnet manager, then again after each --fail device. "
        "Runs as root. Exit 0 when every check holds, 1 when one fails, 2 when it cannot run.",
    )
    p.add_argument("build_dir", metavar="BUILD_DIR", help="the `blueprint generate` output directory")
    p.add_argument("--fabric", action="append", metavar="NAME", help="rehearse only this fabric (repeatable)")
    p.add_argument(
        "--fail",
        action="append",
        default=[],
        metavar="DEVICE",
        help="after the first verdict, take this switch down and check again (repeatable; cumulative)",
    )
    p.add_argument(
        "--sample",
        choices=("auto", "always", "never"),
        default="auto",
        help="rehearse one scalable unit with its spines/cores: when the fabric does not fit this machine "
        "(auto, the default), always, or never",
    )
    p.add_argument(
        "--timeout",
        type=seconds(0, MAX_TIMEOUT_S),
        default=180.0,
        metavar="SECONDS",
        help="time allowed to converge, and for each InfiniBand discovery and one-shot OpenSM run "
        "(default 180)",
    )
    add_common(p, output_help="write the report to this file")
    p.set_defaults(func=run)


def _fail(message: str) -> int:
    err_console.print(f"[bold red]rehearse[/]: {safe(message)}", highlight=False)
    return EXIT_UNUSABLE


def _refusal(build: Build, args: argparse.Namespace) -> str | None:
    """Why this rehearsal cannot run (options, privileges, tools), or None."""
    from generator.rehearse import tools
    from generator.rehearse.run import fabric_devices

    fabrics = args.fabric or build.fabrics
    unknown = [f for f in fabrics if f not in build.fabrics]
    if unknown:
        has = ", ".join(build.fabrics) or "none"
        return f"no fabric {', '.join(unknown)} in {args.build_dir} (it has: {has})"
    devices: set[str] = set().union(*(fabric_devices(build, f) for f in fabrics))
    stray = [d for d in args.fail if d not in devices]
    if stray:
        return f"--fail {', '.join(stray)}: not a switch of {', '.join(fabrics)}"
    if not tools.is_root():
        return (
            "rehearse creates network namespaces and runs FRR/ibsim: run it as root (sudo blueprint rehearse)"
        )
    needed = {**(tools.ETHERNET_TOOLS if set(fabrics) & set(build.switches) else {}),
              **(tools.INFINIBAND_TOOLS if set(fabrics) & set(build.infiniband) else {})}  # fmt: skip
    absent = tools.missing(needed)
    return tools.install_hint(absent) if absent else None


def run(args: argparse.Namespace) -> int:
    from generator.foreign import ForeignInputError
    from generator.rehearse.build_input import read_build
    from generator.rehearse.cleanup import Interrupted
    from generator.rehearse.run import rehearse

    root = Path(args.build_dir)
    if not root.is_dir():
        return _fail(f"{root}: {'not a directory' if root.exists() else 'no such directory'}")
    # before anything runs: `-o BUILD/ansible/inventory.yml` replaced a file of the build with the report
    check_outputs([("-o", args.output)], build_files(root), force=args.force)
    try:
        build = read_build(root)
    except ForeignInputError as exc:
        return _fail(str(exc))
    if not build.fabrics and not args.fabric:
        return _nothing(build, args)
    refusal = _refusal(build, args)
    if refusal:
        return _fail(refusal)
    try:
        result = rehearse(
            build, list(dict.fromkeys(args.fabric or [])) or build.fabrics, args.fail, mode=args.sample,
            timeout_s=args.timeout,
            progress=lambda m: note(args, m),
        )  # fmt: skip
    except Interrupted as exc:
        err_console.print(
            f"rehearse: {safe(exc)}; every namespace and process it started was removed", highlight=False
        )
        return 128 + exc.signum
    except ForeignInputError as exc:
        return _fail(str(exc))
    if args.format == "json":
        write_text(result.to_json(), args.output, replace=args.force)
    else:
        _text(result, args.output, args.force)
    return EXIT_OK if result.ok else EXIT_FINDINGS


NOTHING = (
    "nothing to rehearse: the build has no switch configuration (switches/<fabric>/) and no InfiniBand net "
    "file (cabling/ibnetdiscover/): a single node, a cloud fabric or a direct-attach torus has no switch to "
    "bring up"
)


def _nothing(build: Build, args: argparse.Namespace) -> int:
    """A build without switches passes: there is no configuration that could be wrong (exit 0, said)."""
    from generator.rehearse.verdict import Rehearsal

    result = Rehearsal(str(build.root), nothing=NOTHING)
    if args.format == "json":
        write_text(result.to_json(), args.output, replace=args.force)
    else:
        with text_output(args.output, replace=args.force) as out:
            out.print(f"{args.build_dir}: {NOTHING}", highlight=False)
    return EXIT_OK


def _text(result: object, output: str | None, replace: bool) -> None:
    from rich.table import Table

    from generator.rehearse.verdict import MAX_REASONS, Rehearsal

    assert isinstance(result, Rehearsal)
    with text_output(output, replace=replace) as out:
        for fab in result.fabrics:
            table = Table(
                title=f"{fab.fabric} ({fab.technology}, {fab.size}): {'PASS' if fab.ok else 'FAIL'}"
            )
            for col in ("check", "verdict", "what"):
                table.add_column(col)
            for c in fab.checks:
                table.add_row(safe(c.name), "ok" if c.ok else "FAIL", safe(c.detail))
            print_table(table, out)
            for n in fab.notes:
                out.print(f"note: {safe(n)}", highlight=False)
            for step, s in fab.converge_s.items():
                out.print(f"converged ({safe(step)}) in {s:.1f} s", highlight=False)
            for c in (c for c in fab.checks if not c.ok):
                out.print(f"{safe(c.name)}: {len(c.reasons)} problem(s)", highlight=False)
                for r in c.reasons[:MAX_REASONS]:
                    out.print(f"  {safe(r)}", highlight=False)
        for ch in result.limits:
            state = "restored" if result.limits_restored else "NOT restored"
            out.print(f"kernel: {ch.key} raised {ch.before} -> {ch.during}, {state}", highlight=False)
        out.print(f"{'PASS' if result.ok else 'FAIL'} in {result.seconds:.1f} s", highlight=False)
