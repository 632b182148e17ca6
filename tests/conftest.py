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


# CI runs the suite on pytest-xdist workers (.ci/run: -n auto --dist loadgroup, two on this machine class).
# Tests that start daemons, simulators, network namespaces or a chroot host (the directories, files and marks
# below) share the machine's global state: namespace names, sysctls, the ports of FRR, slurmctld and the
# throw-away Nautobot. They form one group, run in order on one worker, while the other workers take the rest
# a test module at a time (a module's fixtures are built once).
SERIAL_DIRS = frozenset({"realtools", "rehearse"})
SERIAL_FILES = frozenset({"slurm/test_slurm_real.py", "sot/test_nautobot_live.py"})
SERIAL_MARKS = ("realtools", "ansible_host", "needs_tools")
SERIAL_GROUP = "real-tools"


def xdist_group_of(item: pytest.Item) -> str:
    """The xdist group a test runs in: the real-tool group, or its own module."""
    rel = Path(item.path).resolve().relative_to(Path(__file__).resolve().parent).as_posix()
    serial = (
        rel.split("/")[0] in SERIAL_DIRS
        or rel in SERIAL_FILES
        or any(item.get_closest_marker(mark) for mark in SERIAL_MARKS)
    )
    return SERIAL_GROUP if serial else rel


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        item.add_marker(pytest.mark.xdist_group(xdist_group_of(item)))


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
