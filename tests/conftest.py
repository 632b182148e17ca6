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


# CI runs the suite on pytest-xdist workers (.ci/run: -n auto, two on this machine class). Tests that start
# daemons, simulators, network namespaces or a chroot host share the machine's global state: namespace names,
# sysctls, the ports of FRR, slurmctld and the throw-away Nautobot. Their files form one work unit, run in order
# on one worker, while the other workers take the rest a test module at a time (a module's fixtures are built
# once). The scheduler sees only node ids, so the unit is named by path; the marks that say a test needs such
# a tool are checked against it at collection.
SERIAL_DIRS = ("realtools/", "rehearse/")
SERIAL_FILES = frozenset(
    {"slurm/test_slurm_real.py", "sot/test_nautobot_live.py", "verify/test_ib_node_ports.py"}
)
SERIAL_MARKS = ("realtools", "ansible_host")
SERIAL_UNIT = "real-tools"
TESTS = Path(__file__).resolve().parent


def is_serial(rel: str) -> bool:
    """Whether the test file ``rel`` (relative to tests/) runs in the serial unit: the real-tool directories,
    the chroot-host playbook runs (ansible_playbooks/test_*_run.py) and the files named above."""
    return (
        rel.startswith(SERIAL_DIRS)
        or rel in SERIAL_FILES
        or (rel.startswith("ansible_playbooks/test_") and rel.endswith("_run.py"))
    )


def work_unit(nodeid: str) -> str:
    """The xdist work unit of a node id (``tests/realtools/test_x.py::test_y`` from the repository root)."""
    path = nodeid.split("::", 1)[0]
    rel = path.removeprefix("tests/")
    return SERIAL_UNIT if is_serial(rel) else path


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    from xdist.scheduler import LoadScopeScheduling

    class _ByUnit(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

        def _assign_work_unit(self, node: object) -> None:
            # the serial unit first: it is the longest (~20 min), the other worker fills in around it
            if SERIAL_UNIT in self.workqueue:
                self.workqueue.move_to_end(SERIAL_UNIT, last=False)
            super()._assign_work_unit(node)  # type: ignore[arg-type]

    return _ByUnit(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test marked as needing real tools or the chroot host must be in the serial unit."""
    for item in items:
        rel = Path(item.path).resolve().relative_to(TESTS).as_posix()
        marked = [m for m in SERIAL_MARKS if item.get_closest_marker(m)]
        if marked and not is_serial(rel):
            raise pytest.UsageError(
                f"{item.nodeid} is marked {marked[0]} but {rel} is not in the serial unit (tests/conftest.py)"
            )


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
