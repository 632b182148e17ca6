"""`blueprint cabling BLUEPRINT [-o DIR] [--format F]`: the cable plan technicians pull from."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator.commands._common import (
    add_blueprint,
    add_common,
    blueprint_inputs,
    check_outputs,
    command,
    err_console,
    note,
)
from generator.report import safe

ORDER = 40
FORMATS = ("csv", "xlsx", "netbox", "ibnetdiscover", "lldp")
FABRICS = ("compute", "storage", "management")
STDOUT_FORMATS = ("csv", "ibnetdiscover")  # single text files; the rest need -o DIR


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "cabling",
        "write the cabling plan: CSV, printable XLSX, NetBox import, expected ibnetdiscover/LLDP",
        description="Write the cable plan (one row per cable, labels for both ends, medium, length, part "
        "number; sorted to work one rack at a time). Without --format every format is written "
        "into -o DIR. See docs/cabling.md.",
    )
    add_blueprint(p)
    add_common(
        p,
        formats=FORMATS,
        default_format=None,
        format_help="write only this format (default: all of them)",
        output_help="output directory (required except for --format csv / ibnetdiscover, which can print "
        "to standard output)",
        output_metavar="DIR",
    )
    p.add_argument(
        "--fabric",
        choices=FABRICS,
        help="with --format ibnetdiscover or lldp: only this fabric "
        "(default: every InfiniBand resp. Ethernet/RoCE fabric)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace the files of the same names already in DIR (other files are left alone)",
    )
    p.set_defaults(func=run)


def _fail(message: str) -> int:
    err_console.print(f"[bold red]cabling[/]: {safe(message)}", highlight=False)
    return 2


def run(args: argparse.Namespace) -> int:
    from generator.emit.cabling import FORMATS as ALL_FORMATS
    from generator.emit.cabling import CablingError, file_bytes, render, write_files
    from generator.fsutil import atomic_dir, atomic_write_files, checked_output_dir, output_lock
    from generator.pipeline import check_or_raise
    from generator.plan.build import plan_or_raise

    to_stdout = args.output in (None, "-")
    if to_stdout and args.format not in STDOUT_FORMATS:
        what = f"--format {args.format}" if args.format else "all formats"
        return _fail(f"{what} writes several files (or a binary workbook): give -o DIR")
    if args.fabric and args.format not in ("ibnetdiscover", "lldp"):
        return _fail("--fabric applies to --format ibnetdiscover or lldp only")
    if args.blueprint != "-" and not Path(args.blueprint).is_file():
        return _fail(f"{args.blueprint}: no such file")
    checked = check_or_raise(args.blueprint)
    cluster = checked.cluster
    # the rules already built the plan (and PLN001 reported it if that failed); reuse it
    plan = checked.context.plan or plan_or_raise(cluster, checked.loaded.locate)
    if not plan.links:
        where = f"deployment target {cluster.target}" if cluster.is_cloud else "no fabric connects its nodes"
        return _fail(f"{cluster.name} has no physical cables to plan ({where})")
    formats = (args.format,) if args.format else ALL_FORMATS
    try:
        files = render(cluster, plan, formats, fabric=args.fabric)
    except CablingError as exc:
        return _fail(str(exc))
    if not files:
        return _fail(f"{cluster.name} has no fabric that --format {args.format} applies to")

    if to_stdout:
        return _to_stdout(args, files)
    out = Path(args.output)
    if out.exists() and not out.is_dir() and not out.is_symlink():
        return _fail(f"{out} exists and is not a directory")
    target = checked_output_dir(out, None)  # a symlink, `/`, home or a mount point: refused (exit 2)
    # an input is never an output, even with --force: a blueprint saved as DIR/cables.csv was replaced
    outputs = [("the output", str(out / rel)) for rel in files]
    check_outputs(outputs, blueprint_inputs("BLUEPRINT", checked.loaded))
    with output_lock(target):
        if target.exists():  # other files in DIR are left alone; ours are replaced as one set
            theirs = [] if args.force else not_ours(target, list(files))
            if theirs:
                shown = ", ".join(theirs[:5]) + (f" and {len(theirs) - 5} more" if len(theirs) > 5 else "")
                return _fail(
                    f"{out} already holds {shown}: give --force to replace them, or a new folder "
                    "(nothing written)"
                )
            atomic_write_files(target, {rel: file_bytes(data) for rel, data in files.items()})
        else:  # the folder appears whole or not at all
            atomic_dir(target, lambda tmp: write_files(tmp, files))
    n_cables = len(plan.links)
    note(args, f"cabling: wrote {len(files)} file(s) to {out} ({n_cables} cables, {len(plan.racks)} racks)")
    return 0


def _to_stdout(args: argparse.Namespace, files: dict[str, bytes]) -> int:
    if args.format == "csv":
        sys.stdout.write(files["cables.csv"].decode("utf-8"))
        note(args, "cabling: printed cables.csv; bom.csv and labels.csv are written with -o DIR")
        return 0
    # ibnetdiscover: one net file per InfiniBand fabric
    if len(files) > 1 and "compute.net" in files:  # the GPU fabric is what `verify-cabling` checks first
        others = ", ".join(n.removesuffix(".net") for n in files if n != "compute.net")
        sys.stdout.write(files["compute.net"].decode("utf-8"))
        note(args, f"cabling: printed the compute fabric; --fabric for the others ({others})")
        return 0
    if len(files) != 1:
        return _fail(
            f"{len(files)} InfiniBand fabrics ({', '.join(n.removesuffix('.net') for n in files)}): "
            "choose one with --fabric, or give -o DIR"
        )
    sys.stdout.write(next(iter(files.values())).decode("utf-8"))
    return 0


def not_ours(target: Path, rels: list[str]) -> list[str]:
    """The files among ``rels`` already in ``target`` that `cabling` would replace: any of them, unless a
    generate build's manifest (``target``/../manifest.json) records it as written and unchanged (`cabling -o
    BUILD/cabling` refreshes a build). A path through a symbolic link is left to the writer, which refuses
    it by name."""
    from generator.build import read_manifest, sha256_file

    built = read_manifest(target.parent) or {}
    out = []
    for rel in rels:
        path = target / rel
        if any(p.is_symlink() for p in (path, *path.parents) if p != target and target in p.parents):
            continue
        key = f"{target.name}/{rel}"
        if path.exists() and not (key in built and path.is_file() and sha256_file(path) == built[key]):
            out.append(rel)
    return out
