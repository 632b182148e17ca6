"""`blueprint sm-guids BLUEPRINT --discovered ibnetdiscover.out -o DIR`: OpenSM ftree GUID files.

Writes ``root_guids.conf`` (top-tier switches by plan position), ``cn_guids.conf`` (the GPU nodes'
HCA ports), ``partitions.conf`` (the blueprint's partitions with their pools' port GUIDs) and
``node-name-map`` (by node GUID, as the tools look names up; one written by port GUID before is still
read with ``--node-name-map``) into DIR, for ``/etc/opensm`` (playbooks/opensm.yml installs them). With
``--check-roots FILE`` it only checks an existing root file: exit 1 when it lists anything but a
top-tier switch of the plan (e.g. a leaf), before OpenSM ranks the fabric from it.
A discovered device is trusted with a plan name only as generator/verify/trust.py allows (the GUID the site
recorded with ``--node-name-map``, or its planned port of an identified switch); otherwise nothing is
written. Devices are identified as verify-cabling identifies them (``MF0;<name>:<model>/U1`` switches,
``<host> HCA-N`` or firmware-default HCAs on their planned ports). A top-tier switch of the plan missing
from the dump is refused (exit 1) unless ``--accept-missing-roots``; a plan without a top tier (a
hypercube or torus for dfsssp/updn) needs no root file and none is written.
Files already in DIR are replaced only with ``--force``; an input (the blueprint, the dump, the
``--node-name-map``) is never one of them, even with ``--force``.
Exit 0 ok, 1 check failed (bad root file, top-tier switch not discovered, a GPU pool with no port
discovered), 2 unusable input.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from generator.commands._common import add_blueprint, add_common, command, err_console, note
from generator.foreign import ByteBudget
from generator.report import safe

if TYPE_CHECKING:
    from generator.plan.model import Plan
    from generator.resolve import ResolvedCluster
    from generator.verify.identify import NodeNameMap
    from generator.verify.sm_guids import GuidFiles

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
    p.add_argument(
        "--node-name-map",
        metavar="FILE",
        help='`0x<guid> "name"` lines: the GUIDs the site recorded; a device is then trusted with a plan '
        "name only if its GUID is recorded for that name",
    )
    p.add_argument(
        "--accept-missing-roots",
        action="store_true",
        help="write the root file even when some top-tier switches are not in the dump (OpenSM then roots "
        "the fabric at those found only)",
    )
    add_common(
        p,
        formats=("text",),
        format_help="format of the summary line",
        output_help="directory for the files (required unless --check-roots)",
        output_metavar="DIR",
        force_help="replace the files already in DIR",
    )
    p.set_defaults(func=run)


OUTPUTS = ("root_guids.conf", "cn_guids.conf", "node-name-map", "partitions.conf")


def _fail(message: str, code: int = 2, warnings: list[str] | None = None) -> int:
    _warn(warnings or [])  # first: a typo in the --node-name-map may be why
    # the message holds dump text (node descriptions, file names): shown, never read as markup
    err_console.print(f"[bold red]sm-guids[/]: {safe(message)}", highlight=False)
    return code


def _warn(warnings: list[str]) -> None:
    """What verify-cabling says of the same --node-name-map, as many lines as its text report shows: the map
    holds up to 64 MiB of lines, each of which may be one."""
    from generator.safetext import inline
    from generator.verify.render import MAX_WARNINGS

    for w in warnings[:MAX_WARNINGS]:  # map text: one line each, never markup
        err_console.print(f"warning: {inline(w)}", highlight=False, markup=False, emoji=False)
    if len(warnings) > MAX_WARNINGS:
        more = len(warnings) - MAX_WARNINGS
        err_console.print(f"warning: … and {more} more (verify-cabling --format json lists them all)")


def _outputs(args: argparse.Namespace) -> Path:
    """DIR, checked before anything is read: a folder (or a new name), no file in it replaced unasked, and
    none of them an input, even with --force (`-o /etc/opensm --node-name-map /etc/opensm/node-name-map
    --force` replaced the site's record with the generated map)."""
    from generator.commands._common import check_outputs
    from generator.fsutil import OutputRefused, checked_output_dir, checked_output_file

    output, force = args.output, args.force
    out = checked_output_dir(output, None)
    check_outputs(
        _output_files(out),
        [
            ("the blueprint", args.blueprint),
            ("--discovered", args.discovered),
            ("--node-name-map", args.node_name_map),
            ("--check-roots", args.check_roots),
        ],
        force=None,  # the files DIR already holds: refused together, below
    )
    existing = [name for name in OUTPUTS if checked_output_file(out / name).exists()]
    if existing and not force:
        raise OutputRefused(f"{output} already holds {', '.join(existing)}; give --force to replace them")
    return out


def _output_files(out: Path) -> list[tuple[str, str | None]]:
    return [(f"the output {name}", str(out / name)) for name in OUTPUTS]


def run(args: argparse.Namespace) -> int:
    from generator.commands._common import blueprint_inputs, check_outputs
    from generator.foreign import read_foreign, read_foreign_text
    from generator.pipeline import load_and_resolve
    from generator.plan.build import plan_or_raise
    from generator.verify.ibnetdiscover import MAX_DUMP_BYTES
    from generator.verify.model import DiscoveryError
    from generator.verify.sm_guids import (
        DumpError,
        GuidError,
        MissingPortsError,
        MissingRootsError,
        check_roots,
        guid_files,
    )
    from generator.verify.trust import IdentityError

    if args.check_roots is None and not args.output:
        return _fail("-o DIR is required (or --check-roots FILE)")
    out = _outputs(args) if args.check_roots is None else None
    loaded, cluster = load_and_resolve(args.blueprint)
    if out is not None:  # nor the catalogue file the blueprint names, known once read, even with --force
        check_outputs(_output_files(out), blueprint_inputs("the blueprint", loaded), force=None)
    fabric = cluster.fabrics.get(args.fabric)
    if fabric is None or fabric.kind != "infiniband":
        return _fail(f"{cluster.name} has no InfiniBand {args.fabric} fabric")
    plan = plan_or_raise(cluster, loaded.locate)
    budget = ByteBudget()
    said: list[str] = []  # warnings (of the --node-name-map), printed before the outcome
    # raw NodeDescription bytes are replaced, not refused (see read_ibnetdiscover)
    text = read_foreign(args.discovered, MAX_DUMP_BYTES, budget).decode("utf-8", errors="replace")
    try:
        if args.check_roots is not None:
            roots = read_foreign_text(args.check_roots, 1024 * 1024, budget)  # one GUID a line
            check_roots(
                plan, args.fabric, text, args.discovered, roots, args.check_roots, args.accept_missing_roots
            )
            note(args, f"{args.check_roots}: every root is a top-tier switch of the plan")
            return 0
        name_map = _recorded(args.node_name_map, budget)
        missing_ok = args.accept_missing_roots
        files = guid_files(
            plan, args.fabric, text, args.discovered, name_map, accept_missing_roots=missing_ok, warnings=said
        )
    except (IdentityError, DiscoveryError, DumpError) as exc:
        return _fail(str(exc), 2, said)
    except (MissingRootsError, MissingPortsError) as exc:
        return _fail(str(exc), 1, said)
    except GuidError as exc:
        return _fail(str(exc), 1 if args.check_roots is not None else 2, said)
    assert out is not None
    _warn(said)
    _write(args, cluster, plan, out, files)
    return 0


def _recorded(path: str | None, budget: ByteBudget) -> NodeNameMap | None:
    """The GUIDs the site recorded; a refusal (DiscoveryError) already names the file and line."""
    from generator.verify.identify import read_node_name_map

    return None if path is None else read_node_name_map(path, budget)


def _write(
    args: argparse.Namespace, cluster: ResolvedCluster, plan: Plan, out: Path, files: GuidFiles
) -> None:
    from generator.emit.subnet_manager import render_partitions, sm_plan
    from generator.fsutil import OutputRefused, atomic_write_files
    from generator.verify.sm_guids import render_guids

    texts = {"cn_guids.conf": render_guids(files.cns), "node-name-map": files.node_name_map()}
    if files.needs_roots:
        texts["root_guids.conf"] = render_guids(files.roots)
    fabric = cluster.fabrics[args.fabric]
    if fabric.spec.subnet_manager is not None:
        texts["partitions.conf"] = render_partitions(
            cluster, sm_plan(cluster, args.fabric, plan), files.pool_ports
        )
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputRefused(f"cannot write {out}: {exc.strerror or exc}") from None
    # the files as one set: a failure part-way left GUID files of two discoveries side by side
    atomic_write_files(out, {name: text.encode() for name, text in texts.items()})
    stale = out / "root_guids.conf"
    if not files.needs_roots and stale.is_file():
        # only with --force (_outputs): a root file of an earlier plan, which the opensm role installs and
        # OpenSM's ftree would rank this fabric by
        stale.unlink()
    missing = files.missing
    note(
        args,
        f"wrote {out}: "
        + (f"{len(files.roots)} roots" if files.needs_roots else "no root file (no top tier in the plan)")
        + f", {len(files.cns)} compute-node ports"
        + (f"; not discovered: {len(missing)} ({', '.join(missing[:5])})" if missing else ""),
    )
