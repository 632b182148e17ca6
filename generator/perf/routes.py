"""Link loads of a packed job's traffic routed over a cube fabric's own cables (torus, hypercube).

On a fat-tree or a dragonfly a job's spread traffic meets the fabric through shares in closed form
(system.spread_bound): every node of a leaf group reaches the same uplinks. A torus or hypercube has no such
groups: which cables two nodes' bytes cross depends on where the nodes sit, so two neighbours of a torus
share one cable while nodes half way round share the bisection. Here the traffic is routed over the planned
cables themselves, as the fabric forwards it: along shortest paths, split evenly over the cables to the
equal-cost next hops at every router (hop-by-hop ECMP, as multipath IP routes on nodes that forward for
their neighbours and the switches of a switched cube have; InfiniBand's shortest-path routing engines, such
as OpenSM's DFSSSP, spread destinations over the same paths). The result is the busiest directed cable's
load per unit a node injects, so what a node can send is that cable's rate over its load.

Routing is per destination: one breadth-first pass out to the farthest node sending to it, then the traffic
bound for it flows down the distance levels. A ring's next node is a hop or two away, so its passes are
short; spread traffic passes over the whole job for each of its nodes. Jobs past ``MAX_ROUTED_VISITS`` edge
visits are left to the closed forms (``RoutedFabric.load`` returns None).

Ranks placed without regard to the topology (a scheduler that does not know it, jobs sharing the fabric) sit
on the fabric's nodes in random order, so a ring's next node is anywhere. Which cable is busiest then depends
on the draw: the model takes the mean, over ``RANDOM_DRAWS`` seeded draws, of each draw's busiest cable
(``shuffled=True``). The mean of the loads alone (uniform traffic) would miss that a random ring piles several
of its hops onto some cable while others stay idle.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from generator.perf.ecmp import ecmp_efficiency

if TYPE_CHECKING:
    from generator.plan.model import Plan

CUBES = ("torus", "hypercube")

# Cables looked at while routing one pattern for one job, at most: about half a second of CPU on the
# benchmark machine (spread traffic over a whole 19 x 19 direct torus, 0.52 M visits, routes in 0.23 s); a
# sweep over node counts routes each count once per pattern.
MAX_ROUTED_VISITS = 1_000_000

# Random rank orders a shuffled pattern is routed for (seeds 0 .. RANDOM_DRAWS - 1, so a blueprint always
# gives the same figure); they share one MAX_ROUTED_VISITS budget. Sixteen draws put the mean busiest cable of
# a ring or trees over a whole 4 x 4, 8 x 8 or 4 x 4 x 4 torus within 3 % of the mean over 400 draws.
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


@dataclass(frozen=True)
class RoutedFabric:
    """A cube fabric as a router graph: vertex 0.. are its nodes in plan order (a packed job takes the first
    ``n``), then its switches; ``adjacency[v]`` lists the cables to each neighbour."""

    adjacency: tuple[tuple[Hop, ...], ...]
    nodes: int
    _cache: dict[tuple[str, int, int | None, bool], Load | None] = field(
        default_factory=dict, compare=False, repr=False
    )

    def load(
        self, pattern: str, n: int, flows_per_path: int | None = None, shuffled: bool = False
    ) -> Load | None:
        """The busiest cable of ``pattern`` over the first ``n`` nodes ("spread": each sends equally to the
        other ``n - 1``; "ring": each to the next in order, the last to the first; "tree": NCCL's two binary
        trees over them in order) per unit the busiest node injects; None for fewer than two nodes or past
        ``MAX_ROUTED_VISITS``. ``flows_per_path``: the routers hash that many flows per next hop onto their
        equal-cost next hops (None: they spread the bytes evenly, as adaptive routing and InfiniBand's
        balanced routes do). ``shuffled``: ``n`` of the fabric's nodes drawn at random, in random order, and
        the mean of the busiest cable's load over ``RANDOM_DRAWS`` draws."""
        n = min(n, self.nodes)
        # spread traffic visits at least the job's n nodes for each of its n destinations
        if n < 2 or (pattern == "spread" and n * n > MAX_ROUTED_VISITS):
            return None
        key = (pattern, n, flows_per_path, shuffled)
        if key not in self._cache:
            try:
                self._cache[key] = self._routed(pattern, n, flows_per_path, shuffled)
            except _OverBudget:
                self._cache[key] = None
        return self._cache[key]

    def _routed(self, pattern: str, n: int, flows_per_path: int | None, shuffled: bool) -> Load:
        budget = [MAX_ROUTED_VISITS]
        demands = _demands(pattern, n)
        if not shuffled:
            return _route(self.adjacency, demands, flows_per_path, budget)
        draws = []
        for seed in range(RANDOM_DRAWS):
            where = random.Random(seed).sample(range(self.nodes), n)  # rank i on node where[i]
            placed = {where[d]: {where[s]: u for s, u in srcs.items()} for d, srcs in demands.items()}
            draws.append(_route(self.adjacency, placed, flows_per_path, budget))
        return Load(sum(d.per_gbps for d in draws) / len(draws), any(d.hashed for d in draws))


class _OverBudget(Exception):
    """More than MAX_ROUTED_VISITS edge visits: the job is left to the closed forms."""


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


def _route(
    adjacency: Sequence[Sequence[Hop]], demands: Demands, flows_per_path: int | None, budget: list[int]
) -> Load:
    """Route every destination's traffic down its shortest-path levels and return the busiest cable;
    ``budget``: the edge visits left (_OverBudget when spent)."""
    load: dict[tuple[int, int], float] = {}
    raised: set[tuple[int, int]] = set()
    for dest, sources in demands.items():
        _route_to(adjacency, dest, sources, flows_per_path, (load, raised), budget)
    rate = {(v, hop.to): hop.gbps for v, hops in enumerate(adjacency) for hop in hops}
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
    raised). Vertices are taken farthest first, so a vertex's inflow is whole before it is passed on; each
    next hop takes the share of its cables among all the cables to next hops (one route per cable, as a
    multipath route has). Where flows are hashed over k next hops the busiest of them carries E[max] of the
    flows rather than 1/k (ecmp.ecmp_efficiency): its cable is charged that much more; the traffic passed
    on stays the even share."""
    load, raised = out
    dist, order = _levels(adjacency, dest, set(sources), budget)
    flow = dict.fromkeys(order, 0.0)
    for s, units in sources.items():
        flow[s] += units
    for v in reversed(order):
        units = flow[v]
        if v == dest or units == 0.0:
            continue
        nexts = [hop for hop in adjacency[v] if dist.get(hop.to) == dist[v] - 1]
        cables = sum(hop.cables for hop in nexts)
        hashing = ecmp_efficiency(len(nexts), flows_per_path) if flows_per_path is not None else 1.0
        for hop in nexts:
            share = units * hop.cables / cables
            load[(v, hop.to)] = load.get((v, hop.to), 0.0) + share / hashing
            if hashing < 1.0:
                raised.add((v, hop.to))
            flow[hop.to] += share


def _levels(
    adjacency: Sequence[Sequence[Hop]], source: int, targets: set[int], budget: list[int]
) -> tuple[dict[int, int], list[int]]:
    """Hop distances from ``source`` and the vertices in breadth-first order (nearest first), as far as the
    farthest of ``targets``: when the last of them is found, every vertex nearer has been, which is all the
    routes from them down to ``source`` pass through. Each cable looked at is spent from ``budget``; what a
    pass costs is what it visits (a dict, not a list the size of the fabric)."""
    dist = {source: 0}
    order = [source]
    left = len(targets - {source})
    queue = deque([source])
    while queue and left:
        v = queue.popleft()
        budget[0] -= len(adjacency[v])
        if budget[0] < 0:
            raise _OverBudget
        for hop in adjacency[v]:
            if hop.to not in dist:
                dist[hop.to] = dist[v] + 1
                order.append(hop.to)
                queue.append(hop.to)
                left -= hop.to in targets
    return dist, order


def routed_fabric(
    plan: Plan, first: frozenset[str] = frozenset(), fabric: str = "compute"
) -> RoutedFabric | None:
    """The planned cube fabric as a router graph (None for other topologies): its nodes in plan order, those
    named in ``first`` (the job's pool) ahead of the others, then the devices between them."""
    m = plan.metrics.get(fabric)
    links = plan.links_of(fabric)
    if m is None or m.topology not in CUBES or not links:
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
    cables: dict[tuple[int, int], tuple[int, float]] = {}
    for link in links:
        a, b = index[link.a.device], index[link.b.device]
        for pair in ((a, b), (b, a)):
            count, gbps = cables.get(pair, (0, 0.0))
            cables[pair] = (count + 1, gbps + link.speed_gbps)
    adjacency: list[list[Hop]] = [[] for _ in order]
    for (v, u), (count, gbps) in sorted(cables.items()):
        adjacency[v].append(Hop(u, count, gbps))
    return RoutedFabric(tuple(tuple(hops) for hops in adjacency), len(nodes))
