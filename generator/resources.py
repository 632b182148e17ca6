"""Where the shipped templates and playbooks are, installed or in a source tree."""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent


def _find(name: str) -> Path:
    installed = _HERE / "_shipped" / name
    if installed.is_dir():
        return installed
    source = _HERE.parent / name
    if source.is_dir():
        return source
    raise FileNotFoundError(
        f"cannot find the shipped `{name}` directory (looked in {installed} and {source})"
    )


def templates_dir() -> Path:
    return _find("templates")


def playbooks_dir() -> Path:
    return _find("playbooks")


def examples_dir() -> Path:
    return _find("examples")
