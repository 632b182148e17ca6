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


def raise_limits(port_ends: int) -> list[LimitChange]:
    """Raise only what is below what the run needs; the changes made, to give to ``restore``."""
    changes: list[LimitChange] = []
    for key, value in wanted(port_ends).items():
        if not _path(key).exists():
            continue
        before = _read(key)
        if before < value:
            _write(key, value)
            changes.append(LimitChange(key, before, value))
    return changes


def restore(changes: list[LimitChange]) -> None:
    """Put every raised value back, last raised first."""
    for change in reversed(changes):
        _write(change.key, change.before)
