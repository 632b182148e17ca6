"""The `blueprint` command: thin argument parsing; each sub-command lives in generator/commands/."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

import generator.commands as commands_pkg
from generator import __version__
from generator.commands._common import err_console, print_blueprint_error
from generator.findings import BlueprintError
from generator.foreign import ForeignInputError
from generator.fsutil import OutputRefused
from generator.report import safe


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="blueprint",
        description="Infrastructure-as-code for AI GPU clusters: validate, plan, cable, configure, "
        "deploy, verify.",
    )
    parser.add_argument("--version", action="version", version=f"cluster-blueprint {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    modules = []
    for info in pkgutil.iter_modules(commands_pkg.__path__):
        if not info.name.startswith("_"):
            modules.append(importlib.import_module(f"{commands_pkg.__name__}.{info.name}"))
    for module in sorted(modules, key=lambda m: getattr(m, "ORDER", 50)):
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except BlueprintError as exc:
        print_blueprint_error(exc)
        return 2
    except ForeignInputError as exc:
        err_console.print(f"{safe(exc.where)}: [bold red]cannot use this file[/]: {safe(exc.message)}")
        return 2
    except OutputRefused as exc:
        err_console.print(f"[bold red]refused[/]: {safe(exc)} (nothing written)")
        return 2
    except KeyboardInterrupt:
        err_console.print("interrupted")
        return 130
    except BrokenPipeError:
        return 0
    except MemoryError:
        err_console.print("[bold red]out of memory[/]: this design is too large to process on this machine")
        return 2
    except Exception as exc:  # never a traceback for a user; say what broke in one line
        err_console.print(
            f"[bold red]internal error[/]: {type(exc).__name__}: {safe(exc) or '(no message)'}",
            highlight=False,
        )
        err_console.print(
            "please report this with the blueprint that caused it (set BLUEPRINT_DEBUG=1 for a traceback)"
        )
        import os

        if os.environ.get("BLUEPRINT_DEBUG"):
            raise
        return 3


if __name__ == "__main__":
    sys.exit(main())
