"""`blueprint migrate BLUEPRINT`: upgrade a blueprint to the schema version this tool reads.

The upgraded file is checked (loaded and validated) before anything is written; `--in-place` keeps the
original beside it as FILE.bak. See docs/schema-versions.md for the version policy.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from blueprints.api_version import API_VERSION as CURRENT
from generator.commands._common import add_blueprint, add_common, command, err_console, note, write_text

ORDER = 92


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "migrate",
        f"upgrade a blueprint to the current schema version ({CURRENT})",
        description=f"Upgrade a blueprint to the schema version this tool reads ({CURRENT}), keeping its "
        "comments and layout, and check the result validates. Prints the upgraded blueprint, or writes "
        "it with -o FILE or --in-place. Exit 0 when current or upgraded; with --check, 1 when an upgrade "
        "is needed; 2 when the file cannot be upgraded. Version policy: docs/schema-versions.md.",
    )
    add_blueprint(p)
    p.add_argument(
        "--in-place", action="store_true", help="rewrite the file itself (the original is kept as FILE.bak)"
    )
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 when an upgrade is needed")
    add_common(
        p,
        formats=("yaml",),
        default_format="yaml",
        format_help="blueprint format",
        force_help="replace the -o file if it exists; with --in-place, an existing FILE.bak",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.in_place and (args.output or args.blueprint == "-"):
        err_console.print("[bold red]migrate[/]: --in-place rewrites the file itself: give a file and no -o")
        return 2
    from generator.commands._common import check_outputs
    from generator.report import safe

    # `-o FILE` naming the blueprint rewrote it with no FILE.bak: that is --in-place's job; an existing -o
    # without --force is refused before the blueprint is read (the catalogue file it names: _write_out)
    check_outputs(
        [("-o", args.output)], [("BLUEPRINT (rewrite it with --in-place)", args.blueprint)], force=args.force
    )
    from generator.foreign import read_foreign_text
    from generator.load import MAX_BYTES
    from generator.migrate import MigrationError, migrate_text
    from generator.report import safe as escape  # foreign text: control characters dropped, markup shown

    # a regular file (or standard input) of at most the loader's 4 MiB: a symlink to /dev/zero is refused,
    # located, instead of read until the memory cap (the CLI prints a ForeignInputError and exits 2)
    text = read_foreign_text(args.blueprint, MAX_BYTES)
    try:
        result = migrate_text(text, file="<stdin>" if args.blueprint == "-" else args.blueprint)
    except MigrationError as exc:
        err_console.print(f"[bold red]migrate[/]: {escape(str(exc))}")
        return 2
    if not result.changed:
        note(args, f"{args.blueprint}: already {CURRENT}; nothing to do")
        if not args.check and not args.in_place:
            _write_out(text, args)
        return 0
    for step in result.steps:
        note(args, f"{args.blueprint}: {step}")
    for line in result.notes:
        err_console.print(f"  note: {escape(line)}")
    if args.check:
        return 1
    errors = _validate(result.text, Path(args.blueprint).parent if args.blueprint != "-" else Path("."))
    if errors:
        err_console.print(
            f"[bold red]migrate[/]: the upgraded blueprint does not validate (nothing written): "
            f"{escape('; '.join(errors))}"
        )
        return 2
    if args.in_place:
        from generator.fsutil import atomic_write_text

        source = Path(args.blueprint)
        backup = source.with_name(source.name + ".bak")
        if not args.force and (backup.exists() or backup.is_symlink()):
            err_console.print(
                f"[bold red]migrate[/]: {safe(str(backup))} exists: --in-place keeps the original there; "
                "move it, or give --force to replace it (nothing written)"
            )
            return 2
        atomic_write_text(backup, text, replace=args.force)
        atomic_write_text(source, result.text)
        note(args, f"{source}: upgraded to {CURRENT} (original kept as {source.name}.bak)")
    else:
        _write_out(result.text, args)
    return 0


def _write_out(text: str, args: argparse.Namespace) -> None:
    """The blueprint to -o, which is not the catalogue file it names, even with --force: `migrate bp.yaml -o
    cat.yaml` replaced the catalogue with the blueprint. Found as resolve() finds it, beside the original. Nor
    an existing file without --force (`migrate bp.yaml -o other.yaml` replaced it)."""
    if args.output not in (None, "-"):
        from generator.commands._common import blueprint_inputs, check_outputs
        from generator.findings import BlueprintError
        from generator.load import LoadedBlueprint, load_text

        inputs: list[tuple[str, str | None]] = []
        try:
            model, source = load_text(text, "<stdin>" if args.blueprint == "-" else args.blueprint)
        except BlueprintError:  # a blueprint that does not load names no catalogue file anyone reads
            pass
        else:
            inputs = blueprint_inputs("BLUEPRINT", LoadedBlueprint(model, source, Path(args.blueprint), ""))
        check_outputs([("-o", args.output)], inputs, force=args.force)
    write_text(text, args.output, replace=args.force)


def _validate(text: str, base: Path) -> list[str]:
    """Errors of the upgraded text, checked beside the original (a `catalog:` path stays relative)."""
    import os
    import tempfile

    from generator.findings import BlueprintError
    from generator.pipeline import check

    try:
        fd, name = tempfile.mkstemp(suffix=".yaml", dir=base)
    except OSError:  # a read-only directory: check it elsewhere (only a `catalog:` path would differ)
        fd, name = tempfile.mkstemp(suffix=".yaml")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        try:
            return [f"{f.rule}: {f.message}" for f in check(name).errors]
        except BlueprintError as exc:
            return [f"{f.rule}: {f.message}" for f in exc.findings]
    finally:
        Path(name).unlink(missing_ok=True)
