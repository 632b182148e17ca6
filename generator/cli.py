"""The `blueprint` command: thin argument parsing; each sub-command lives in generator/commands/.

Start-up is kept to argparse: the sub-commands are listed in :data:`COMMANDS` (name, one-line help,
module), so `blueprint --help` and `--version` import no command module, and a command imports only
its own module, whose heavy imports (the model, the catalogue, Rich, the pipeline) sit inside
``run()`` (benchmarks/startup.py measures it; tests/cli/test_startup_imports.py enforces it;
tests/cli/test_command_table.py checks the table equals what the modules register).
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import sys

from blueprints.api_version import API_VERSION  # a constant: the migrate command's one-line help

TYPE_CHECKING = False  # typing itself costs start-up time; mypy treats this name as True
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

COMMANDS_PACKAGE = "generator.commands"
# Commands that make no dataclass and no model: they skip loading the dataclasses' compiled methods and
# Pydantic's plugin switch (the first imports dataclasses, tests/cli/test_startup_imports.py). `explain`
# reads its cached index (generator/rule_index.py); only a miss imports the rules, once.
LIGHT_COMMANDS = ("completion", "explain")

# (name, one-line help, module in generator/commands/), in the order `blueprint --help` lists them (the
# modules' ORDER, then module name). A copy of what each module's register() says, written out so that
# the top-level help costs no import of the 22 modules; tests/cli/test_command_table.py fails when it
# differs from them in any way (a new module, a renamed command, an edited help text, another ORDER).
COMMANDS: tuple[tuple[str, str, str], ...] = (
    (
        "init",
        "scaffold a blueprint that validates (from a few answers, from `advise`, or interactively)",
        "init",
    ),
    ("generate", "validate, then write every output (cabling, ansible, pulumi, slurm, ...)", "generate"),
    ("examples", "list the shipped example blueprints, or copy one (or --all) to start from", "examples"),
    ("validate", "check blueprints against the schema and the performance rules", "validate"),
    ("plan", "build the fabric and physical plan and summarise it", "plan"),
    ("topology", "export the fabric graph (graphml, json, dot, svg)", "topology"),
    ("estimate", "predicted collective bandwidth (nccl-tests busbw) and training sync time", "estimate"),
    ("schema", "print the blueprint JSON Schema (for editors: yaml-language-server)", "schema"),
    (
        "acceptance-report",
        "measured (nccl-tests) vs predicted bus bandwidth per node, rail and collective; names "
        "suspect cables",
        "acceptance_report",
    ),
    ("advise", "recommend GPUs, nodes, topology and fabric for a model (the article's rules)", "advise"),
    ("explain", "explain a rule or diagnostic id (or --list them all)", "explain"),
    (
        "cabling",
        "write the cabling plan: CSV, printable XLSX, NetBox import, expected ibnetdiscover/LLDP",
        "cabling",
    ),
    ("catalog", "list the hardware catalogue's entries (the ids blueprints refer to)", "catalog"),
    ("diff", "compare two blueprints' physical plans (devices, cables, moves, live or not)", "diff"),
    (
        "verify-cabling",
        "compare the fabric as built (ibnetdiscover / LLDP) with the cabling plan",
        "verify_cabling",
    ),
    (
        "sm-guids",
        "OpenSM ftree root/compute-node GUID files from ibnetdiscover output and the plan",
        "sm_guids",
    ),
    (
        "sot",
        "put the plan in the site's source of truth (NetBox or Nautobot): REST push or import files",
        "sot",
    ),
    ("configure", "run the generated Ansible playbooks (ansible-runner) and report per host", "configure"),
    (
        "inventory",
        "write the Ansible inventory from `pulumi stack output --json` (after pulumi up)",
        "inventory",
    ),
    (
        "rehearse",
        "bring the generated network up in namespaces (FRR) and ibsim (OpenSM) and check it",
        "rehearse",
    ),
    ("migrate", f"upgrade a blueprint to the current schema version ({API_VERSION})", "migrate"),
    ("completion", "print a shell completion script (bash or zsh)", "completion"),
)


def terminal_columns() -> int:
    """The terminal's width as shutil.get_terminal_size() gives it (COLUMNS, then the terminal, then 80).

    Written out because argparse imports shutil (with zlib, bz2 and lzma, a tenth of `--help`'s CPU)
    for this one number each time it makes a formatter: the same steps, from its documentation
    (https://docs.python.org/3/library/shutil.html#shutil.get_terminal_size).
    """
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _Formatter(argparse.HelpFormatter):
    """argparse's help layout at the same width, without importing shutil to learn it."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
        **more: Any,  # what later Pythons add (3.14: color), passed on
    ) -> None:
        width = terminal_columns() - 2 if width is None else width  # argparse's own margin of 2
        super().__init__(prog, indent_increment, max_help_position, width, **more)


class _VersionAction(argparse._VersionAction):
    """``--version`` whose text (the installed distribution's version) is read only when asked."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        self.version = version_text()
        super().__call__(parser, namespace, values, option_string)


def version_text() -> str:
    from generator import installed_version

    return f"cluster-blueprint {installed_version()}"


def build_parser(only: str | None = None, top_help: bool = False) -> argparse.ArgumentParser:
    """The parser of every command; with ``only`` naming a command, that command's in full.

    Without ``only`` every command is there in full (the whole parser: completion). The others are there
    by name only when the top-level `--help` lists them (``top_help``) or ``only`` is no command (to refuse
    a misspelt one); a command being run needs no other (23 argparse parsers cost ~10 ms of every
    command, benchmarks/startup.py)."""
    parser = argparse.ArgumentParser(
        prog="blueprint",
        description="Infrastructure-as-code for AI GPU clusters: validate, plan, cable, configure, "
        "deploy, verify.",
        formatter_class=_Formatter,
    )
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    running = not top_help and only is not None and any(name == only for name, _, _ in COMMANDS)
    for name, help, module in COMMANDS:
        if only is None or name == only:
            importlib.import_module(f"{COMMANDS_PACKAGE}.{module}").register(sub)
        elif not running:
            sub.add_parser(name, help=help, formatter_class=_Formatter)
    return parser


def command_word(argv: Sequence[str]) -> str:
    """The sub-command ``argv`` names ('' if none): the first word that is not an option.

    The top-level parser's only options (-h, --version) take no value, so the first other word is
    the command, as argparse will read it.
    """
    for i, arg in enumerate(argv):
        if arg == "--":
            return argv[i + 1] if i + 1 < len(argv) else ""
        if not arg.startswith("-") or arg == "-":
            return arg
    return ""


def command_names() -> list[str]:
    """The command modules: generator/commands/*.py not starting with `_` (what COMMANDS must list).

    A directory listing, not pkgutil.iter_modules: that imports inspect and typing to find the same
    `.py` files.
    """
    import generator.commands as commands_pkg

    names: set[str] = set()
    for folder in commands_pkg.__path__:
        for entry in os.scandir(folder):
            stem, dot, ext = entry.name.partition(".")
            if dot and ext == "py" and stem.isidentifier() and not stem.startswith("_"):
                names.add(stem)
    return sorted(names)


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    if words == ["--version"]:  # the answer needs no parser (argparse's own action gives the same text)
        sys.stdout.write(version_text() + "\n")
        return 0
    word = command_word(words)
    before = words[: words.index(word)] if word in words else words  # the top-level parser's options
    parser = build_parser(only=word, top_help=bool({"-h", "--help"} & set(before)))
    args = parser.parse_args(words)
    if args.command not in LIGHT_COMMANDS:
        from blueprints.dataclass_code import install

        if argv is None:  # the program itself: it exits after this command
            from generator.gcpause import exits_after_command

            exits_after_command()

        without_pydantic_plugins()
        install()  # the dataclasses' compiled methods from the last run (~40 ms of `validate`)
    try:
        code = int(args.func(args) or 0)
    except (Exception, KeyboardInterrupt) as exc:  # never a traceback for a user
        failed = failure(exc)
        if failed is None:
            raise
        return failed
    if argv is None:  # the program itself (not a caller in this process, such as a test): it exits next
        keep_until_exit()
    return code


PLUGIN_LOADER = "pydantic.plugin._loader"  # where Pydantic looks for plugins when it builds a validator


def without_pydantic_plugins() -> None:
    """Let Pydantic build the command's validators without looking for plugins, unless the user asks.

    Pydantic's plugins observe validation (Logfire's instrumentation, say); they change no result. Its
    loader runs when the first validator is built, and imports importlib.metadata (with email, zipfile
    and csv) and reads every installed distribution's entry points to find them: ~25 ms, a twelfth of
    `validate`'s CPU (benchmarks/startup.py), even when plugins are turned off with Pydantic's own switch,
    PYDANTIC_DISABLE_PLUGINS (https://docs.pydantic.dev/latest/concepts/plugins/), because the import
    comes first. So unless that variable is set, the CLI puts in the loader's place a module that answers
    as Pydantic's does when plugins are disabled: none. With the variable set (to anything, e.g. empty to
    load every plugin), Pydantic's loader does as documented. Nothing is written to the environment, so
    the programs a command starts see the user's. tests/startup/test_pydantic_plugins.py installs a
    plugin and checks both ways.
    """
    if "PYDANTIC_DISABLE_PLUGINS" in os.environ or PLUGIN_LOADER in sys.modules:
        return
    import types

    loader = types.ModuleType(PLUGIN_LOADER, "No Pydantic plugins in the blueprint CLI (generator/cli.py).")
    loader.get_plugins = _no_plugins  # type: ignore[attr-defined]
    sys.modules[PLUGIN_LOADER] = loader


def _no_plugins() -> tuple[()]:
    return ()


def keep_until_exit() -> None:
    """Hand every object alive now to the process's exit without the cyclic collector walking it again.

    The interpreter's last collections at exit walk every live object (the model classes, the catalogue,
    Pydantic's schemas: ~30 ms of `validate`'s ~0.4 s CPU, benchmarks/startup.py); ``gc.freeze()`` moves
    them to the permanent generation, which no collection examines
    (https://docs.python.org/3/library/gc.html#gc.freeze). Reference counting still frees them at exit;
    only a reference cycle among them is left to the operating system, and a command has closed its files
    (every output is written by ``with`` blocks) and Python flushes stdout and stderr before this matters.
    """
    import gc

    gc.freeze()


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
        err_console.print(f"[bold red]refused[/]: {safe(exc)} (nothing written)", emoji=False)
        return 2
    if isinstance(exc, KeyboardInterrupt):
        err_console.print("interrupted")
        return 130
    if isinstance(exc, BrokenPipeError):
        return 0
    if _users_path_refused(exc):  # a path of the user's that the file system refuses, said as such
        assert isinstance(exc, OSError)
        where = exc.filename2 if exc.filename2 is not None else exc.filename
        err_console.print(
            f"[bold red]error[/]: {safe(str(where))}: {safe(exc.strerror or str(exc))}", emoji=False
        )
        return None if os.environ.get("BLUEPRINT_DEBUG") else 2
    if isinstance(exc, OSError) and exc.errno in _FULL:  # a write's error names no file: the disk's state
        err_console.print(
            f"[bold red]error[/]: {safe(exc.strerror or str(exc))} while writing (no file is left half "
            "written): free space and run it again",
            emoji=False,
        )
        return None if os.environ.get("BLUEPRINT_DEBUG") else 2
    if isinstance(exc, MemoryError):
        err_console.print(
            "[bold red]out of memory[/]: the design or the files given are too large for this machine"
        )
        return 2
    err_console.print(
        f"[bold red]internal error[/]: {type(exc).__name__}: {safe(exc) or '(no message)'}",
        highlight=False,
    )
    err_console.print(
        "please report this with the blueprint that caused it (set BLUEPRINT_DEBUG=1 for a traceback)"
    )
    return None if os.environ.get("BLUEPRINT_DEBUG") else 3


# no space, over quota, a file over the size limit (ulimit -f): the machine's state, not a fault of the tool
_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def _users_path_refused(exc: BaseException) -> bool:
    """An OSError about a path outside the tool's own installed files: the user's (a name too long, a file
    where a folder must be). One inside them is a fault of the tool, reported as an internal error."""
    if not isinstance(exc, OSError) or exc.filename is None:
        return False
    own = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # holds generator/ and blueprints/
    paths = [os.path.abspath(os.fsdecode(p)) for p in (exc.filename, exc.filename2) if p is not None]
    return not any(os.path.commonpath([own, p]) == own for p in paths)


if __name__ == "__main__":
    sys.exit(main())
