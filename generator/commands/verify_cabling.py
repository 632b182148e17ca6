"""`blueprint verify-cabling BLUEPRINT --discovered FILE_OR_DIR`: the fabric as built vs the plan.

InfiniBand fabrics take an ``ibnetdiscover`` dump (default or ``-p`` format); Ethernet/RoCE
fabrics take a directory of ``lldpcli show neighbors -f json`` files, one per device, named
``<device>.json``. Exit 0 when every planned cable is present, on the planned ports at the
planned width/speed, and nothing else is cabled — or every difference is acknowledged in the
``--accept`` file (generator/verify/accept.py); 1 when there are discrepancies; 2 when the
blueprint, the discovered input or the accept file cannot be used.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from generator.commands._common import (
    add_blueprint,
    add_common,
    blueprint_inputs,
    check_outputs,
    command,
    err_console,
    note,
    write_text,
)
from generator.report import safe
from generator.safetext import terminal

TYPE_CHECKING = False  # typing itself costs start-up time; mypy treats this name as True
if TYPE_CHECKING:
    from generator.load import LoadedBlueprint

ORDER = 45
FABRICS = ("compute", "storage", "management")
# speed tokens ibnetdiscover prints (rdma-core infiniband-diags/ibnetdiscover.c)
SPEED_TOKENS = ("SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR", "XDR")


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "verify-cabling",
        "compare the fabric as built (ibnetdiscover / LLDP) with the cabling plan",
        description="Compare what the fabric reports with the plan, per cable and from both ends: ok, "
        "missing, "
        "miswired (both ends named), unexpected links, wrong width/speed. Exit 0 = matches, "
        "1 = discrepancies, 2 = unusable input.",
    )
    add_blueprint(p)
    p.add_argument(
        "--discovered",
        required=True,
        metavar="FILE_OR_DIR",
        help="`ibnetdiscover` output (InfiniBand), or a directory of `lldpcli show neighbors -f json` "
        "files named <device>.json (Ethernet/RoCE)",
    )
    p.add_argument("--fabric", choices=FABRICS, default="compute", help="fabric to verify (default: compute)")
    p.add_argument(
        "--node-name-map",
        metavar="FILE",
        help='`0x<guid> "name"` lines (ibnetdiscover\'s --node-name-map) for nodes whose descriptions '
        "are not set",
    )
    p.add_argument(
        "--sim-speed",
        metavar="TOKEN",
        help="the dump comes from ibsim on a net file written with this speed (e.g. HDR: ibsim 0.10 "
        "models nothing faster); expect it instead of the fabric's speed",
    )
    p.add_argument(
        "--accept",
        metavar="FILE",
        help="YAML of known differences: absent devices, acknowledged cables, switch ports with "
        "unplanned devices (see docs/existing-site.md); exit 0 when nothing else differs",
    )
    p.add_argument("--all", action="store_true", help="also list the cables that match")
    add_common(p, output_help="write the report to this file")
    p.set_defaults(func=run)


def _fail(message: str) -> int:
    err_console.print(f"[bold red]verify-cabling[/]: {safe(message)}", highlight=False)
    return 2


def _output_refused(args: argparse.Namespace, loaded: LoadedBlueprint | None) -> str | None:
    """Why -o cannot be written (None: it can): it names the blueprint, the dump or another input, which the
    report replaced; once the blueprint is read (``loaded``), also the catalogue file it names (`-o
    cat.yaml` replaced it, even though plan and topology refused it)."""
    from generator.fsutil import OutputRefused
    from generator.verify.lldp import lldp_files

    inputs: list[tuple[str, str | None]] = (
        [
            ("the blueprint", args.blueprint),
            *(("--discovered", str(f)) for f in lldp_files(args.discovered)),
            ("--node-name-map", args.node_name_map),
            ("--accept", args.accept),
        ]
        if loaded is None
        else blueprint_inputs("the blueprint", loaded)
    )
    try:  # an existing file without --force: refused before the blueprint is read too
        check_outputs([("-o", args.output)], inputs, force=args.force)
    except OutputRefused as exc:
        return f"{exc} (nothing written)"
    return None


def run(args: argparse.Namespace) -> int:
    from generator.foreign import ByteBudget, ForeignInputError
    from generator.pipeline import load_and_resolve
    from generator.plan.build import plan_or_raise
    from generator.verify.check import verify
    from generator.verify.model import DiscoveryError
    from generator.verify.render import to_json, to_text

    if args.blueprint != "-" and not Path(args.blueprint).is_file():
        return _fail(f"{args.blueprint}: no such file")
    if not Path(args.discovered).exists():
        return _fail(f"{args.discovered}: no such file or directory")
    if (refused := _output_refused(args, None)) is not None:
        return _fail(refused)
    loaded, cluster = load_and_resolve(args.blueprint)
    if (refused := _output_refused(args, loaded)) is not None:
        return _fail(refused)
    if args.fabric not in cluster.fabrics:
        return _fail(
            f"{cluster.name} has no {args.fabric} fabric (it has: "
            f"{', '.join(sorted(cluster.fabrics)) or 'none'})"
        )
    plan = plan_or_raise(cluster, loaded.locate)
    if not plan.links_of(args.fabric):
        return _fail(f"the {args.fabric} fabric of {cluster.name} has no planned cables to verify")
    sim_speed = args.sim_speed.upper() if args.sim_speed else None
    if sim_speed is not None and sim_speed not in SPEED_TOKENS:
        return _fail(f"--sim-speed {args.sim_speed}: not an InfiniBand speed ({', '.join(SPEED_TOKENS)})")
    try:
        result = verify(
            plan,
            args.fabric,
            args.discovered,
            node_name_map=args.node_name_map,
            sim_speed=sim_speed,
            budget=ByteBudget(),  # one budget for every file this command reads
            accept=args.accept,
        )
    except (DiscoveryError, ForeignInputError) as exc:  # the readers' refusals, located (file:line)
        return _fail(str(exc))
    if args.format == "json":
        write_text(
            to_json(result, blueprint=str(args.blueprint), show_ok=args.all), args.output, replace=args.force
        )
    else:
        # node descriptions are foreign
        write_text(terminal(to_text(result, show_ok=args.all)), args.output, replace=args.force)
    if args.output not in (None, "-"):
        note(args, f"report written to {args.output}")
    return 0 if result.clean else 1
