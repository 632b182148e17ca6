"""Dataclasses made with the kept code have the methods plain dataclasses makes, and a bad file is not used.

The oracle is the standard library's dataclasses itself: the same class statements run once with the
module's own ``exec`` and once through a CodeCache (filled, then read back by another CodeCache as the next
process would), and every generated method's code is compared, with the classes' behaviour.
"""

from __future__ import annotations

import atexit
import dataclasses
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from blueprints.dataclass_code import FILE, CodeCache, install

ROOT = Path(__file__).resolve().parents[2]

CLASSES = """
from dataclasses import dataclass, field
from typing import ClassVar


@dataclass(frozen=True)
class Point:
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()


@dataclass(order=True, slots=True)
class Item:
    name: str
    weight: float = field(default=1.0, compare=False)
    parts: list[int] = field(default_factory=list)
    kind: ClassVar[str] = "item"


@dataclass(kw_only=True, eq=False)
class Options:
    verbose: bool = False
    level: int
"""

METHODS = (
    *("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__"),
    *("__lt__", "__le__", "__gt__", "__ge__"),
)


def _make(cache: CodeCache | None, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The classes of CLASSES, made by dataclasses with ``cache`` as its ``exec`` (None: its own)."""
    with monkeypatch.context() as patch:
        if cache is not None:
            patch.setattr(dataclasses, "exec", cache.exec, raising=False)
        namespace: dict[str, Any] = {"__name__": "made"}
        exec(compile(CLASSES, "<classes>", "exec", dont_inherit=True), namespace)  # annotations as objects
    return namespace


def _codes(cls: type) -> dict[str, Any]:
    return {m: getattr(cls.__dict__.get(m), "__code__", None) for m in METHODS if m in cls.__dict__}


def _same_classes(made: dict[str, Any], plain: dict[str, Any]) -> None:
    for name in ("Point", "Item", "Options"):
        codes, expected = _codes(made[name]), _codes(plain[name])
        assert codes.keys() == expected.keys() and len(codes) >= 2
        for method, code in codes.items():
            assert code == expected[method], (name, method)  # co_code, constants, names, line table...
    point, item = made["Point"](1, 2), made["Item"]("a", 3.0)
    assert repr(point) == "Point(x=1, y=2, tags=())" and point == made["Point"](1, 2)
    assert hash(point) == hash(plain["Point"](1, 2))
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 3  # type: ignore[misc]
    assert item < made["Item"]("b") and item == made["Item"]("a", 9.0) and item.parts == []
    assert made["Options"](level=2).level == 2


def test_kept_code_makes_the_plain_methods(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / FILE
    plain = _make(None, monkeypatch)
    first = CodeCache(path)
    _same_classes(_make(first, monkeypatch), plain)
    assert first.compiled > 5
    first.save()
    assert path.stat().st_size > 0

    second = CodeCache(path)  # the next process
    _same_classes(_make(second, monkeypatch), plain)
    assert second.compiled == 0  # every method's code came from the file
    mtime = path.stat().st_mtime_ns
    second.save()
    assert path.stat().st_mtime_ns == mtime  # nothing new: not rewritten


def test_damaged_foreign_or_shared_file_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / FILE
    plain = _make(None, monkeypatch)
    good = CodeCache(path)
    _make(good, monkeypatch)
    good.save()
    body = path.read_bytes()

    path.write_bytes(body[: len(body) // 2])  # damaged
    assert CodeCache(path).known == {}
    path.write_bytes(b"\x00garbage")
    assert CodeCache(path).known == {}
    path.write_bytes(
        body.replace(sys.version.encode(), b"3.0.0 (another interpreter)".ljust(len(sys.version)))
    )
    assert CodeCache(path).known == {}  # another interpreter's code
    path.write_bytes(body)
    os.chmod(tmp_path, 0o777)  # a directory others can write: its file could hold anything
    try:
        assert CodeCache(path).known == {}
    finally:
        os.chmod(tmp_path, 0o700)

    damaged = CodeCache(path)
    damaged.known = {key: b"\xe3damaged" for key in damaged.known}  # entries that hold no code
    _same_classes(_make(damaged, monkeypatch), plain)
    assert damaged.compiled > 5

    path.write_bytes(b"\x00garbage")
    again = CodeCache(path)
    _same_classes(_make(again, monkeypatch), plain)  # compiled as usual
    again.save()
    assert CodeCache(path).known  # and the file replaced by a good one


def test_install_routes_dataclasses_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(dataclasses, "exec", raising=False)
    cache = install(tmp_path)
    assert cache is not None
    atexit.unregister(cache.save)  # this process's exit is not the test's
    assert dataclasses.exec == cache.exec  # type: ignore[attr-defined]
    assert install(tmp_path) is None  # not wrapped twice
    assert cache.path == tmp_path / "code" / FILE


def test_the_cli_reuses_the_code_of_its_last_run(tmp_path: Path) -> None:
    """Two `blueprint validate` runs with a fresh cache directory: the first writes the file, the second
    finds every method there and so leaves it untouched, and both give the same report."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), "NO_COLOR": "1"}
    argv = [
        sys.executable,
        "-m",
        "generator.cli",
        "validate",
        str(ROOT / "examples" / "single-dgx-h100.yaml"),
    ]
    first = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    path = tmp_path / "cluster-blueprint" / "code" / FILE
    written = path.read_bytes()
    mtime = path.stat().st_mtime_ns
    second = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert (first.returncode, first.stdout) == (second.returncode, second.stdout) == (0, first.stdout)
    assert path.stat().st_mtime_ns == mtime and path.read_bytes() == written
    assert len(CodeCache(path).known) > 100  # the model's, plan's and Pydantic's dataclasses
