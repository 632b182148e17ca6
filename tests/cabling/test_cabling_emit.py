"""`emit` on two cores: a forked child writes part of the formats; the files must be exactly what one
process writes, and a failure on either side must leave nothing behind and surface as usual."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from cabling_plans import SUPERPOD, cluster_of, plan_of

import generator.emit.cabling as cabling
from generator.emit.cabling import CablingError, emit, render
from generator.forked import Child, can_fork

pytestmark = pytest.mark.skipif(not can_fork(), reason="needs os.fork and two CPUs")


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def forced(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fork even for the reference example's ~1,000 cables."""
    monkeypatch.setattr(cabling, "FORK_MIN_CABLES", 0)


def _expected() -> dict[str, bytes]:
    return render(cluster_of(SUPERPOD), plan_of(SUPERPOD))


def test_forked_emit_writes_what_one_process_renders(forced: None, tmp_path: Path) -> None:
    emit(cluster_of(SUPERPOD), plan_of(SUPERPOD), tmp_path / "out")
    files = _tree(tmp_path / "out")
    assert files == _expected()
    assert {"cabling.xlsx", "cables.csv", "netbox/cables.csv"} <= set(files)  # both sides' formats
    assert [p.name for p in (tmp_path / "out").iterdir() if p.name.startswith(".")] == []  # no staging left


def test_unforked_emit_is_the_same(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(cabling, "can_fork", lambda: False)
    monkeypatch.setattr(cabling, "FORK_MIN_CABLES", 0)
    emit(cluster_of(SUPERPOD), plan_of(SUPERPOD), tmp_path / "out")
    assert _tree(tmp_path / "out") == _expected()


def test_an_error_in_the_childs_part_is_raised_and_nothing_is_written(
    forced: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def broken(*_args: object) -> bytes:
        raise CablingError("the workbook cannot be made")

    monkeypatch.setattr(cabling, "render_xlsx", broken)
    with pytest.raises(CablingError, match="workbook cannot be made"):
        emit(cluster_of(SUPERPOD), plan_of(SUPERPOD), tmp_path / "out")
    assert list((tmp_path / "out").iterdir()) == []


def test_a_child_that_dies_is_replaced_by_the_parent(
    forced: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    parent = os.getpid()
    real = cabling.render_xlsx

    def dies_in_child(*args: object) -> bytes:
        if os.getpid() != parent:
            os._exit(7)  # as if killed: no exception, no files
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(cabling, "render_xlsx", dies_in_child)
    emit(cluster_of(SUPERPOD), plan_of(SUPERPOD), tmp_path / "out")
    assert _tree(tmp_path / "out") == _expected()


def test_an_error_in_the_parents_part_stops_the_child(
    forced: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def broken(*_args: object) -> dict[str, str]:
        raise CablingError("netbox import cannot be made")

    children: list[Child] = []

    class Recorded(Child):
        def __init__(self, work: Callable[[], None]) -> None:
            super().__init__(work)
            children.append(self)

    monkeypatch.setattr(cabling, "render_netbox", broken)
    monkeypatch.setattr(cabling, "Child", Recorded)
    with pytest.raises(CablingError, match="netbox import"):
        emit(cluster_of(SUPERPOD), plan_of(SUPERPOD), tmp_path / "out")
    assert list((tmp_path / "out").iterdir()) == []
    assert len(children) == 1
    with pytest.raises(ChildProcessError):  # the child was stopped and reaped, not left a zombie
        os.waitpid(children[0].pid, os.WNOHANG)
