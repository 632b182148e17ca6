"""Link loads of a job's traffic routed over a direct fabric's own cables (torus, hypercube, dragonfly).

On a fat-tree a job's traffic meets the fabric through shares in closed form (system.spread_bound): every
node of a leaf group reaches the same uplinks, and every leaf the same spines. A torus, a hypercube or a
dragonfly has no such tiers: which cables two nodes' bytes cross depends on where the nodes sit, so two
neighbours of a torus share one cable while nodes half way round share the bisection, and two nodes on
neighbouring routers of a dragonfly group share the one local link between them. Here the traffic is routed
over the planned cables themselves, as the fabric forwards it: along shortest paths, split evenly over the
cables to the equal-cost next hops at every router (hop-by-hop ECMP, as multipath IP routes on nodes that
forward for their neighbours and the switches of a switched cube have, and the dragonfly's eBGP routers with
``bestpath as-path multipath-relax`` over the shortest AS paths; InfiniBand's shortest-path routing engines,
OpenSM's min-hop and DFSSSP, spread destinations over the same paths). The result is the busiest directed
cable's load per unit a node injects, so what a node can send is that cable's rate over its load.

Routing is per destination router: one breadth-first pass out to the farthest router sending to it, then the
traffic bound for it flows down the distance levels. A node cabled to one switch alone sends and receives
everything over its own cables, so its traffic is routed from that switch (the nodes of a router share its
passes). A ring's next node is a hop or two away, so its passes are short; spread traffic passes over the
whole job for each of its routers. Jobs past ``MAX_ROUTED_VISITS`` cables looked at are left to the closed
forms (``RoutedFabric.load`` returns None).

Ranks placed without regard to the topology (a scheduler that does not know it, jobs sharing the fabric) sit
on the fabric's nodes in random order, so a ring's next node is anywhere. Which cable is busiest then depends
on the draw: the model takes the mean, over up to ``RANDOM_DRAWS`` seeded draws (as many as the budget leaves
room for), of each draw's busiest cable (``shuffled=True``). The mean of the loads alone (uniform traffic)
would miss that a random ring piles several of its hops onto some cable while others stay idle.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, NamedTuple

from generator.gcpause import gc_paused
from generator.perf.ecmp import ecmp_efficiency

if TYPE_CHECKING:
    from generator.plan.model import Link, Plan

ROUTED_TOPOLOGIES = ("torus", "hypercube", "dragonfly")

# Cables looked at while routing one pattern for one job (in the breadth-first passes and again choosing next
# hops), at most: about half a second of CPU on the benchmark machine (spread traffic over a whole 19 x 19
# direct torus looks at 1.03 M and routes in 0.4-0.8 s; over 256 nodes of the dragonfly example, 1.02 M in
# 0.16-0.3 s); a sweep over node counts routes each count once per pattern.
MAX_ROUTED_VISITS = 2_000_000

# Random rank orders a shuffled pattern is routed for (seeds 0 .. RANDOM_DRAWS - 1, so a blueprint always
# gives the same figure), at most: they share one MAX_ROUTED_VISITS budget, and a large fabric gets as many as
# it leaves room for (the first alone past it: the closed forms). Sixteen draws put the mean busiest cable of
# a ring or trees over a whole 4 x 4, 8 x 8 or 4 x 4 x 4 torus within 3 % of the mean over 400 draws; on the
# 1,024-node dragonfly example one draw's busiest cable varies by 9 % (coefficient of variation, ring and
# trees), where the budget leaves room for three draws of its ring and one of its trees.
RANDOM_DRAWS = 16


class Hop(NamedTuple):
    """Cables from a vertex to one neighbour: their count and their total rate."""

    to: int
    cables: int
    gbps: float


@dataclass(frozen=True)
class Load:
    """The busiest directed cable of a routed traffic pattern: its load per unit each node injects, over its
    rate in Gb/s (a node can inject at most ``1 / per_gbps`` Gb/s); ``hashed``: whether flows hashed onto
    equal-cost next hops raised that cable's load."""

    per_gbps: float
    hashed: bool
    draws: int = 1  # random rank orders whose busiest cables it is the mean of (shuffled patterns)


@dataclass(frozen=True)
class RoutedFabric:
    """A torus, hypercube or dragonfly as a router graph: vertex 0.. are its nodes in plan order (a packed
    job takes the first ``n``), then its switches; ``adjacency[v]`` lists the cables to each neighbour."""

    adjacency: tuple[tuple[Hop, ...], ...]
    nodes: int
    # each vertex's router: the switch a node is cabled to when it is cabled to that one switch alone (its
    # bytes all take those cables, so it is routed from the switch), else the vertex itself; empty: itself
    attach: tuple[int, ...] = ()
    _cache: dict[tuple[str, int, int | None, bool], Load | None] = field(
        default_factory=dict, compare=False, repr=False
    )

    @cached_property
    def rates(self) -> dict[tuple[int, int], float]:
        """Each directed cable bundle's rate in Gb/s, by (vertex, neighbour)."""
        return {(v, hop.to): hop.gbps for v, hops in enumerate(self.adjacency) for hop in hops}

    def load(
        self, pattern: str, n: int, flows_per_path: int | None = None, shuffled: bool = False
    ) -> Load | None:
        """The busiest cable of ``pattern`` over the first ``n`` nodes ("spread": each sends equally to the
        other ``n - 1``; "ring": each to the next in order, the last to the first; "tree": NCCL's two binary
        trees over them in order; "pat": NCCL's PAT, to the nodes 2^d ranks on) per unit the busiest node
        injects; None for fewer than two nodes or past ``MAX_ROUTED_VISITS``. ``flows_per_path``: the routers
        hash that many flows per next hop onto their equal-cost next hops (None: they spread the bytes evenly,
        as adaptive routing and InfiniBand's balanced routes do). ``shuffled``: ``n`` of the fabric's nodes
        drawn at random, in random order, and the mean of the busiest cable's load over up to
        ``RANDOM_DRAWS`` draws."""
        n = min(n, self.nodes)
        # spread traffic visits at least the job's n nodes for each of its n destinations, in both passes
        if n < 2 or (pattern == "spread" and 2 * n * n > MAX_ROUTED_VISITS):
            return None
        # a random order's next nodes are farther than rank order's, and its passes longer: where rank
        # order is past the budget, so is every draw (the largest benchmark dragonfly: ~0.5 s spared)
        if shuffled and self.load(pattern, n, flows_per_path) is None:
            return None
        key = (pattern, n, flows_per_path, shuffled)
        if key not in self._cache:
            try:
                with gc_paused():  # dicts of loads and distances, none in cycles (generator/gcpause.py)
                    self._cache[key] = self._routed(pattern, n, flows_per_path, shuffled)
            except _Unrouted:
                self._cache[key] = None
        return self._cache[key]

    def _routed(self, pattern: str, n: int, flows_per_path: int | None, shuffled: bool) -> Load:
        budget = [MAX_ROUTED_VISITS]
        demands = _demands(pattern, n)
        attach = self.attach or range(len(self.adjacency))
        if not shuffled:
            return _route(self, _lifted(demands, attach), flows_per_path, budget)
        draws: list[Load] = []
        for seed in range(RANDOM_DRAWS):
            where = random.Random(seed).sample(range(self.nodes), n)  # rank i on node where[i]
            placed = {where[d]: {where[s]: u for s, u in srcs.items()} for d, srcs in demands.items()}
            left = budget[0]
            try:
                draws.append(_route(self, _lifted(placed, attach), flows_per_path, budget))
            except _Unrouted:
                if not draws:  # not even one draw: the closed forms
                    raise
                break  # a costlier draw than the first: the draws made so far
            if left - budget[0] > budget[0]:  # the draws cost alike: the next would not finish
                break
        return Load(sum(d.per_gbps for d in draws) / len(draws), any(d.hashed for d in draws), len(draws))


class _Unrouted(Exception):
    """More than MAX_ROUTED_VISITS cables to look at, or a router a source cannot reach: the job is left to
    the closed forms."""


# per destination vertex, what each source vertex sends it (units of a node's injection)
Demands = dict[int, dict[int, float]]


def _demands(pattern: str, n: int) -> Demands:
    """Per destination, what each source sends it (units of a node's injection)."""
    if pattern == "ring":
        return {(i + 1) % n: {i: 1.0} for i in range(n)}
    if pattern == "spread":
        share = 1.0 / (n - 1)
        return {d: {s: share for s in range(n) if s != d} for d in range(n)}
    if pattern == "tree":
        return _tree_demands(n)
    if pattern == "pat":
        return _pat_demands(n)
    raise ValueError(f"unknown traffic pattern {pattern!r}")


def _tree_demands(n: int) -> Demands:
    """NCCL's two binary trees over ``n`` nodes in rank order: half the data climbs each tree to its root and
    comes back down, so each tree edge carries one share each way; scaled so the busiest node sends 1 (an
    inner node of one tree, a leaf of the other: 2S in all, as the model's tree bound counts it)."""
    out: Demands = {}
    sent = [0.0] * n
    for parent in (_btree_parents(n), _second_tree_parents(n)):
        for child, up in enumerate(parent):
            if up < 0:
                continue
            for src, dst in ((child, up), (up, child)):
                out.setdefault(dst, {})
                out[dst][src] = out[dst].get(src, 0.0) + 1.0
                sent[src] += 1.0
    busiest = max(sent)
    return {d: {s: units / busiest for s, units in srcs.items()} for d, srcs in out.items()}


def _pat_demands(n: int) -> Demands:
    """NCCL's PAT all_gather over ``n`` nodes in rank order: rank r sends to r + 2^d for every 2^d < n
    (NVIDIA/nccl src/transport/generic.cc, commit e5d9a7ae, ncclTransportPatConnect), the dimensions of a
    Bruck all-gather taken farthest first (Jeaugey, "PAT: a new algorithm for all-gather and reduce-scatter
    operations at scale", arXiv 2506.20252: so the last steps, which carry the most data, stay near), so 2^d
    ranks away a rank sends 2^(K − 1 − d) of the 2^K − 1 blocks it forwards, K = log2 of n rounded up;
    scaled so a node sends 1 in all. Reduce-scatter runs the same peers the other way."""
    dims = max(1, (n - 1).bit_length())
    weights = {1 << d: float(1 << (dims - 1 - d)) for d in range(dims) if (1 << d) < n}
    total = sum(weights.values())
    out: Demands = {}
    for r in range(n):
        for mask, w in weights.items():
            dest = (r + mask) % n
            out.setdefault(dest, {})
            out[dest][r] = out[dest].get(r, 0.0) + w / total
    return out


def _btree_parents(n: int) -> list[int]:
    """Each rank's parent in NCCL's first binary tree (NVIDIA/nccl src/graph/trees.cc, ncclGetBtree: rooted at
    0, leaves and inner nodes alternate): with b the lowest set bit of r, the parent sets the bit above b and
    clears b, or only clears b where that rank does not exist; -1 for the root."""
    parents = [-1] * n
    for r in range(1, n):
        low = r & -r
        up = (r ^ low) | (low << 1)
        parents[r] = up if up < n else r ^ low
    return parents


def _second_tree_parents(n: int) -> list[int]:
    """NCCL's second tree (trees.cc, ncclGetDtree): the first tree mirrored (rank r as n − 1 − r) when ``n``
    is even, shifted by one rank when it is odd, so a rank inner in one tree is a leaf in the other."""
    first = _btree_parents(n)
    if n % 2 == 0:
        return [-1 if first[n - 1 - r] < 0 else n - 1 - first[n - 1 - r] for r in range(n)]
    return [-1 if first[(r - 1) % n] < 0 else (first[(r - 1) % n] + 1) % n for r in range(n)]


class Lifted(NamedTuple):
    """Demands between routers (``between``) and what the cables of nodes cabled to one switch carry
    (``own``: all a node sends and receives)."""

    between: Demands
    own: dict[tuple[int, int], float]


def _lifted(demands: Demands, attach: Sequence[int]) -> Lifted:
    """``demands`` from the routers of the nodes cabled to one switch: a node's bytes all take its own cables
    to that switch and a destination's all arrive over its own, so they load those cables and leave the
    routing from the switch on, where the nodes of one switch share each pass (on a dragonfly a pass from a
    router rather than from each of its nodes: far fewer passes, the same loads)."""
    between: Demands = {}
    own: dict[tuple[int, int], float] = {}
    for dest, sources in demands.items():
        to = attach[dest]
        for src, units in sources.items():
            at = attach[src]
            for cable, on in (((src, at), at != src), ((to, dest), to != dest)):
                if on:
                    own[cable] = own.get(cable, 0.0) + units
            if at != to:
                between.setdefault(to, {})
                between[to][at] = between[to].get(at, 0.0) + units
    return Lifted(between, own)


def _route(fabric: RoutedFabric, demands: Lifted, flows_per_path: int | None, budget: list[int]) -> Load:
    """Route every destination router's traffic down its shortest-path levels and return the busiest cable,
    the nodes' own cables included; ``budget``: the cables left to look at (_Unrouted when spent). The
    destinations of a pattern cost much alike, so once 64 of them (or a sixteenth, if fewer) have been
    routed and they have spent more than their share of the budget, the rest would spend it all: it gives up
    there rather than at the end of the budget (a ring over the 12,800 nodes of the largest benchmark
    dragonfly gives up after 0.02 s rather than 0.27)."""
    load: dict[tuple[int, int], float] = dict(demands.own)
    raised: set[tuple[int, int]] = set()
    start, total = budget[0], len(demands.between)
    for done, (dest, sources) in enumerate(demands.between.items(), 1):
        _route_to(fabric.adjacency, dest, sources, flows_per_path, (load, raised), budget)
        if done >= min(64, total // 16) and (start - budget[0]) * total > start * done:
            raise _Unrouted
    rate = fabric.rates
    edge = max(load, key=lambda e: load[e] / rate[e], default=None)
    return Load(load[edge] / rate[edge], edge in raised) if edge is not None else Load(0.0, False)


def _route_to(
    adjacency: Sequence[Sequence[Hop]],
    dest: int,
    sources: dict[int, float],
    flows_per_path: int | None,
    out: tuple[dict[tuple[int, int], float], set[tuple[int, int]]],
    budget: list[int],
) -> None:
    """Add to the loads in ``out`` the traffic ``sources`` send ``dest`` (and mark the cables a hashed split
    raised). The traffic is passed down the distance levels, farthest first, so a vertex's inflow is whole
    before it is passed on, and only the vertices it reaches are looked at; each next hop takes the share of
    its cables among all the cables to next hops (one route per cable, as a multipath route has). Where
    flows are hashed over k next hops the busiest of them carries E[max] of the flows rather than 1/k
    (ecmp.ecmp_efficiency): its cable is charged that much more; the traffic passed on stays the even
    share."""
    load, raised = out
    dist = _levels(adjacency, dest, set(sources), budget)
    levels: dict[int, dict[int, float]] = {}
    for src, units in sources.items():
        at = levels.setdefault(dist[src], {})
        at[src] = at.get(src, 0.0) + units
    for level in range(max(levels, default=0), 0, -1):
        below = levels.setdefault(level - 1, {})
        for v, units in levels.pop(level, {}).items():
            hops = adjacency[v]
            budget[0] -= len(hops)  # the cables looked at for the next hops
            nexts = [hop for hop in hops if dist.get(hop.to) == level - 1]
            cables = sum(hop.cables for hop in nexts)
            hashing = ecmp_efficiency(len(nexts), flows_per_path) if flows_per_path is not None else 1.0
            for hop in nexts:
                share = units * hop.cables / cables
                load[(v, hop.to)] = load.get((v, hop.to), 0.0) + share / hashing
                if hashing < 1.0:
                    raised.add((v, hop.to))
                below[hop.to] = below.get(hop.to, 0.0) + share


def _levels(
    adjacency: Sequence[Sequence[Hop]], source: int, targets: set[int], budget: list[int]
) -> dict[int, int]:
    """Hop distances from ``source`` breadth-first, as far as the farthest of ``targets``: when the last of
    them is found, every vertex nearer has been, which is all the routes from them down to ``source`` pass
    through. Each cable looked at is spent from ``budget``; what a pass costs is what it visits (a dict, not a
    list the size of the fabric)."""
    dist = {source: 0}
    left = len(targets - {source})
    queue = deque([source])
    while queue and left:
        v = queue.popleft()
        hops = adjacency[v]
        budget[0] -= len(hops)
        if budget[0] < 0:
            raise _Unrouted
        near = dist[v] + 1
        for hop in hops:
            if hop.to not in dist:
                dist[hop.to] = near
                queue.append(hop.to)
                left -= hop.to in targets
    if left:
        raise _Unrouted  # a source the destination cannot reach
    return dist


def routed_fabric(
    plan: Plan, first: frozenset[str] = frozenset(), fabric: str = "compute"
) -> RoutedFabric | None:
    """The planned torus, hypercube or dragonfly as a router graph (None for others): its nodes in plan
    order, those named in ``first`` (the job's pool) ahead of the others, then the devices between them."""
    m = plan.metrics.get(fabric)
    links = plan.links_of(fabric)
    if m is None or m.topology not in ROUTED_TOPOLOGIES or not links:
        return None
    ends = {name for link in links for name in (link.a.device, link.b.device)}
    on_fabric = [d for d in plan.devices if d.name in ends]
    nodes = [d.name for d in on_fabric if d.kind == "node"]
    order = (
        [n for n in nodes if n in first]
        + [n for n in nodes if n not in first]
        + [d.name for d in on_fabric if d.kind != "node"]
    )
    index = {name: i for i, name in enumerate(order)}
    with gc_paused():  # ~600,000 cycle-free tuples on the largest benchmark (generator/gcpause.py)
        return _router_graph(links, index, len(nodes))


def _router_graph(links: Sequence[Link], index: dict[str, int], nodes: int) -> RoutedFabric:
    """The cables as the router graph of ``routed_fabric``, vertices numbered by ``index``."""
    # per vertex, the cables to each neighbour: [count, Gb/s] (380,600 cables on the largest benchmark)
    bundles: list[dict[int, list[float]]] = [{} for _ in index]
    for link in links:
        a, b = index[link.a.device], index[link.b.device]
        for v, u in ((a, b), (b, a)):
            bundle = bundles[v].get(u)
            if bundle is None:
                bundles[v][u] = [1, link.speed_gbps]
            else:
                bundle[0] += 1
                bundle[1] += link.speed_gbps
    # tuple.__new__ skips the NamedTuple constructor's own call: half the build of a large fabric
    adjacency = tuple(
        tuple(tuple.__new__(Hop, (u, int(count), gbps)) for u, (count, gbps) in sorted(bundle.items()))
        for bundle in bundles
    )
    attach = tuple(
        hops[0].to if v < nodes and len(hops) == 1 and hops[0].to >= nodes else v
        for v, hops in enumerate(adjacency)
    )
    return RoutedFabric(adjacency, nodes, attach)
