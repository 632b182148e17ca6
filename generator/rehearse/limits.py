"""Kernel limits a large rehearsal needs, raised for the run and restored afterwards.

The neighbour tables are one per address family for the whole kernel, shared by every network namespace,
and their garbage-collection thresholds are read from the initial namespace's
``net.ipv{4,6}.neigh.default.gc_thresh{1,2,3}`` (kernel documentation, networking/ip-sysctl.rst:
"gc_thresh3 - Maximum number of non-PERMANENT neighbor entries allowed"; defaults 128/512/1024). BGP
unnumbered needs one IPv6 link-local neighbour per fabric port end (the peer learned from its router
advertisements), and zebra installs one IPv4 neighbour per port for RFC 5549 next hops, so a fabric of
512 cables (1,024 port ends) already reaches the default hard limit: entries beyond it are refused.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

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


def raise_limits(port_ends: int, record: Path | None = None) -> list[LimitChange]:
    """Raise only what is below what the run needs; the changes made, to give to ``restore``. ``record``:
    a file the changes are written to before any is made, so that a rehearsal killed with SIGKILL (no
    ``finally`` runs) has them put back by the next one (``restore_recorded``)."""
    plan = [(key, _read(key), value) for key, value in wanted(port_ends).items() if _path(key).exists()]
    changes = [LimitChange(key, before, value) for key, before, value in plan if before < value]
    if record is not None and changes:
        _write_record(record, json.dumps([c.as_dict() for c in changes]))
    for change in changes:
        _write(change.key, change.during)
    return changes


def _write_record(record: Path, text: str) -> None:
    """A new file of this process only: the name is predictable (its pid) in a shared directory, so one
    already there (a planted symlink) is removed, and the file is created exclusively, never followed."""
    with contextlib.suppress(FileNotFoundError):
        record.unlink()
    fd = os.open(record, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)


def restore(changes: list[LimitChange], record: Path | None = None) -> None:
    """Put every raised value back, last raised first, then drop the record."""
    for change in reversed(changes):
        _write(change.key, change.before)
    if record is not None:
        record.unlink(missing_ok=True)


def restore_recorded(record: Path) -> list[str]:
    """The values a killed rehearsal recorded, put back where they are still what it raised them to (a value
    changed since is someone else's); the record is removed. What was put back, as sysctl names."""
    # the record sits in a shared temporary directory: only this user's own file, and only the keys and
    # the kind of values a rehearsal raises, are put back (a planted file sets nothing else)
    ours = set(wanted(0))
    try:
        info = record.lstat()
        mine = stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid()
        rows = json.loads(record.read_text()) if mine else []
        changes = [LimitChange(str(r["key"]), int(r["before"]), int(r["during"])) for r in rows]
    except (OSError, ValueError, KeyError, TypeError):
        changes = []
    done = []
    for c in reversed(changes):
        if c.key in ours and _path(c.key).exists() and 0 <= c.before < c.during and _read(c.key) == c.during:
            _write(c.key, c.before)
            done.append(c.key)
    with contextlib.suppress(OSError):  # another user's file in the sticky temporary directory
        record.unlink(missing_ok=True)
    return done
