"""A file made at the -o path while a command runs is not replaced without --force (review b180): every
command checked for an existing output first (check_outputs), then wrote it with os.replace, which replaces
whatever has the name by then: a file another run or the user made between the check and the rename was
lost, exit 0. Without --force the write now makes the name only if it is free (fsutil._create: link(2), or
an O_EXCL claim on a file system without hard links), so that file is refused like one there from the start:
exit 2, the file as it was, no temporary left beside it."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from test_migrate import _old_file, old_version
from test_outputs_replaced_only_with_force import CASES

import generator.fsutil as fsutil
from generator.fsutil import OutputRefused, atomic_write_bytes

THEIRS = b"made by someone else while the command ran\n"
__all__ = ["old_version"]  # the fixture, found by pytest in this module's names


def _race(monkeypatch: pytest.MonkeyPatch, target: Path, theirs: bytes | None = THEIRS) -> None:
    """Every write of ``target`` sees it made (``theirs``, or a dangling symlink for None) once its own
    bytes are written and before they are given the name: after every check the command makes."""
    real = fsutil.atomic_write_parts

    def racing(path: str | Path, parts: Iterable[bytes], **kw: Any) -> None:
        def then_theirs() -> Iterator[bytes]:
            yield from parts
            if os.path.abspath(path) == str(target) and not os.path.lexists(target):
                if theirs is None:
                    target.symlink_to(target.parent / "nowhere")
                else:
                    target.write_bytes(theirs)

        real(path, then_theirs(), **kw)

    monkeypatch.setattr(fsutil, "atomic_write_parts", racing)


def _refused_and_untouched(code: int, out: str, err: str, target: Path) -> None:
    assert code == 2, out + err
    assert "exists; add --force to replace it" in err and "nothing written" in err, err
    assert target.read_bytes() == THEIRS
    assert [p.name for p in target.parent.iterdir()] == [target.name]  # no temporary left beside it


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_file_made_after_the_check_is_not_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    args, name, _ = CASES[case]
    target = tmp_path / "mine" / name
    target.parent.mkdir()
    argv = args(tmp_path, target)
    _race(monkeypatch, target)
    _refused_and_untouched(*run_cli(*argv), target)


@pytest.mark.parametrize("case", ["plan", "schema", "advise --write", "estimate --plot"])
def test_with_force_it_is_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    args, name, ok = CASES[case]
    target = tmp_path / "mine" / name
    target.parent.mkdir()
    _race(monkeypatch, target)
    code, out, err = run_cli(*args(tmp_path, target), "--force")
    assert code == ok, out + err
    assert target.read_bytes() != THEIRS and target.stat().st_size > 0
    assert [p.name for p in target.parent.iterdir()] == [name]


def test_a_symlink_made_after_the_check_is_not_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "notes.txt"
    _race(monkeypatch, target, theirs=None)
    code, out, err = run_cli("schema", "-o", str(target))
    assert code == 2 and "exists; add --force to replace it" in err, out + err
    assert target.is_symlink() and sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_examples_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """examples --all writes files of its own naming into DIR."""
    out = tmp_path / "examples"
    out.mkdir()
    target = out / "single-dgx-h100.yaml"
    _race(monkeypatch, target)
    code, _, err = run_cli("examples", "--all", "-o", str(out))
    assert code == 2 and "exists; add --force to replace it" in err, err
    assert target.read_bytes() == THEIRS and not [p for p in out.iterdir() if p.name.startswith(".")]


@pytest.mark.usefixtures("old_version")
def test_migrate_in_place_backup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """migrate --in-place keeps the original as FILE.bak, written before the blueprint itself: a FILE.bak
    made meanwhile is kept, and so is the blueprint."""
    bp = _old_file(tmp_path)
    before = bp.read_bytes()
    backup = bp.with_name(bp.name + ".bak")
    _race(monkeypatch, backup)
    code, out, err = run_cli("migrate", str(bp), "--in-place")
    assert code == 2 and "exists; add --force to replace it" in err, out + err
    assert backup.read_bytes() == THEIRS and bp.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [bp.name, backup.name]


@pytest.mark.parametrize("no_links", [errno.EPERM, errno.EOPNOTSUPP])
def test_without_hard_links_the_name_is_still_claimed_atomically(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_links: int
) -> None:
    """A file system without hard links (FAT: EPERM): an O_EXCL claim refuses a file made meanwhile just as
    link(2) does, and a free name is written whole."""

    def no_link(src: str, dst: str, **_: Any) -> None:
        raise OSError(no_links, os.strerror(no_links), src, None, dst)

    monkeypatch.setattr(fsutil.os, "link", no_link)
    target = tmp_path / "out.txt"
    atomic_write_bytes(target, b"ours\n", replace=False)
    assert target.read_bytes() == b"ours\n" and [p.name for p in tmp_path.iterdir()] == ["out.txt"]
    with pytest.raises(OutputRefused, match="exists; add --force to replace it"):
        atomic_write_bytes(target, b"again\n", replace=False)
    assert target.read_bytes() == b"ours\n" and [p.name for p in tmp_path.iterdir()] == ["out.txt"]
    made = tmp_path / "made.txt"
    _race(monkeypatch, made)
    with pytest.raises(OutputRefused, match="exists; add --force to replace it"):
        fsutil.atomic_write_parts(made, iter([b"ours\n"]), replace=False)
    assert made.read_bytes() == THEIRS and sorted(p.name for p in tmp_path.iterdir()) == [
        "made.txt",
        "out.txt",
    ]


def test_a_folder_made_after_the_check_is_refused_as_existing(tmp_path: Path) -> None:
    (tmp_path / "out.txt").mkdir()
    with pytest.raises(OutputRefused, match="exists; add --force to replace it"):
        atomic_write_bytes(tmp_path / "out.txt", b"ours\n", replace=False)
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"] and (tmp_path / "out.txt").is_dir()
