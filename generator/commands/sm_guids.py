"""`blueprint sm-guids BLUEPRINT --discovered ibnetdiscover.out -o DIR`: OpenSM ftree GUID files.

Writes ``root_guids.conf`` (top-tier switches by plan position), ``cn_guids.conf`` (the GPU nodes'
HCA ports), ``partitions.conf`` (the blueprint's partitions with their pools' port GUIDs) and
``node-name-map`` into DIR, for ``/etc/opensm`` (playbooks/opensm.yml installs them). With
``--check-roots FILE`` it only checks an existing root file: exit 1 when it lists anything but a
top-tier switch of the plan (e.g. a leaf), before OpenSM ranks the fabric from it.
Exit 0 ok, 1 check failed, 2 unusable input.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from generator.commands._common import add_blueprint, add_common, command, err_console, note

ORDER = 46


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "sm-guids",
        "OpenSM ftree root/compute-node GUID files from ibnetdiscover output and the plan",
        description="Tie a discovered InfiniBand fabric to the plan and write OpenSM's root_guid_file "
        "(spines/cores), cn_guid_file (GPU node ports) and partitions.conf with port GUIDs.",
    )
    add_blueprint(p)
    p.add_argument(
        "--discovered", required=True, metavar="FILE", help="`ibnetdiscover` output (default format)"
    )
    p.add_argument(
        "--fabric",
        choices=["compute", "storage"],
        default="compute",
        help="the InfiniBand fabric the dump is of (default: compute)",
    )
    p.add_argument("--check-roots", metavar="FILE", help="check an existing root_guid_file instead")
    add_common(
        p,
        formats=("text",),
        format_help="format of the summary line",
        output_help="directory for the files (required unless --check-roots)",
        output_metavar="DIR",
    )
    p.set_defaults(func=run)


def _fail(message: str, code: int = 2) -> int:
    err_console.print(f"[bold red]sm-guids[/]: {message}", highlight=False, markup=False)
    return code


def run(args: argparse.Namespace) -> int:
    from generator.emit.subnet_manager import render_partitions, sm_plan
    from generator.fsutil import atomic_write_text
    from generator.pipeline import load_and_resolve
    from generator.plan.build import plan_or_raise
    from generator.verify.sm_guids import GuidError, check_roots, guid_files, render_guids

    for path in (args.blueprint, args.discovered, args.check_roots):
        if path is not None and not Path(path).is_file():
            return _fail(f"{path}: no such file")
    if args.check_roots is None and not args.output:
        return _fail("-o DIR is required (or --check-roots FILE)")
    loaded, cluster = load_and_resolve(args.blueprint)
    fabric = cluster.fabrics.get(args.fabric)
    if fabric is None or fabric.kind != "infiniband":
        return _fail(f"{cluster.name} has no InfiniBand {args.fabric} fabric")
    plan = plan_or_raise(cluster, loaded.locate)
    text = Path(args.discovered).read_text(encoding="utf-8", errors="replace")
    try:
        if args.check_roots is not None:
            roots = Path(args.check_roots).read_text(encoding="utf-8", errors="replace")
            check_roots(plan, args.fabric, text, args.discovered, roots, args.check_roots)
            note(args, f"{args.check_roots}: every root is a top-tier switch of the plan")
            return 0
        files = guid_files(plan, args.fabric, text, args.discovered)
    except GuidError as exc:
        return _fail(str(exc), 1 if args.check_roots is not None else 2)
    out = Path(args.output)
    atomic_write_text(out / "root_guids.conf", render_guids(files.roots))
    atomic_write_text(out / "cn_guids.conf", render_guids(files.cns))
    atomic_write_text(out / "node-name-map", files.node_name_map())
    if fabric.spec.subnet_manager is not None:
        part = render_partitions(cluster, sm_plan(cluster, args.fabric), files.pool_ports)
        atomic_write_text(out / "partitions.conf", part)
    note(
        args,
        f"wrote {out}: {len(files.roots)} roots, {len(files.cns)} compute-node ports"
        + (
            f"; not discovered: {len(files.missing)} ({', '.join(files.missing[:5])})"
            if files.missing
            else ""
        ),
    )
    return 0
