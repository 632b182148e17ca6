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
from generator.safetext import one_line

TYPE_CHECKING = False  # start-up: the emitters are imported in run() (generator/cli.py); mypy reads True
if TYPE_CHECKING:
    from collections.abc import Mapping

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
        force_help="replace the files of the same names already in DIR (other files are left alone)",
    )
    p.add_argument(
        "--fabric",
        choices=FABRICS,
        help="with --format ibnetdiscover or lldp: only this fabric "
        "(default: every InfiniBand resp. Ethernet/RoCE fabric)",
    )
    p.set_defaults(func=run)


def _fail(message: str) -> int:
    err_console.print(f"[bold red]cabling[/]: {safe(message)}", highlight=False)
    return 2


def run(args: argparse.Namespace) -> int:
    from generator.emit.cabling import FORMATS as ALL_FORMATS
    from generator.emit.cabling import CablingError, render
    from generator.fsutil import checked_output_dir
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
    check_outputs(outputs, blueprint_inputs("BLUEPRINT", checked.loaded), force=None)  # DIR's files: below
    refused = _write(args, out, target, files, cluster.name)
    if refused:
        return _fail(refused)
    n_cables = len(plan.links)
    note(args, f"cabling: wrote {len(files)} file(s) to {out} ({n_cables} cables, {len(plan.racks)} racks)")
    return 0


def _write(args: argparse.Namespace, out: Path, target: Path, files: dict[str, bytes], name: str) -> str:
    """Write ``files`` into ``target``; why not (nothing written), or "". Into a generate build's cabling
    folder the build's manifest records the new files' digests, in the same set and under the lock generate
    takes: it went stale, so the next generate took the refreshed files for hand edits and the next refresh
    asked for --force (docs/cabling.md promises the refresh without --force)."""
    from generator.build import CABLING, MANIFEST, built_from, manifest_of, refreshed
    from generator.emit.cabling import file_bytes, write_files
    from generator.fsutil import atomic_dir, atomic_write_files, output_lock

    build = target.parent if target.name == CABLING and (target.parent / MANIFEST).is_file() else None
    with output_lock(build or target):
        manifest = manifest_of(build) if build is not None else None
        built = manifest["files"] if manifest is not None else {}
        other = built_from(build) if manifest is not None and build is not None else None
        if other is not None and other != name and not args.force:
            return (
                f"{out} is the cabling folder of the build of `{one_line(other)[:80]}`, not `{name}`: give "
                "--force to replace its files, or another folder (nothing written)"
            )
        theirs = [] if args.force or not target.exists() else not_ours(target, list(files), built)
        if theirs:
            shown = ", ".join(theirs[:5]) + (f" and {len(theirs) - 5} more" if len(theirs) > 5 else "")
            return (
                f"{out} already holds {shown}: give --force to replace them, or a new folder "
                "(nothing written)"
            )
        if build is not None and manifest is not None:
            atomic_write_files(build, refreshed(manifest, CABLING, files))
        elif target.exists():  # other files in DIR are left alone; ours are replaced as one set
            atomic_write_files(target, {rel: file_bytes(data) for rel, data in files.items()})
        else:  # the folder appears whole or not at all
            atomic_dir(target, lambda tmp: write_files(tmp, files))
    return ""


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


def not_ours(target: Path, rels: list[str], built: Mapping[str, str]) -> list[str]:
    """The files among ``rels`` already in ``target`` that `cabling` would replace: any of them, unless
    ``built``, the files a generate build's manifest (``target``/../manifest.json) records, has it as written
    and unchanged (`cabling -o BUILD/cabling` refreshes a build). A path through a symbolic link is left to
    the writer, which refuses it by name."""
    from generator.build import sha256_file

    out = []
    for rel in rels:
        path = target / rel
        if any(p.is_symlink() for p in (path, *path.parents) if p != target and target in p.parents):
            continue
        key = f"{target.name}/{rel}"
        if path.exists() and not (key in built and path.is_file() and sha256_file(path) == built[key]):
            out.append(rel)
    return out
