"""Helpers shared by the sub-commands."""

from __future__ import annotations

import sys

from rich.console import Console

from generator.findings import BlueprintError
from generator.report import summary_line, text_report

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


def print_blueprint_error(exc: BlueprintError) -> None:
    text_report(exc.findings, err_console)
    err_console.print(f"[bold red]cannot use this blueprint[/]: {summary_line(exc.findings)}")


def write_text(text: str, output: str | None) -> None:
    """Write to a file atomically, or to stdout."""
    if output in (None, "-"):
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    from generator.fsutil import atomic_write_text, checked_output_file

    atomic_write_text(checked_output_file(output), text)
