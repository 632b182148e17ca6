"""Shared fixtures. Tests import the *installed* package (see .ci/run), not the source tree."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
FIXTURES = Path(__file__).resolve().parent / "fixtures"

os.environ.setdefault("COLUMNS", "200")  # wide Rich output in captured tests

# pytest puts tests/ on sys.path; make sure the repo root is NOT, so `import generator` is the install.
if os.environ.get("BLUEPRINT_TEST_INSTALLED"):
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != REPO]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        help="rewrite tests/golden/examples from this build instead of comparing (commit the result)",
    )


@pytest.fixture(scope="session")
def examples() -> list[Path]:
    return sorted(EXAMPLES.glob("*.yaml"))


def run_cli(*args: str) -> tuple[int, str, str]:
    """Run `blueprint ARGS` in-process; returns (exit code, stdout, stderr)."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from generator.cli import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(autouse=True)
def _needs_tools(request: pytest.FixtureRequest) -> None:
    """``pytest.mark.needs_tools(missing, hint=...)``: skip outside CI, fail in CI (see real_tools.py)."""
    from real_tools import needs

    for mark in request.node.iter_markers("needs_tools"):
        needs(mark.args[0], mark.kwargs.get("hint", ""))
