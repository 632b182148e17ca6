"""Kernel limits a large rehearsal needs, raised for the run and restored afterwards.

The neighbour tables are one per address family for the whole kernel, shared by every network namespace,
and their garbage-collection thresholds are read from the initial namespace's
``net.ipv{4,6}.neigh.default.gc_thresh{1,2,3}`` (kernel documentation, networking/ip-sysctl.rst:
"gc_thresh3 - Maximum number of non-PERMANENT neighbor entries allowed"; defaults 128/512/1024). BGP
unnumbered needs one IPv6 link-local neighbour per fabric port end (the peer learned from its router
advertisements), and zebra installs one IPv4 neighbour per port for RFC 5549 next hops, so a fabric of
512 cables (1,024 port ends) already reaches the default hard limit: entries beyond it are refused.

The limits are the machine's, so rehearsals running at once share them: one state file under a lock
records the values before the first raised them and what each live rehearsal needs (``_State``).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from generator.foreign import ForeignInputError
from generator.rehearse.cleanup import alive

PROC_SYS = Path("/proc/sys")
FAMILIES = ("ipv6", "ipv4")
HEADROOM = 512  # entries the host itself keeps using beside the rehearsal


@dataclass(frozen=True)
class LimitChange:
    key: str  # sysctl name, e.g. net.ipv6.neigh.default.gc_thresh3
    before: int
    during: int

    def as_dict(self) -> dict[str, object]:
        return {"key": self.key, "before": self.before, "during": self.during}


def _path(key: str) -> Path:
    return PROC_SYS / key.replace(".", "/")


def _read(key: str) -> int:
    return int(_path(key).read_text().split()[0])


def _write(key: str, value: int) -> None:
    _path(key).write_text(f"{value}\n")


def wanted(port_ends: int) -> dict[str, int]:
    """gc_thresh2 (soft) and gc_thresh3 (hard) large enough for ``port_ends`` neighbours per family."""
    out: dict[str, int] = {}
    for family in FAMILIES:
        out[f"net.{family}.neigh.default.gc_thresh2"] = port_ends + HEADROOM // 2
        out[f"net.{family}.neigh.default.gc_thresh3"] = 2 * port_ends + HEADROOM
    return out


STATE_NAME = "cb-rehearse-limits.json"  # in STATE_DIR: what every running rehearsal needs
LOCK_NAME = "cb-rehearse-limits.lock"  # flock(2) around each read-modify-write of the state
LOCK_WAIT_S = 60.0  # the lock is held for a few file operations; past this the rehearsal stops
# Root's own directory on the run-time tmpfs (emptied at boot, as the sysctls are reset): in the shared
# temporary directory any user could plant the fixed names, or hold the lock, and stop or slow every run.
STATE_DIR = Path("/run/cluster-blueprint")
MAX_VALUE = 2**31 - 1  # the kernel's int sysctl range: a recorded value outside it is not ours


@dataclass
class _State:
    """Shared by concurrent rehearsals: the value each key had before the first of them raised it, the
    value last written to it, and what each live rehearsal (by pid) needs. The last one out puts the
    originals back; one that ends earlier lowers only to what those still running need."""

    original: dict[str, int] = field(default_factory=dict)
    written: dict[str, int] = field(default_factory=dict)
    holders: dict[int, dict[str, int]] = field(default_factory=dict)


def raise_limits(port_ends: int, tmp: Path, pid: int | None = None) -> list[LimitChange]:
    """Raise only what is below what this run (and every other live one) needs; the changes made. The
    state is written before any value is, so a rehearsal killed with SIGKILL (no ``finally`` runs) has
    them put back by the next one (``sweep``)."""
    me = os.getpid() if pid is None else pid
    with _locked(tmp):
        state = _load(tmp)
        _settle(state)
        state.holders[me] = {k: v for k, v in wanted(port_ends).items() if _path(k).exists()}
        changes = [c for c in _plan(state) if c.before < c.during]
        for c in changes:
            state.original.setdefault(c.key, c.before)
            state.written[c.key] = c.during
        _save(tmp, state)
        for c in changes:
            _write(c.key, c.during)
    return changes


def release(tmp: Path, pid: int | None = None) -> None:
    """This run no longer needs its values: lowered to what the rehearsals still running need, or put back
    to the originals when it is the last one."""
    me = os.getpid() if pid is None else pid
    with _locked(tmp):
        state = _load(tmp)
        state.holders.pop(me, None)
        _settle(state)
        _save(tmp, state)


def sweep(tmp: Path) -> list[str]:
    """The values that rehearsals killed since raised, put back where no live one needs them: sysctl names
    restored to their originals."""
    with _locked(tmp):
        state = _load(tmp)
        done = _settle(state)
        _save(tmp, state)
    return done


def _plan(state: _State) -> list[LimitChange]:
    """Each key's current value and the largest any holder needs."""
    needs: dict[str, int] = {}
    for need in state.holders.values():
        for key, value in need.items():
            needs[key] = max(needs.get(key, 0), value)
    return [LimitChange(key, _read(key), value) for key, value in sorted(needs.items())]


def _settle(state: _State) -> list[str]:
    """Dead holders dropped; every raised key lowered to the most a live holder needs (its original when
    none does). A key someone else changed since it was written is theirs: forgotten, not touched."""
    state.holders = {pid: need for pid, need in state.holders.items() if alive(pid)}
    restored = []
    for key, original in list(state.original.items()):
        if not _path(key).exists() or _read(key) != state.written.get(key):
            del state.original[key]
            state.written.pop(key, None)
            continue
        floor = max([original] + [need.get(key, 0) for need in state.holders.values()])
        if floor < state.written[key]:
            _write(key, floor)
            state.written[key] = floor
        if floor == original:
            del state.original[key]
            del state.written[key]
            restored.append(key)
    return restored


def state_dir(where: Path = STATE_DIR) -> Path:
    """``where``, made this user's own (0700) if absent; ForeignInputError if it is anything else."""
    try:
        with contextlib.suppress(FileExistsError):
            where.mkdir(mode=0o700, parents=True)
        info = where.lstat()
    except OSError as exc:
        raise ForeignInputError(str(where), f"cannot hold the rehearsals' state: {exc.strerror}") from exc
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o022:
        raise ForeignInputError(
            str(where), "is not a directory of this user's that only it can write: remove it (the "
            "rehearsals' kernel-limit state is kept there)"
        )  # fmt: skip
    return where


@contextlib.contextmanager
def _locked(tmp: Path) -> Iterator[None]:
    """An exclusive flock on the lock file (never a symlink followed), waited for at most LOCK_WAIT_S."""
    try:
        fd = os.open(tmp / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        raise ForeignInputError(str(tmp / LOCK_NAME), f"cannot be opened: {exc.strerror}") from exc
    try:
        deadline = time.monotonic() + LOCK_WAIT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise ForeignInputError(
                        str(tmp / LOCK_NAME), f"held by another process for {LOCK_WAIT_S:g} s, where a "
                        "rehearsal holds it for a few file operations: not changing kernel limits under it"
                    ) from None  # fmt: skip
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _load(tmp: Path) -> _State:
    """The state, when it is this user's own regular file holding only the keys and kinds of values a
    rehearsal raises (a file that is anything else sets nothing); else empty."""
    path = tmp / STATE_NAME
    ours = set(wanted(0))
    try:
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_size > 1 << 20:
            return _State()
        raw = json.loads(path.read_text())
        state = _State(
            original=_values(raw["original"], ours),
            written=_values(raw["written"], ours),
            holders={int(pid): _values(need, ours) for pid, need in raw["holders"].items()},
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return _State()
    if set(state.original) != set(state.written) or any(
        state.original[k] >= state.written[k] for k in state.original
    ):
        return _State()
    return state


def _values(raw: object, ours: set[str]) -> dict[str, int]:
    if not isinstance(raw, dict) or not all(
        k in ours and type(v) is int and 0 <= v <= MAX_VALUE for k, v in raw.items()
    ):
        raise ValueError("not a rehearsal's limits")
    return dict(raw)


def _save(tmp: Path, state: _State) -> None:
    """Replaced whole (a new file of this process, created exclusively, renamed over the old one, so a
    planted symlink is replaced, never followed); removed when nothing is held or raised."""
    path = tmp / STATE_NAME
    if not state.holders and not state.original:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)
        return
    text = json.dumps(
        {"original": state.original, "written": state.written,
         "holders": {str(pid): need for pid, need in state.holders.items()}}
    )  # fmt: skip
    part = tmp / f"{STATE_NAME}.{os.getpid()}.part"
    with contextlib.suppress(FileNotFoundError):
        part.unlink()
    fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.replace(part, path)
