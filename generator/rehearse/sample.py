"""A fabric larger than the machine is rehearsed as a faithful sample: one scalable unit (the leaves named
``-su<S>-`` of the lowest S, docs/architecture.md "Naming") and every leaf outside the units (a storage
fabric's storage-server leaves) with every spine those leaves are cabled to and every core those spines are
cabled to, so each leaf keeps all of its uplinks and every path between two leaves of the sample is
present. A dragonfly (routers named ``-g<G>-``, docs/architecture.md "Naming") is
sampled as a group set: every router of the lowest-numbered groups and every cable between them (each
group's full local mesh and every global link between the groups), so traffic between two groups of the
set takes the direct global links or transits a third group of the set exactly as the plan's graph says.
The report says so.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

# Resident memory of one switch (zebra + bgpd of Debian's FRR 8.4 with a few dozen sessions), measured by
# benchmarks/rehearse.py on roce-rail-2tier; the estimate keeps a rehearsal inside half the free memory.
FRR_SWITCH_BYTES = 40 * 1024 * 1024
# ibsim + OpenSM per simulated node, generous: an OpenSM fabric of 16,384 HCAs and 1,280 switches ran in
# about 2 minutes and well under 2 GB on 2 cores (issue 27).
IB_NODE_BYTES = 64 * 1024
MAX_SWITCHES = 400  # FRR namespaces: beyond this, polling every switch's RIB is slower than it is useful
_SU = re.compile(r"-su(\d+)-")
_GROUP = re.compile(r"-g(\d+)-")
DRAGONFLY_GROUPS = 3  # the smallest set where two groups may also meet through a third (two global hops)
_TIERS = ("leaf", "spine", "core")


def available_bytes() -> int:
    """MemAvailable of /proc/meminfo (proc(5)), or the physical memory when it cannot be read."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))


def fits_ethernet(switches: int) -> bool:
    return switches <= MAX_SWITCHES and switches * FRR_SWITCH_BYTES < available_bytes() // 2


def fits_infiniband(nodes: int) -> bool:
    return nodes * IB_NODE_BYTES < available_bytes() // 2


def tier(name: str) -> str:
    return next((t for t in _TIERS if f"-{t}-" in name), "")


def in_unit(name: str) -> bool:
    """The switch belongs to a scalable unit (``-su<S>-``); a storage or service pool's leaf does not."""
    return _SU.search(name) is not None


def scalable_unit(switches: Iterable[str], edges: Iterable[tuple[str, str]]) -> tuple[set[str], str] | None:
    """(switches of the sample, what it is), or None when the fabric has no scalable units."""
    names = set(switches)
    units = sorted({int(m.group(1)) for n in names if tier(n) == "leaf" and (m := _SU.search(n))})
    if not units:
        return None
    adj: dict[str, set[str]] = {}
    for a, b in edges:
        adj.setdefault(a, set()).add(b)
        adj.setdefault(b, set()).add(a)
    keep = {n for n in names if tier(n) == "leaf" and f"-su{units[0]}-" in n}
    leaves = len(keep)
    # leaves outside every unit carry the pools the units' nodes talk to (a storage fabric's storage
    # servers on s-leaf-<pool>-NN, login/management pools): a sample without them rehearses no path to them
    others = sorted(n for n in names if tier(n) == "leaf" and not in_unit(n))
    keep |= set(others)
    for lower, upper in (("leaf", "spine"), ("spine", "core")):
        keep |= {p for n in keep if tier(n) == lower for p in adj.get(n, ()) if tier(p) == upper}
    spines = sum(tier(n) == "spine" for n in keep)
    cores = sum(tier(n) == "core" for n in keep)
    named = ", ".join(others[:4]) + (", …" if len(others) > 4 else "")
    what = (f"sampled: scalable unit su{units[0]} of {len(units)} ({leaves} leaves)"
            + (f" and the {len(others)} leaves outside scalable units ({named})" if others else "")
            + f" with the {spines} spines" + (f" and {cores} cores" if cores else "")
            + (" they are" if others else " it is") + " cabled to")  # fmt: skip
    return keep, what


def group_set(
    switches: Iterable[str], edges: Iterable[tuple[str, str]], groups: int = DRAGONFLY_GROUPS
) -> tuple[set[str], str] | None:
    """(routers of the lowest ``groups`` dragonfly groups, what it is), or None without groups."""
    names = set(switches)
    of = {n: int(m.group(1)) for n in names if (m := _GROUP.search(n))}
    numbers = sorted(set(of.values()))
    if len(numbers) < 2:
        return None
    chosen = set(numbers[:groups])
    keep = {n for n, g in of.items() if g in chosen}
    globals_ = sum(1 for a, b in edges if a in keep and b in keep and of[a] != of[b])
    what = (
        f"sampled: dragonfly groups {', '.join(f'g{g}' for g in sorted(chosen))} of {len(numbers)} "
        f"({len(keep)} routers) with every local and global link between them ({globals_} global)"
    )
    return keep, what
