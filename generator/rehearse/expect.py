"""What the plan's cables promise, computed from the cable graph alone (not from the switches' state).

A switch reaches a destination switch over every cable whose far end is one hop closer to it (breadth-
first distances); with BGP's multipath over eBGP that set of cables is exactly the set of ECMP first hops
(FRR user guide, "BGP" > "Multipath": equal AS-path length, ``as-path multipath-relax`` across
neighbour ASNs). Switches that are down take no part.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass


@dataclass(frozen=True)
class Wire:
    cable: str
    a: str
    a_if: str
    b: str
    b_if: str


def adjacency(wires: list[Wire]) -> dict[str, list[tuple[str, str]]]:
    """switch -> (local interface, far switch) per cable."""
    adj: dict[str, list[tuple[str, str]]] = {}
    for w in wires:
        adj.setdefault(w.a, []).append((w.a_if, w.b))
        adj.setdefault(w.b, []).append((w.b_if, w.a))
    return adj


def distances(adj: dict[str, list[tuple[str, str]]], dst: str, down: set[str]) -> dict[str, int]:
    dist = {dst: 0}
    queue = deque([dst])
    while queue:
        u = queue.popleft()
        for _, v in adj.get(u, []):
            if v not in dist and v not in down:
                dist[v] = dist[u] + 1
                queue.append(v)
    return dist


def first_hops(
    adj: dict[str, list[tuple[str, str]]], sources: list[str], dests: list[str], down: set[str]
) -> dict[str, dict[str, frozenset[str] | None]]:
    """src -> dst -> the interfaces of its equal-cost first hops (None: the plan has no path)."""
    out: dict[str, dict[str, frozenset[str] | None]] = {s: {} for s in sources if s not in down}
    for dst in dests:
        if dst in down:
            continue
        dist = distances(adj, dst, down)
        for src in out:
            if src == dst:
                continue
            if src not in dist:
                out[src][dst] = None
                continue
            out[src][dst] = frozenset(
                ifname for ifname, n in adj.get(src, []) if n not in down and dist.get(n) == dist[src] - 1
            )
    return out
