"""Dragonfly (Kim, Dally, Scott, Abts, ISCA 2008): groups of ``a`` all-to-all routers, ``h`` global
links per router, ``p`` terminal ports per router, ``g`` groups.

Router ports: 1..p terminals, p+1..p+a-1 local (to each other router of the group), p+a..p+a+h-1 global.
Global port j of a group (0 ≤ j < a·h) belongs to router j // h. Arrangements (Hastings et al., Cluster
2015): absolute — port j targets the (j mod (g-1))-th other group in ascending order; relative — port j
targets group (i + 1 + j mod (g-1)) mod g; circulant — ports alternate +/- offsets 1, 1, 2, 2, ...
The m-th port of group i aimed at group t is cabled to the m-th port of group t aimed at group i, so
every arrangement yields consistent cables; ports left without a partner stay free.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import NamedTuple

from generator.topology.base import (
    BuiltFabric,
    DragonflyParams,
    PortRef,
    RawLink,
    SwitchSpec,
    Terminal,
    TopologyError,
    ceil_div,
)


def global_targets(i: int, g: int, ports: int, arrangement: str) -> list[int]:
    """Target group of each global port of group ``i`` (-1 = unused)."""
    if g < 2:
        return [-1] * ports
    out: list[int] = []
    for j in range(ports):
        if arrangement == "absolute":
            r = j % (g - 1)
            out.append(r if r < i else r + 1)
        elif arrangement == "relative":
            out.append((i + 1 + j % (g - 1)) % g)
        elif arrangement == "circulant":
            half = max(1, (g - 1 + 1) // 2)
            offset = (j // 2) % half + 1
            sign = 1 if j % 2 == 0 else -1
            t = (i + sign * offset) % g
            out.append(t if t != i else -1)
        else:
            raise TopologyError(f"unknown global link arrangement `{arrangement}`")
    return out


def nodes_per_router(p: int, ports_per_node: int) -> int:
    """Whole nodes a router holds: a node's ports stay on one router, so p // the most ports a node has
    (the builder's placement; rule PWR008's hint counts a group's nodes with it)."""
    return p // max(1, ports_per_node)


class _Shape(NamedTuple):
    p: int  # terminal ports per router
    a: int  # routers per group
    h: int  # global ports per router
    groups: int
    radix: int


def _check(nodes: Sequence[Sequence[Terminal]], d: _Shape) -> int:
    """Argument checks; the most ports a node has on this fabric."""
    p, a, h, groups, radix = d.p, d.a, d.h, d.groups, d.radix
    if min(p, a, h, groups) < 1:
        raise TopologyError("dragonfly p, a, h and groups must all be at least 1")
    need = p + (a - 1) + h
    if need > radix:
        raise TopologyError(
            f"a router needs p + (a-1) + h = {p} + {a - 1} + {h} = {need} ports; the switch has {radix}"
        )
    terminals = sum(len(terms) for terms in nodes)
    capacity = p * a * groups
    if terminals > capacity:
        raise TopologyError(
            f"{terminals} node ports exceed the dragonfly's p·a·g = {p}·{a}·{groups} = {capacity} terminals"
        )
    per_node = max((len(t) for t in nodes), default=1)
    if per_node > p:
        raise TopologyError(f"a node has {per_node} ports but a router only {p} terminal ports")
    return per_node


def _terminal_links(
    nodes: Sequence[Sequence[Terminal]], d: _Shape, names: list[list[str]], per_node: int
) -> list[RawLink]:
    """Whole nodes per router (a node's ports stay on one router), routers in group order."""
    links: list[RawLink] = []
    per_router = nodes_per_router(d.p, per_node)
    for n, terms in enumerate(nodes):
        router = n // per_router
        gi, r = divmod(router, d.a)
        if gi >= d.groups:
            raise TopologyError(
                f"{len(nodes)} nodes of {per_node} ports need {ceil_div(len(nodes), per_router)} "
                f"routers; the dragonfly has {d.a * d.groups}"
            )
        for k, term in enumerate(terms):
            port = (n % per_router) * per_node + k + 1
            links.append(
                RawLink(PortRef(term.host, term), PortRef(names[gi][r], port), "node_router", term.rail)
            )
    return links


def _local_links(d: _Shape, names: list[list[str]]) -> list[RawLink]:
    """All-to-all inside each group: router x's port for peer y is p + (y's rank among x's peers) + 1."""
    links: list[RawLink] = []
    p, a = d.p, d.a
    for gi in range(d.groups):
        for x in range(a):
            for y in range(x + 1, a):
                px = p + (y if y < x else y - 1) + 1
                py = p + (x if x < y else x - 1) + 1
                links.append(RawLink(PortRef(names[gi][x], px), PortRef(names[gi][y], py), "local"))
    return links


def _global_links(d: _Shape, names: list[list[str]], arrangement: str) -> list[RawLink]:
    """The m-th port of group i aimed at group t meets the m-th port of group t aimed at group i."""
    p, a, h, groups = d.p, d.a, d.h, d.groups
    wanted: dict[tuple[int, int], list[int]] = defaultdict(list)  # (group, target) -> global port indices
    for gi in range(groups):
        for j, t in enumerate(global_targets(gi, groups, a * h, arrangement)):
            if t >= 0:
                wanted[(gi, t)].append(j)
    links: list[RawLink] = []
    for gi in range(groups):
        for t in range(gi + 1, groups):
            mine, theirs = wanted.get((gi, t), []), wanted.get((t, gi), [])
            for j_a, j_b in zip(mine, theirs, strict=False):
                ra, rb = j_a // h, j_b // h
                links.append(
                    RawLink(
                        PortRef(names[gi][ra], p + a + j_a % h),
                        PortRef(names[t][rb], p + a + j_b % h),
                        "global",
                    )
                )
    return links


def dragonfly(
    nodes: Sequence[Sequence[Terminal]],
    *,
    p: int,
    a: int,
    h: int,
    groups: int,
    radix: int,
    arrangement: str = "absolute",
    ports_per_cage: int = 1,
    prefix: str = "c",
) -> BuiltFabric:
    d = _Shape(p, a, h, groups, radix)
    per_node = _check(nodes, d)
    names = [[f"{prefix}-router-g{gi + 1}-{r + 1:02d}" for r in range(a)] for gi in range(groups)]
    switches = [
        SwitchSpec(names[gi][r], "router", radix, ports_per_cage, su=gi + 1, index=gi * a + r + 1)
        for gi in range(groups)
        for r in range(a)
    ]
    terminal_links = _terminal_links(nodes, d, names, per_node)
    global_links = _global_links(d, names, arrangement)
    links = terminal_links + _local_links(d, names) + global_links
    params = DragonflyParams(
        p, a, h, groups, radix, arrangement, a * groups, len(global_links), a * h * groups
    )
    return BuiltFabric("dragonfly", switches, links, params)
