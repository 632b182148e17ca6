"""Helpers shared by the sub-commands: consoles, the common options, tables that never truncate.

Every command registers through :func:`command` and the ``add_*`` helpers so that the positional
argument, the common flags (``--format``, ``--quiet``, ``-o``, ``--force``, ``-`` for stdin), their help
texts and the exit-code epilog are spelled the same everywhere. New commands should use them too.
"""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import contextmanager

# Rich (its console alone costs several times Python's own start-up) and the findings model are
# imported inside the functions that print, so `--help`, `--version` and completion never load them.
TYPE_CHECKING = False  # typing itself costs start-up time; mypy treats this name as True
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from pathlib import Path

    from rich.console import Console
    from rich.table import Table

    from generator.findings import BlueprintError
    from generator.load import LoadedBlueprint

# Exit codes, identical in meaning for every command (also printed under each command's --help).
EXIT_OK = 0  # done; nothing to report (valid, identical, every host ok, ...)
EXIT_FINDINGS = 1  # ran, and found something: rule errors, differences, failed hosts, refused build
EXIT_UNUSABLE = 2  # the input or the command line cannot be used (file, YAML, schema, catalogue, options)
EXIT_INTERNAL = 3  # a bug in cluster-blueprint, never a problem with the user's input
EXIT_CODES_EPILOG = (
    "exit codes: 0 ok; 1 findings (rule errors, differences, failures); 2 unusable input or options; "
    "3 internal error (a bug: please report it)"
)


def seconds(low: float, high: float) -> Callable[[str], float]:
    """An option's parser of a time in seconds, a plain decimal from ``low`` (excluded) to ``high``: float()
    alone also takes `nan`, `inf`, `1e999` and negative numbers, which a wait cannot use."""

    def parse(text: str) -> float:
        plain = text.isascii() and len(text) <= 20 and text.replace(".", "", 1).isdigit()
        if plain and low < float(text) <= high:
            return float(text)
        shown = f"`{text[:40]}`" if text.isascii() and text.isprintable() else "its value"
        raise argparse.ArgumentTypeError(f"{shown}: give seconds above {low:g} and at most {high:g}")

    return parse


BLUEPRINT_METAVAR = "BLUEPRINT"
BLUEPRINT_HELP = "blueprint YAML file, or - to read it from standard input"
PIPE_WIDTH = 1000  # not a terminal: lay tables out at their natural width, never cut an id


def new_console(stderr: bool = False) -> Console:
    """A Console that, when its output is not a terminal, is wide enough never to truncate a table.

    Rich otherwise assumes 80 columns (or the width of a terminal on another descriptor) and cuts
    cells with an ellipsis, which breaks ids that users copy from piped output. Colour is already
    off when not a terminal (and with NO_COLOR).
    """
    from rich.console import Console, ConsoleDimensions

    class _PipeAwareConsole(Console):
        def _get_size(self) -> ConsoleDimensions:
            size = Console.size.fget(self)  # type: ignore[attr-defined]
            if self._width is None and "COLUMNS" not in os.environ and not self.is_terminal:
                return ConsoleDimensions(PIPE_WIDTH, size.height)
            return size

        size = property(_get_size, Console.size.fset)  # type: ignore[attr-defined,assignment]

    return _PipeAwareConsole(stderr=stderr, highlight=False, soft_wrap=True)


class _LazyConsole:
    """Stands for a Rich console created on first use: importing a command module costs no Rich.

    Rich looks up the output stream on every write (sys.stdout/sys.stderr at that moment), so creating
    the console later prints to exactly the same place as creating it at import did.
    """

    def __init__(self, stderr: bool) -> None:
        object.__setattr__(self, "_stderr", stderr)
        object.__setattr__(self, "_console", None)

    def real(self) -> Console:
        made = object.__getattribute__(self, "_console")
        if made is None:
            made = new_console(stderr=object.__getattribute__(self, "_stderr"))
            object.__setattr__(self, "_console", made)
        return made

    def __getattr__(self, name: str) -> object:
        return getattr(self.real(), name)

    def __setattr__(self, name: str, value: object) -> None:
        setattr(self.real(), name, value)

    def __enter__(self) -> Console:
        return self.real().__enter__()

    def __exit__(self, *exc: object) -> None:
        self.real().__exit__(*exc)  # type: ignore[arg-type]


console: Console = _LazyConsole(stderr=False)  # type: ignore[assignment]
err_console: Console = _LazyConsole(stderr=True)  # type: ignore[assignment]


def print_blueprint_error(exc: BlueprintError) -> None:
    from generator.report import summary_line, text_report

    text_report(exc.findings, err_console)
    err_console.print(f"[bold red]cannot use this blueprint[/]: {summary_line(exc.findings)}")


def write_text(text: str, output: str | None, *, replace: bool) -> None:
    """Write to a file atomically, or to stdout (no output, or `-`). ``replace`` is the command's --force:
    without it an existing file is refused, one made since check_outputs looked included."""
    if output in (None, "-"):
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    from generator.fsutil import atomic_write_text, checked_output_file

    atomic_write_text(checked_output_file(output), text, replace=replace)


FORCE_HELP = "replace the -o file if it exists (a file the command reads is never replaced)"


def file_name(text: str) -> str:
    """An option's parser of a file name: an empty one names no file (it used to be taken as none given)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty file name names no file")
    return text


def check_outputs(
    outputs: Sequence[tuple[str, str | None]],
    inputs: Sequence[tuple[str, str | None]],
    *,
    force: bool | None,
) -> None:
    """Before anything is written: each named output (option, path; `-` is standard output) is a usable file
    and none is another output or one of the command's inputs, which writing it would replace (`estimate
    bp.yaml -o bp.yaml` replaced the blueprint with the report), even with --force; and unless ``force`` (the
    command's --force), none exists already (`topology bp.yaml -o notes.txt` replaced the user's notes). Else
    OutputRefused (from generator.fsutil). A command that reads a blueprint calls it twice: before reading
    (an existing file is refused then, not after seconds of work) and once the catalogue file the blueprint
    names is known, which is never replaced. ``force=None`` leaves existing files to the command: a folder's
    command (cabling, sm-guids) decides which of its files it replaces."""
    named = [(o, p) for o, p in outputs if p is not None and p not in ("", "-")]
    if not named:  # nothing to check: `explain ID` and every print to standard output import no more
        return
    from generator.fsutil import FORCE_HINT, OutputRefused, checked_output_file

    seen = [(o, p) for o, p in inputs if p is not None and p not in ("", "-")]
    for option, path in named:
        checked_output_file(path)
        for other, other_path in seen:
            if _same_file(path, other_path):
                raise OutputRefused(f"{option} {path} is also {other}: writing it would replace that file")
        seen.append((option, path))
    # after the inputs: "is also BLUEPRINT" tells more than "exists", and --force is no cure for it
    if force is False:
        for option, path in named:
            if os.path.lexists(path):
                raise OutputRefused(f"{option} {path} exists; {FORCE_HINT}")


def build_files(build: Path) -> list[tuple[str, str | None]]:
    """The files of a build a command must not write over (for ``check_outputs``): every file its manifest
    lists, and the manifest itself."""
    from generator.build import MANIFEST, read_manifest

    owned = read_manifest(build) or {}
    return [(f"the build's {rel}", str(build / rel)) for rel in [*owned, MANIFEST]]


def blueprint_inputs(label: str, loaded: LoadedBlueprint) -> list[tuple[str, str | None]]:
    """The files a loaded blueprint was read from (for ``check_outputs``): the blueprint itself, and the
    catalogue file its ``catalog:`` names, where resolve() reads it (`plan bp.yaml -o cat.yaml` replaced the
    catalogue with the report). A blueprint read from standard input (`-`) is no file; its catalogue is."""
    from generator.resolve import catalog_path

    files: list[tuple[str, str | None]] = [(label, str(loaded.path))]
    where = catalog_path(loaded)  # the resolver's own answer: the file protected is the file read
    if where is not None:
        files.append((f"the catalogue file {label} names (catalog: {loaded.blueprint.catalog})", str(where)))
    return files


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist yet: the same name is the same file
        return os.path.abspath(a) == os.path.abspath(b)


@contextmanager
def text_output(output: str | None, *, replace: bool) -> Iterator[Console]:
    """The console a text report goes to: stdout, or (with -o FILE) a file written whole at the end
    (``replace``: write_text's)."""
    if output in (None, "-"):
        yield console
        return
    import io

    from rich.console import Console

    buf = io.StringIO()
    yield Console(file=buf, width=PIPE_WIDTH, highlight=False, soft_wrap=True, no_color=True)
    write_text(buf.getvalue(), output, replace=replace)


def print_table(table: Table, out: Console | None = None, keys: Sequence[int] = (0,)) -> None:
    """Print a table whose cells are never cut with an ellipsis.

    The ``keys`` columns (ids users copy) are never wrapped either: they keep their full width and
    the other columns fold instead, so a narrow terminal shows every character of every id.
    """
    from rich.cells import cell_len
    from rich.text import Text

    for i, column in enumerate(table.columns):
        column.overflow = "fold"
        if i in keys:
            column.no_wrap = True
            # _cells is where Table keeps a column's cells; reading it is the only way to size the column.
            # A Text cell (data shown as it is, never markup) counts by its plain text.
            cells = [c if isinstance(c, str) else c.plain for c in column._cells if isinstance(c, str | Text)]
            column.min_width = max([cell_len(str(column.header)), *(cell_len(c) for c in cells)])
    (out or console).print(table)


def note(args: argparse.Namespace, message: str) -> None:
    """A progress or summary message on stderr, silenced by --quiet (errors are never silenced). Plain text,
    never markup: it names the user's files (`--work-order 'wo[/]'` was a MarkupError, exit 3, and
    `wo[red]z` was shown as `woz`); escape sequences and non-UTF-8 bytes of a name are shown, not sent."""
    if not getattr(args, "quiet", False):
        from generator.foreign import path_text
        from generator.safetext import terminal

        err_console.print(terminal(path_text(message)), highlight=False, markup=False, emoji=False)


# --- options -------------------------------------------------------------------------------------


class _ParagraphFormatter(argparse.HelpFormatter):
    """Wraps the description and epilog like argparse does, but keeps the line breaks written in them."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        import textwrap

        return "\n".join(
            textwrap.fill(line, width, initial_indent=indent, subsequent_indent=indent) if line else ""
            for line in text.splitlines()
        )


def command(
    sub: argparse._SubParsersAction, name: str, help: str, description: str | None = None
) -> argparse.ArgumentParser:
    """A sub-command parser with the shared epilog (exit codes) and formatting."""
    return sub.add_parser(
        name,
        help=help,
        description=description or help[:1].upper() + help[1:] + ".",
        epilog=EXIT_CODES_EPILOG,
        formatter_class=_ParagraphFormatter,
    )


def add_blueprint(p: argparse.ArgumentParser, *, many: bool = False, help: str | None = None) -> None:
    """The positional blueprint argument: always ``blueprint`` (``BLUEPRINT...`` when several)."""
    if many:
        p.add_argument(
            "blueprint",
            nargs="+",
            metavar=BLUEPRINT_METAVAR,
            help=help or "blueprint YAML files (- reads one from standard input)",
        )
    else:
        p.add_argument("blueprint", metavar=BLUEPRINT_METAVAR, help=help or BLUEPRINT_HELP)


def add_format(
    p: argparse.ArgumentParser,
    choices: Sequence[str] = ("text", "json"),
    default: str | None = "text",
    help: str | None = None,
) -> None:
    text = help or "output format"
    p.add_argument(
        "--format",
        choices=list(choices),
        default=default,
        help=f"{text} (default: {default})" if default else text,
    )


def add_output(
    p: argparse.ArgumentParser,
    help: str = "write the output to this file instead of standard output (- for standard output)",
    metavar: str = "FILE",
    default: str | None = None,
) -> None:
    # an empty name names no file: `-o ""` was taken as no -o by some commands, a file that "exists" by others
    p.add_argument("-o", "--output", metavar=metavar, default=default, help=help, type=file_name)


def add_quiet(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print only errors and the requested output (no progress or summary lines)",
    )


def add_common(
    p: argparse.ArgumentParser,
    formats: Sequence[str] = ("text", "json"),
    default_format: str | None = "text",
    format_help: str | None = None,
    output_help: str | None = None,
    output_metavar: str = "FILE",
    output_default: str | None = None,
    force_help: str | None = FORCE_HELP,
) -> None:
    """--format, -o/--output, --force and --quiet, the flags every command has. --force is the one flag that
    lets a command replace a file the user named (check_outputs refuses it otherwise); ``force_help=None``
    only for a command that writes no file of the user's (generate replaces its own build folder whole)."""
    add_format(p, formats, default_format, format_help)
    if output_help:
        add_output(p, output_help, output_metavar, output_default)
    else:
        add_output(p, metavar=output_metavar, default=output_default)
    if force_help is not None:
        p.add_argument("--force", action="store_true", help=force_help)
    add_quiet(p)
