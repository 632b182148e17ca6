"""The `blueprint` command: thin argument parsing; each sub-command lives in generator/commands/.

Start-up is kept to argparse: every command module imports only argparse-level things at top level
and its heavy modules (the model, the catalogue, Rich, the pipeline) inside ``run()``, and the
version is read only when ``--version`` is asked (benchmarks/startup.py measures it;
tests/cli/test_startup_imports.py enforces it).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

import generator.commands as commands_pkg

TYPE_CHECKING = False  # typing itself costs start-up time; mypy treats this name as True
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


class _VersionAction(argparse._VersionAction):
    """``--version`` whose text (the installed distribution's version) is read only when asked."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        from generator import installed_version

        self.version = f"cluster-blueprint {installed_version()}"
        super().__call__(parser, namespace, values, option_string)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="blueprint",
        description="Infrastructure-as-code for AI GPU clusters: validate, plan, cable, configure, "
        "deploy, verify.",
    )
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    modules = [importlib.import_module(f"{commands_pkg.__name__}.{name}") for name in command_names()]
    for module in sorted(modules, key=lambda m: getattr(m, "ORDER", 50)):
        module.register(sub)
    return parser


def command_names() -> list[str]:
    """The command modules: generator/commands/*.py not starting with `_`.

    A directory listing, not pkgutil.iter_modules: that imports inspect and typing, which cost more
    start-up than all the command modules together, to find the same `.py` files.
    """
    names: set[str] = set()
    for folder in commands_pkg.__path__:
        for entry in os.scandir(folder):
            stem, dot, ext = entry.name.partition(".")
            if dot and ext == "py" and stem.isidentifier() and not stem.startswith("_"):
                names.add(stem)
    return sorted(names)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (Exception, KeyboardInterrupt) as exc:  # never a traceback for a user
        code = failure(exc)
        if code is None:
            raise
        return code


def failure(exc: BaseException) -> int | None:
    """Say what went wrong in one located line and choose the exit code (None: re-raise, debugging)."""
    # Imported here: these bring Rich and the findings model, which a successful command may not need.
    from generator.commands._common import err_console, print_blueprint_error
    from generator.findings import BlueprintError
    from generator.foreign import ForeignInputError
    from generator.fsutil import OutputRefused
    from generator.report import safe

    if isinstance(exc, BlueprintError):
        print_blueprint_error(exc)
        return 2
    if isinstance(exc, ForeignInputError):
        err_console.print(f"{safe(exc.where)}: [bold red]cannot use this file[/]: {safe(exc.message)}")
        return 2
    if isinstance(exc, OutputRefused):
        err_console.print(f"[bold red]refused[/]: {safe(exc)} (nothing written)")
        return 2
    if isinstance(exc, KeyboardInterrupt):
        err_console.print("interrupted")
        return 130
    if isinstance(exc, BrokenPipeError):
        return 0
    if isinstance(exc, MemoryError):
        err_console.print("[bold red]out of memory[/]: this design is too large to process on this machine")
        return 2
    err_console.print(
        f"[bold red]internal error[/]: {type(exc).__name__}: {safe(exc) or '(no message)'}",
        highlight=False,
    )
    err_console.print(
        "please report this with the blueprint that caused it (set BLUEPRINT_DEBUG=1 for a traceback)"
    )
    return None if os.environ.get("BLUEPRINT_DEBUG") else 3


if __name__ == "__main__":
    sys.exit(main())
