"""What the package makes of its own files, kept between processes (a pickle keyed by what made it).

Each process used to validate the shipped catalogue again: a Pydantic validator built per model (the
platforms' alone ~17 ms) and every entry checked, about a seventh of `blueprint validate`'s CPU
(benchmarks/startup.py, issue 32); and to parse the model modules' source for their field docstrings. A
snapshot is the pickled result of one loader of shipped files (``default_catalog()``, ``perf_data()``, the
advice, workload, subnet manager, switch OS and appliance documents; a model module's field docs), stored
under the user's cache directory and keyed by the sha256 of:

- the snapshot format, the Python version (pickle's protocol) and Pydantic's and pydantic-core's versions;
- the source of every module of the ``blueprints`` package (the classes and the validators that made the
  objects: an edited model is a new key, never an old object under a new class);
- the loader's name and the bytes of every data file it reads.

So a changed data file, model or library is validated again, and a hit is the object the loader returns
(tests/unit/test_catalog_snapshot.py compares them). Unpickling runs code named by the file, so a snapshot
is read only from a directory of this user that nobody else can write, as the parse cache is; an
unreadable, damaged or foreign file, or a directory that cannot be written (read-only, full), only costs
the process a fresh load. A new snapshot replaces the older ones of its loader.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import stat
import sys
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

FORMAT = "1"
PACKAGE_DIR = Path(__file__).resolve().parent  # blueprints/: every module a snapshot's classes come from
SUFFIX = ".pickle"


def cache_root() -> Path | None:
    """$XDG_CACHE_HOME/cluster-blueprint (default ~/.cache): the XDG Base Directory specification,
    https://specifications.freedesktop.org/basedir-spec/latest/. None when there is no usable home."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # the specification: a relative path is invalid and ignored
        home = os.path.expanduser("~")
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    return Path(base) / "cluster-blueprint"


def private_dir(path: Path) -> bool:
    """A directory of this user that nobody else can write: only then is a cached file trusted."""
    try:
        st = path.stat()
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022


def snapshot(where: Path | None, name: str, files: Iterable[Path], kind: type[T], load: Callable[[], T]) -> T:
    """What ``load()`` returns, from the snapshot in ``where`` when one was made from the same inputs.

    ``files`` are every file ``load`` reads; ``kind`` the type it returns (anything else read back is
    not used). Errors of ``load`` itself (a broken data file) pass through and nothing is stored."""
    if where is None:  # no cache directory (no home): every process loads
        return load()
    try:
        key = snapshot_key(name, [f.read_bytes() for f in files])
    except OSError:
        return load()  # a data file cannot be read: the loader reports it
    path = where / f"{name}.{key}{SUFFIX}"
    found = _read(path, kind) if private_dir(where) else None
    if found is not None:
        return found
    made = load()
    _write(path, made)
    return made


def snapshot_key(name: str, data: Iterable[bytes]) -> str:
    digest = hashlib.sha256(f"{FORMAT}\0{sys.version}\0{_libraries()}\0".encode())
    digest.update(code_digest(PACKAGE_DIR).encode())
    digest.update(f"\0{name}\0".encode())
    for chunk in data:
        digest.update(len(chunk).to_bytes(8, "big"))  # file boundaries are part of the key
        digest.update(chunk)
    return digest.hexdigest()


def _libraries() -> str:
    """The versions of the libraries whose classes and behaviour a snapshot holds (already imported by
    the models a loader validates with)."""
    import pydantic.version
    import pydantic_core

    return f"pydantic {pydantic.version.VERSION} pydantic-core {pydantic_core.__version__}"


@cache
def code_digest(package_dir: Path, suffixes: tuple[str, ...] = (".py",)) -> str:
    """sha256 over the relative path and bytes of every file under ``package_dir`` (sorted) whose name
    ends with one of ``suffixes`` (the modules; data files too when asked)."""
    digest = hashlib.sha256()
    for root, dirs, names in os.walk(package_dir):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for file in sorted(n for n in names if n.endswith(suffixes)):
            full = os.path.join(root, file)
            with open(full, "rb") as fh:
                body = fh.read()
            rel = os.path.relpath(full, package_dir).encode()
            digest.update(len(rel).to_bytes(8, "big") + rel + len(body).to_bytes(8, "big") + body)
    return digest.hexdigest()


def _read(path: Path, kind: type[T]) -> T | None:
    try:
        with open(path, "rb") as fh:
            found = pickle.load(fh)
    except Exception:  # none yet, or a damaged or stale file (unpickling can raise anything): load again
        return None
    return found if type(found) is kind else None


def _write(path: Path, made: object) -> None:
    """``made`` at ``path``, whole or not at all; then the loader's older snapshots are removed."""
    where = path.parent
    try:
        body = pickle.dumps(made, protocol=pickle.HIGHEST_PROTOCOL)
        where.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not private_dir(where):
            return
        import tempfile  # only on a miss

        fd, tmp = tempfile.mkstemp(dir=where, prefix=".tmp-", suffix=SUFFIX)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(body)
            os.replace(tmp, path)  # concurrent writers each replace the file whole
        except BaseException:
            os.unlink(tmp)
            raise
        name = path.name.split(".", 1)[0]
        for old in where.glob(f"{name}.*{SUFFIX}"):
            if old.name != path.name:
                old.unlink(missing_ok=True)
    except (OSError, pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return  # an unwritable or full directory, or an object pickle cannot keep: the next process loads
