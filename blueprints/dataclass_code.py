"""The compiled methods of dataclasses, kept between processes like Python keeps a module's bytecode.

``@dataclass`` writes each class's ``__init__``, ``__repr__``, ``__eq__`` (and ``__setattr__``,
``__hash__`` ... when frozen) as source text and compiles it with ``exec`` every time the class is made:
~0.5 ms a class, ~40 ms of `blueprint validate`'s CPU for the ~110 dataclasses it imports (its own, the
plan's and the performance model's, Pydantic's and annotated_types'), benchmarks/startup.py. Python's
bytecode cache (``__pycache__``) keeps the modules' code but not this generated code.

:func:`install` makes the ``dataclasses`` module's ``exec`` compile each text once per user: the code
objects are kept in one ``marshal`` file under the user's cache directory (blueprints/snapshot.py's, read
only from a directory of this user that nobody else can write, as a snapshot is), keyed by the text's sha256,
for this interpreter only (its version, bytecode magic number and optimisation level are the file's tag).
A text found there runs the code ``compile(text)`` gave for it, compiled as ``exec`` compiles it (no
``__future__`` flags from the caller): the same methods. A text not found is compiled and added, and the
file is rewritten once at exit. A missing, damaged, foreign or unwritable file only costs the compiling.
tests/startup/test_dataclass_code.py compares the methods with those of the plain module.
"""

from __future__ import annotations

import atexit
import hashlib
import marshal
import os
import sys
from pathlib import Path
from types import CodeType
from typing import Any

from blueprints.snapshot import cache_root, private_dir

FILE = "dataclass-code.marshal"
MAX_ENTRIES = 20_000  # past this (source edited many times over), the file keeps only this process's texts


def tag() -> str:
    """What a code object depends on besides its text: the interpreter that compiled it."""
    from importlib.util import MAGIC_NUMBER

    return f"{sys.version}\0{MAGIC_NUMBER.hex()}\0{sys.flags.optimize}"


class CodeCache:
    """Compiled texts by the sha256 of the text: those read from ``path`` and those this process added.

    Each code object stays marshalled until a class asks for it: a process reads the whole file (every
    command's dataclasses) but builds only the code of the classes it makes."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.known: dict[bytes, bytes] = _read(path) if path is not None else {}
        self.added: dict[bytes, bytes] = {}
        self.compiled = 0  # texts this process had to compile (none once the file knows the program)

    def code(self, text: str) -> CodeType:
        key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
        kept = _loads(self.known.get(key))
        if kept is not None:
            return kept
        # dont_inherit: the flags `exec(text)` in dataclasses has (that module has no __future__ import)
        code = compile(text, "<string>", "exec", dont_inherit=True)
        self.compiled += 1
        self.added[key] = self.known[key] = marshal.dumps(code)
        return code

    def exec(self, source: Any, globals: Any = None, locals: Any = None, /) -> None:
        """``exec`` as dataclasses calls it, a text replaced by its compiled code."""
        if isinstance(source, str):
            source = self.code(source)
        exec(source, globals, locals)

    def save(self) -> None:
        """Rewrite the file when this process compiled a text it did not have (whole, or not at all)."""
        if self.path is None or not self.compiled:
            return
        kept = self.known if len(self.known) <= MAX_ENTRIES else self.added
        _write(self.path, marshal.dumps((tag(), kept)))


def install(where: Path | None = None) -> CodeCache | None:
    """Route the ``dataclasses`` module's ``exec`` through a :class:`CodeCache` of ``where`` (default: the
    user's cache directory); None when it already is, or when that module has no ``exec`` of its own to
    route (a Python whose dataclasses makes its methods another way: they are compiled as before)."""
    import dataclasses

    if hasattr(dataclasses, "exec") or not _makes_methods_with_exec(dataclasses):
        return None  # routed already (by this or by anything else), or nothing to route
    root = cache_root() if where is None else where
    cache = CodeCache(root / "code" / FILE if root is not None else None)
    dataclasses.exec = cache.exec  # type: ignore[attr-defined]  # a module global before the builtin
    atexit.register(cache.save)
    return cache


def _makes_methods_with_exec(module: Any) -> bool:
    """Whether dataclasses compiles its methods by calling ``exec`` by name: in ``_create_fn`` (Python
    3.11, 3.12) or in its method builder (3.13 on)."""
    builder = getattr(module, "_FuncBuilder", None)
    makers = (getattr(module, "_create_fn", None), getattr(builder, "add_fns_to_class", None))
    return any(f is not None and "exec" in f.__code__.co_names for f in makers)


def _loads(body: bytes | None) -> CodeType | None:
    """The code object marshalled in ``body``; None for none, or for bytes that do not hold one."""
    if body is None:
        return None
    try:
        code = marshal.loads(body)
    except (ValueError, EOFError, TypeError):
        return None
    return code if isinstance(code, CodeType) else None


def _read(path: Path) -> dict[bytes, bytes]:
    if not private_dir(path.parent):
        return {}
    try:
        with open(path, "rb") as fh:
            found = marshal.loads(fh.read())  # one read: marshal.load(file) reads it piece by piece
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    if not (
        isinstance(found, tuple) and len(found) == 2 and found[0] == tag() and isinstance(found[1], dict)
    ):
        return {}
    return {k: v for k, v in found[1].items() if isinstance(k, bytes) and isinstance(v, bytes)}


def _write(path: Path, body: bytes) -> None:
    where = path.parent
    try:
        where.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not private_dir(where):
            return
        tmp = where / f".tmp-{os.getpid()}-{FILE}"
        try:
            with open(tmp, "wb") as fh:
                fh.write(body)
            os.replace(tmp, path)  # concurrent writers each replace the file whole
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    except OSError:
        return  # a full or read-only disk: the next process compiles again
