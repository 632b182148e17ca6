"""`generate` on two cores: on a large plan every output but the cabling plan is made in a forked child.
The build must be byte for byte what one process makes, and a child that fails or dies must change
nothing but who does the work."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import EXAMPLES

import generator.build as build
import generator.emit.slurm as slurm
from generator.findings import BlueprintError, Finding, Severity
from generator.forked import can_fork
from generator.pipeline import check

pytestmark = pytest.mark.skipif(not can_fork(), reason="needs os.fork and two CPUs")
EXAMPLE = EXAMPLES / "superpod-h100-4su.yaml"


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _generate(out: Path) -> dict[str, bytes]:
    build.generate(check(str(EXAMPLE)), out)
    return _tree(out)


@pytest.fixture(scope="module")
def one_process(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(build, "can_fork", lambda: False)
        return _generate(tmp_path_factory.mktemp("single") / "out")


@pytest.fixture
def forced(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fork even for the example's ~3,000 cables."""
    monkeypatch.setattr(build, "FORK_MIN_CABLES", 0)


def test_forked_build_is_what_one_process_makes(
    forced: None, one_process: dict[str, bytes], tmp_path: Path
) -> None:
    files = _generate(tmp_path / "out")
    assert files == one_process
    # the child's outputs and the parent's are both there
    assert {"slurm/topology.conf", "cabling/cables.csv", "manifest.json"} <= set(files)


def test_a_child_that_dies_is_replaced_by_the_parent(
    forced: None, one_process: dict[str, bytes], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    parent = os.getpid()
    real = slurm.emit

    def dies_in_child(cluster: object, plan: object, out: Path) -> None:
        if os.getpid() != parent:
            (out / "half-written").write_text("x")  # the parent must not keep a dead child's files
            os._exit(7)
        real(cluster, plan, out)  # type: ignore[arg-type]

    monkeypatch.setattr(slurm, "emit", dies_in_child)
    assert _generate(tmp_path / "out") == one_process


def test_an_error_in_the_childs_part_is_raised_and_nothing_is_written(
    forced: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def broken(*_args: object) -> None:
        raise BlueprintError([Finding("PLN001", Severity.ERROR, "no topology for you")])

    monkeypatch.setattr(slurm, "emit", broken)
    with pytest.raises(BlueprintError, match="no topology"):
        build.generate(check(str(EXAMPLE)), tmp_path / "out")
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []


def test_the_child_dies_with_its_parent() -> None:
    """A parent killed with SIGKILL (the operator's `kill -9`, the OOM killer) left its child writing into the
    staging folder and holding the output folder's lock, so a rerun was refused until the child ended."""
    import signal
    import subprocess
    import sys
    import time

    script = (
        "import os, sys, time\n"
        "from generator.forked import Child\n"
        "child = Child(lambda: time.sleep(60))\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        pid = int(parent.stdout.readline())
        time.sleep(0.5)  # the child has asked the kernel by now (it does so first)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(timeout=10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.1)
        assert not _alive(pid), "the child outlived its parent"
    finally:
        parent.kill()
        parent.wait(timeout=10)


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for init to reap it counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ", 1)[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False
