"""`blueprint sot push BUILD --url URL` / `blueprint sot csv BUILD -o DIR`: the plan in the site's NetBox
or Nautobot, over the REST API or as numbered files for the bulk import.

Reads the NetBox files of a build (``cabling/netbox/``), reads back what the site holds, and creates
what is missing, updates what changed and leaves the rest: a second push of the same build changes
nothing, and a grown build (``blueprint diff`` 2 -> 3 SU) creates only the additions. ``--dry-run``
prints the change set and writes nothing. ``--mark-connected`` (once ``verify-cabling`` passes) sets the
build's cables from planned to connected.

Exit 0 when the site now matches the build (a dry run: when nothing would change), 1 when a dry run
found changes or the server refused a write, 2 when the build or the options cannot be used.
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path
from typing import Any

from generator.commands._common import add_common, check_outputs, command, err_console, note, write_text
from generator.commands._common import build_files as owned_files
from generator.report import dumps, safe

ORDER = 47
KINDS = ("netbox", "nautobot")
ACTIONS = ("push", "csv")
TOKEN_ENV = "BLUEPRINT_SOT_TOKEN"
# An API token as the Authorization header carries it after `Token ` or `Bearer `: printable ASCII without
# spaces (the 40 hex digits both products generate fit, and NetBox 4.5's `nbt_<key>.<secret>`).
TOKEN_TEXT = re.compile(r"[!-~]{1,512}")


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "sot",
        "put the plan in the site's source of truth (NetBox or Nautobot): REST push or import files",
        description="push: create or update a build's racks, devices, interfaces and cables in NetBox or "
        "Nautobot over the REST API (get-or-create what the site already has, update what changed, "
        "create what is new, in batches). csv: the build's NetBox files as numbered chunks for NetBox's "
        "bulk import (air-gapped sites). Exit 0 = the site matches the build / files written, 1 = a dry "
        "run found changes or the server refused, 2 = unusable build or options.",
    )
    p.add_argument(
        "action", choices=ACTIONS, metavar="ACTION", help="push (REST API) or csv (files for the bulk import)"
    )
    p.add_argument(
        "build", metavar="BUILD", help="a `blueprint generate` output folder (or its cabling/netbox)"
    )
    push = p.add_argument_group("push")
    push.add_argument("--url", help="the server's base URL, e.g. https://netbox.example.com (push)")
    push.add_argument(
        "--token", help=f"API token (default: the {TOKEN_ENV} environment variable, kept out of `ps`)"
    )
    push.add_argument(
        "--kind",
        choices=KINDS,
        help="the product, checked against the server's /api/status/ (default: what it says)",
    )
    push.add_argument("--dry-run", action="store_true", help="print the change set; write nothing")
    push.add_argument(
        "--mark-connected",
        action="store_true",
        help="after `verify-cabling` passes: set the build's cables from planned to connected",
    )
    push.add_argument(
        "--batch", type=int, default=None, metavar="N", help="objects per write request (1-1000)"
    )
    files = p.add_argument_group("csv")
    files.add_argument(
        "--since", metavar="OLD_BUILD", help="only the objects OLD_BUILD did not have (grown cluster)"
    )
    files.add_argument("--rows", type=int, metavar="N", help="rows per file for every file (at most 1000)")
    add_common(
        p,
        output_help="push: write the change set report here (default: standard output); "
        "csv: the folder for the numbered files (required)",
        output_metavar="PATH",
        force_help="push: replace the -o file if it exists; csv: replace the -o folder when it is not empty",
    )
    p.set_defaults(func=run)


def _fail(message: str, code: int = 2) -> int:
    err_console.print(f"[bold red]sot[/]: {safe(message)}", highlight=False)
    return code


def run(args: argparse.Namespace) -> int:
    if args.action == "csv":
        return run_csv(args)
    return run_push(args)


def run_push(args: argparse.Namespace) -> int:
    from generator.sot.backends import MissingClient, SotError
    from generator.sot.build import build_files, read_build
    from generator.sot.push import DEFAULT_BATCH

    if not args.url:
        return _fail("push needs --url")
    problem = _url_problem(args.url)
    if problem:
        return _fail(f"--url {args.url}: {problem}, e.g. https://netbox.example.com")
    token = args.token or os.environ.get(TOKEN_ENV, "")
    if not token:
        return _fail(f"no API token: give --token or set {TOKEN_ENV}")
    if not TOKEN_TEXT.fullmatch(token):
        # never echoed: requests' refusal of a header with a CR (a secret file saved on Windows) printed it
        return _fail(
            "the API token holds a space, line break, control or non-ASCII character (a file's line "
            "ending?): give the token alone"
        )
    if args.batch is not None and not 1 <= args.batch <= 1000:
        return _fail("--batch must be between 1 and 1000")
    if not Path(args.build).is_dir():
        return _fail(f"{args.build}: not a folder")
    desired = read_build(Path(args.build))
    # before the server is written to: a refused -o came after the push, under "nothing written"
    read: list[tuple[str, str | None]] = [
        (f"BUILD's {p.name}", str(p)) for p in build_files(Path(args.build))
    ]
    # and every file of the build (its manifest: `-o BUILD/manifest.json` replaced it, and `generate` then
    # refused the folder), of BUILD/cabling/netbox's build too
    root = Path(args.build)
    for folder in (root, root.parent.parent) if root.parts[-2:] == ("cabling", "netbox") else (root,):
        read.extend(owned_files(folder))
    check_outputs([("-o", args.output)], read, force=args.force)
    try:
        return _push(args, token, desired, args.batch or DEFAULT_BATCH)
    except MissingClient as exc:
        return _fail(str(exc), 2)
    except SotError as exc:
        return _fail(str(exc).replace(token, "<token>"), 1)


def _url_problem(url: str) -> str:
    """What keeps ``url`` from being a server's base URL ("" for none): checked before anything is read or
    sent (`http://[::1` was an internal error, and `netbox.example.com` a refusal from the HTTP client)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        port = parts.port  # ValueError for a port that is no number or past 65535
    except ValueError as exc:  # an unclosed `[`, an IPv6 address that is none
        return f"not a URL ({exc})"
    if parts.scheme.lower() not in ("http", "https"):
        return "not an http:// or https:// address"
    if not parts.hostname:
        return "no host"
    if port == 0:
        return "port 0 is no port"
    from urllib3.exceptions import LocationParseError
    from urllib3.util import parse_url

    try:  # what the HTTP client will parse: a host it refuses (`%zz`, a space) was "could not be reached"
        parse_url(url)
    except LocationParseError as exc:
        return f"not a URL ({exc})"
    import ipaddress

    try:  # a name's labels as the resolver takes them (1 to 63 characters): `a..b` was an internal error
        ipaddress.ip_address(parts.hostname.strip("[]"))
    except ValueError:
        try:
            parts.hostname.encode("idna")
        except UnicodeError as exc:
            return f"not a host name ({exc})"
    return ""


def run_csv(args: argparse.Namespace) -> int:
    from generator.emit.cabling.netbox import IMPORT_ORDER, MAX_CHUNK_ROWS, import_chunks
    from generator.foreign import ByteBudget
    from generator.sot.build import netbox_dir
    from generator.sot.csvfiles import new_only, read_files, write_chunks

    if not args.output or args.output == "-":
        return _fail("csv needs -o DIR: the folder for the numbered files")
    if args.rows is not None and not 1 <= args.rows <= MAX_CHUNK_ROWS:
        return _fail(f"--rows must be between 1 and {MAX_CHUNK_ROWS}")
    for option, folder in (("BUILD", args.build), ("--since", args.since)):
        if folder is None:
            continue
        if not Path(folder).is_dir():
            return _fail(f"{folder}: not a folder")
        read = netbox_dir(Path(folder))
        out = Path(args.output)
        if _holds(out, read) or _holds(read, out) or _holds(out, Path(folder)):
            # --force replaces the -o folder whole: `-o BUILD/cabling` deleted the files it was reading
            return _fail(f"-o {args.output} holds or is inside the files {option} {folder} gives ({read})")
    budget = ByteBudget()
    files = read_files(Path(args.build), budget)
    if args.since:
        old = read_files(Path(args.since), budget)
        files = new_only(files, old, netbox_dir(Path(args.build)), netbox_dir(Path(args.since)))
    rows = {name: args.rows for name in IMPORT_ORDER} if args.rows else None
    chunks = import_chunks(files, rows)
    write_chunks(Path(args.output), chunks, args.force)
    note(args, f"{len(chunks)} file(s) in {args.output}: import them in name order")
    return 0


def _holds(a: Path, b: Path) -> bool:
    """``a`` is ``b`` or a folder above it (resolved, so `x/../b` and symlinks count)."""
    ra, rb = a.resolve(), b.resolve()
    return ra == rb or ra in rb.parents


def _push(args: argparse.Namespace, token: str, desired: Any, batch: int) -> int:
    from generator.sot.changes import describe
    from generator.sot.http import push_budget
    from generator.sot.push import mark_connected, push

    backend = _connect(args, token, push_budget(sum(map(len, desired.records.values()))))
    progress = (lambda text: None) if args.quiet else (lambda text: note(args, text))
    apply = not args.dry_run
    result = push(backend, desired, apply=apply, batch=batch, progress=progress)
    if args.mark_connected:
        mark_connected(backend, desired, result, apply=apply, batch=batch, progress=progress)
    if args.format == "json":
        write_text(dumps(_as_json(result, backend.product, apply)), args.output, replace=args.force)
    else:
        lines = describe(result.changes)
        if args.mark_connected:
            lines.append(f"cable status -> connected: {result.connected}")
        verb = "written" if apply else "to write"
        lines.append(f"{backend.product}: {result.written} change(s) {verb}")
        write_text("\n".join(lines) + "\n", args.output, replace=args.force)
    return 1 if args.dry_run and result.written else 0


def _connect(args: argparse.Namespace, token: str, budget: int) -> Any:
    """The backend of the product the server says it is, of a release its API is written for (a --kind of
    the other product, or a NetBox before `role` or a Nautobot before Locations, would write what the server
    refuses halfway through)."""
    from generator.sot import nautobot, netbox
    from generator.sot.backends import (
        PRODUCTS,
        SotError,
        StatusUnknown,
        Unreachable,
        release_check,
        server_status,
    )

    try:
        kind, version = server_status(args.url, token)
    except Unreachable:
        raise
    except SotError as exc:
        if not args.kind:
            # only where --kind helps: a refused token (403) was told to give --kind
            hint = ": give --kind to push without it" if isinstance(exc, StatusUnknown) else ""
            raise SotError(f"{exc}{hint}") from None
        # a proxy may keep /api/status/ from the token's user: --kind says the product, unchecked
        warning = f"{exc}; the release is not checked, pushing as --kind {args.kind}"
        err_console.print(f"[yellow]warning[/]: {safe(warning)}")
        return (nautobot if args.kind == "nautobot" else netbox).connect(args.url, token, budget=budget)
    if args.kind and args.kind != kind:
        raise SotError(f"--kind {args.kind}, but {args.url} is {PRODUCTS[kind]} {version}")
    warning = release_check(kind, version)
    if warning:
        err_console.print(f"[yellow]warning[/]: {safe(warning)}")
    return (nautobot if kind == "nautobot" else netbox).connect(args.url, token, budget=budget)


def _as_json(result: Any, product: str, applied: bool) -> dict[str, Any]:
    return {
        "product": product,
        "applied": applied,
        "kinds": {
            c.kind: {
                "create": ["/".join(r.key) for r, _ in c.creates],
                "update": {"/".join(u.record.key): sorted(u.changed) for u in c.updates},
                "unchanged": c.unchanged,
            }
            for c in result.changes
        },
        "connected": result.connected,
    }
