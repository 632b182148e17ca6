"""Fabric metrics: analytic (linear in cables) for every size, exact graph algorithms for checking.

Bisection is the capacity, in one direction, across the worst cut that splits the node ports in half
(min of half the injection and the tier capacities that such a cut crosses). Hop counts are links on the
shortest path between two node ports. SPOFs are switches whose loss cuts a node off the fabric entirely.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from generator.topology.base import (
    BuiltFabric,
    ClosParams,
    CubeParams,
    DragonflyParams,
    RawLink,
    Terminal,
)

if TYPE_CHECKING:  # networkx costs a quarter second to import; only the exact algorithms need it
    import networkx as nx


@dataclass(frozen=True)
class FabricMetrics:
    """One fabric's counts and analytic figures (bisection, hops, ECMP, SPOFs)."""

    fabric: str
    topology: str  # fat-tree | dragonfly | torus | hypercube | leaf-spine | none
    switches: dict[str, int]  # tier → count
    ports_used: dict[str, int]  # tier → used logical ports
    ports_free: dict[str, int]  # tier → free logical ports
    cables: dict[str, int]  # layer → count
    endpoints: int  # node ports attached
    injection_gbps: float  # sum of node port speeds
    bisection_gbps: float  # analytic
    oversubscription: dict[str, float]  # tier → down:up ratio as a number (1.0 = non-blocking)
    diameter_hops: int  # switch-to-switch hops on the longest shortest node-node path (links)
    mean_hops: float
    ecmp_paths: int  # equal-cost paths between two leaves in different SUs/groups
    spof: tuple[str, ...]  # devices whose loss cuts GPUs off (articulation points)
    bandwidth_after_spine_loss: float  # fraction of bisection left after one spine/core/router fails
    notes: tuple[str, ...] = ()


class _Cabled(NamedTuple):
    """The cables sorted once by what their ends are, for every figure below (a pass over the cables per
    figure cost the 20,000-cable dragonfly example 25 ms: issue 32)."""

    node_links: list[RawLink]  # end a is a node port
    switch_links: list[RawLink]  # a switch port at both ends
    used: Counter[str]  # switch -> its cabled ports


def _cabled(fabric: BuiltFabric) -> _Cabled:
    node_links: list[RawLink] = []
    switch_links: list[RawLink] = []
    switch_ends: list[str] = []
    for link in fabric.links:
        a, b = link.a, link.b
        if isinstance(a.port, Terminal):
            node_links.append(link)
            if not isinstance(b.port, Terminal):
                switch_ends.append(b.device)
        elif isinstance(b.port, Terminal):
            switch_ends.append(a.device)
        else:
            switch_links.append(link)
            switch_ends += (a.device, b.device)
    return _Cabled(node_links, switch_links, Counter(switch_ends))


def _port_usage(fabric: BuiltFabric, used: Counter[str]) -> tuple[dict[str, int], dict[str, int]]:
    per_tier_used: dict[str, int] = defaultdict(int)
    per_tier_free: dict[str, int] = defaultdict(int)
    for sw in fabric.switches:
        cap = sw.ports + sw.uplink_ports
        per_tier_used[sw.tier] += used[sw.name]
        per_tier_free[sw.tier] += max(0, cap - used[sw.name])
    return dict(per_tier_used), dict(per_tier_free)


def terminal_spofs(node_links: Iterable[RawLink]) -> list[str]:
    """Switches that carry every port of at least one node (their loss cuts that node off); ``node_links``:
    the cables whose end a is a node port."""
    homes: dict[str, set[str]] = defaultdict(set)
    for link in node_links:
        if not isinstance(link.b.port, Terminal):
            homes[link.a.device].add(link.b.device)
    return sorted({next(iter(s)) for s in homes.values() if len(s) == 1})


def tier_oversubscription(fabric: BuiltFabric, speed_gbps: float, up_speed: float) -> dict[str, float]:
    """Real down:up bandwidth per tier, from the cables built (the worst switch of the tier): a leaf with
    16 nodes and 64 uplinks is 0.25:1, not the 1:1 its ratio parameter asked for."""
    down: defaultdict[str, float] = defaultdict(float)
    up: defaultdict[str, float] = defaultdict(float)
    for lk in fabric.links:
        if isinstance(lk.a.port, Terminal):
            down[lk.b.device] += lk.speed_gbps or speed_gbps
        elif lk.layer == "leaf_spine":
            up[lk.a.device] += lk.speed_gbps or up_speed
            down[lk.b.device] += lk.speed_gbps or up_speed
        elif lk.layer == "spine_core":
            up[lk.a.device] += lk.speed_gbps or speed_gbps
    out: dict[str, float] = {}
    for tier in ("leaf", "spine"):
        ratios = [down[s.name] / up[s.name] for s in fabric.switches if s.tier == tier and up[s.name]]
        if ratios:
            out[tier] = round(max(ratios), 4)
    return out


def _hop_stats_clos(fabric: BuiltFabric, tiers: int, node_links: list[RawLink]) -> tuple[int, float]:
    """Diameter and mean hops between node ports of a 2/3-tier Clos from leaf/pod occupancy."""
    pod_of = {s.name: s.pod for s in fabric.switches}
    leaf_count = Counter(link.b.device for link in node_links)
    total = sum(leaf_count.values())
    if total < 2:
        return 0, 0.0
    pairs = total * (total - 1)
    same_leaf = sum(c * (c - 1) for c in leaf_count.values())
    pods: Counter[object] = Counter()
    for leaf, c in leaf_count.items():
        pods[pod_of.get(leaf)] += c
    multi_pod = tiers == 3 and len(pods) > 1
    same_pod = sum(c * (c - 1) for c in pods.values()) if multi_pod else pairs
    mean = (2 * same_leaf + 4 * (same_pod - same_leaf) + 6 * (pairs - same_pod)) / pairs
    diameter = 2 if len(leaf_count) == 1 else (6 if multi_pod else 4)
    return diameter, round(mean, 4)


class _RouterGraph(NamedTuple):
    """The router-level graph (parallel links merged) as bitsets: switch i's neighbours are the set bits of
    ``neighbours[i]``; ``number`` numbers the switches."""

    number: dict[str, int]
    neighbours: list[int]


def _router_graph(fabric: BuiltFabric, switch_links: list[RawLink]) -> _RouterGraph:
    index = {s.name: i for i, s in enumerate(fabric.switches)}
    neighbours = [0] * len(index)
    for link in switch_links:
        a, b = link.a, link.b
        if a.device == b.device:
            continue
        for u in (a.device, b.device):
            if u not in index:  # a switch device the builder did not list: a vertex all the same
                index[u] = len(neighbours)
                neighbours.append(0)
        i, j = index[a.device], index[b.device]
        neighbours[i] |= 1 << j
        neighbours[j] |= 1 << i
    return _RouterGraph(index, neighbours)


def _hop_counts(graph: _RouterGraph, source: int, targets: int) -> Counter[int]:
    """Breadth-first from switch ``source``: how many switches of the bitset ``targets`` lie at each hop
    count (the source itself, at 0, left out). Level by level on bitsets: a 512-router dragonfly is a few
    hundred big-int ORs per source instead of 24,000 set look-ups (issue 32)."""
    neighbours, everyone = graph.neighbours, (1 << len(graph.neighbours)) - 1
    seen = frontier = 1 << source
    found: Counter[int] = Counter()
    depth = 0
    while frontier and seen != everyone:  # all seen: the next level is empty, no need to expand this one
        depth += 1
        reach = 0
        while frontier:
            low = frontier & -frontier
            reach |= neighbours[low.bit_length() - 1]
            frontier ^= low
        frontier = reach & ~seen
        seen |= frontier
        hit = (frontier & targets).bit_count()
        if hit:
            found[depth] = hit
    return found


def _sampled_hops(fabric: BuiltFabric, cabled: _Cabled, sample: int = 48) -> tuple[int, float]:
    """Router-level BFS from a deterministic sample of switches hosting nodes, plus 2 terminal links."""
    graph = _router_graph(fabric, cabled.switch_links)
    hosts = sorted({link.b.device for link in cabled.node_links})
    if not hosts:
        return 0, 0.0
    step = max(1, len(hosts) // sample)
    sources = hosts[::step][:sample]
    targets = sum(1 << graph.number[h] for h in hosts if h in graph.number)
    diameter, total, count = 0, 0, 0
    for s in sources:
        for d, n in _hop_counts(graph, graph.number[s], targets).items():
            diameter = max(diameter, d)
            total += d * n
            count += n
    if count == 0:
        return 2, 2.0
    return diameter + 2, round(total / count + 2, 4)


def _crossing(links: Iterable[RawLink], side: dict[str, int]) -> tuple[int, Counter[str]]:
    n = 0
    per_device: Counter[str] = Counter()
    for link in links:
        sa, sb = side.get(link.a.device), side.get(link.b.device)
        if sa is not None and sb is not None and sa != sb:
            n += 1
            per_device[link.a.device] += 1
            per_device[link.b.device] += 1
    return n, per_device


def _cube_hops(dims: list[int]) -> tuple[int, float, int]:
    diameter = sum(k // 2 for k in dims)
    n = math.prod(dims)

    def ring_mean(k: int) -> float:
        return sum(min(i, k - i) for i in range(k)) / k

    mean = sum(ring_mean(k) for k in dims) * n / max(1, n - 1)
    dist = [k // 2 for k in dims]
    paths = math.factorial(sum(dist))
    for d in dist:
        paths //= math.factorial(d)
    paths *= 2 ** sum(1 for k in dims if k % 2 == 0 and k > 2)
    return diameter, mean, paths


class _Totals(NamedTuple):
    """Counts every topology's analysis starts from."""

    speed_gbps: float  # the fabric speed
    endpoints: int  # node ports attached
    injection: float  # sum of node port speeds
    cables: dict[str, int]  # layer -> count
    cabled: _Cabled


class _Analysis(NamedTuple):
    """What one topology's closed forms give (FabricMetrics fields, before rounding)."""

    bisection: float
    after_loss: float  # fraction of the bisection left after one spine/core/router fails
    oversubscription: dict[str, float]
    diameter: int
    mean_hops: float
    ecmp: int
    spof: list[str]
    notes: list[str]


class _Uplinks(NamedTuple):
    """Clos cables above the leaves, counted once."""

    leaf_spine: int
    spine_core: int
    up_speed: float  # leaf uplink speed


class _ClosLoss(NamedTuple):
    ecmp: int
    after_loss: float
    spof: list[str]


def _clos_spine_loss(
    fabric: BuiltFabric, p: ClosParams, t: _Totals, up: _Uplinks, bisection: float
) -> _ClosLoss:
    """ECMP paths, and what is left when one spine (3 tiers: one spine and one core) fails."""
    up_speed, sc = up.up_speed, up.spine_core
    up_total, sc_total = up.leaf_spine * up_speed, sc * t.speed_gbps
    core, spof = p.core, terminal_spofs(t.cabled.node_links)
    pods = core.pods if core is not None else 1
    if core is not None and sc:
        ecmp = core.spines_per_pod * core.cores_per_group
        lost_up = up_total - core.leaves_per_pod * up_speed
        lost_sc = sc_total - core.spine_up * t.speed_gbps
        caps = [t.injection, lost_up] + ([lost_sc] if pods > 1 else [])
        after = min(caps) / 2 / bisection if bisection else 0.0
    else:
        assert p.spine is not None
        ecmp = p.spine.spines
        lost = up_total - p.spine.spine_links * up_speed
        after = min(t.injection, lost) / 2 / bisection if bisection else 0.0
        if p.spine.spines == 1:
            spof = sorted({*spof, *(s.name for s in fabric.switches if s.tier == "spine")})
    if core is not None and core.cores == 1 and pods > 1:
        spof = sorted({*spof, *(s.name for s in fabric.switches if s.tier == "core")})
    return _ClosLoss(ecmp, after, spof)


def _clos(fabric: BuiltFabric, p: ClosParams, t: _Totals) -> _Analysis:
    """Fat-tree and leaf-spine: the tier capacities a half/half cut crosses, hops from leaf occupancy."""
    diameter, mean = _hop_stats_clos(fabric, p.tiers, t.cabled.node_links)
    if p.spine is None:
        spof = sorted({s.name for s in fabric.switches})
        note = "single switch: its loss stops the fabric"
        return _Analysis(t.injection / 2, 0.0, {"leaf": 1.0}, diameter, mean, 1, spof, [note])
    ls, sc = t.cables.get("leaf_spine", 0), t.cables.get("spine_core", 0)
    up = _Uplinks(ls, sc, float(p.uplink_speed_gbps or t.speed_gbps))
    caps = [t.injection, up.leaf_spine * up.up_speed]
    if up.spine_core and p.core is not None and p.core.pods > 1:
        caps.append(up.spine_core * t.speed_gbps)
    bisection = min(caps) / 2
    over = tier_oversubscription(fabric, t.speed_gbps, up.up_speed)
    loss = _clos_spine_loss(fabric, p, t, up, bisection)
    return _Analysis(bisection, loss.after_loss, over, diameter, mean, loss.ecmp, loss.spof, [])


def _dragonfly(fabric: BuiltFabric, p: DragonflyParams, t: _Totals) -> _Analysis:
    """The cut between the first and second half of the groups; ECMP = the fewest links of a group pair."""
    groups = p.groups
    group_of = {s.name: (s.su or 1) - 1 for s in fabric.switches}
    side = {n: (0 if grp < groups // 2 else 1) for n, grp in group_of.items()}
    global_links = [lk for lk in fabric.links if lk.layer == "global"]
    crossing, per_dev = _crossing(global_links, side)
    bisection = min(t.injection / 2, crossing * t.speed_gbps) if groups > 1 else t.injection / 2
    worst = max(per_dev.values(), default=0)
    after = (min(t.injection / 2, (crossing - worst) * t.speed_gbps) / bisection) if bisection else 0.0
    pair: Counter[frozenset[int]] = Counter()
    for lk in global_links:
        pair[frozenset((group_of[lk.a.device], group_of[lk.b.device]))] += 1
    diameter, mean = _sampled_hops(fabric, t.cabled)
    notes: list[str] = []
    if len(pair) < groups * (groups - 1) // 2:
        notes.append(f"{groups * (groups - 1) // 2 - len(pair)} group pairs have no direct global link")
    over = {"router": round(p.p / p.h, 4)}
    ecmp = min(pair.values(), default=0)
    spof = terminal_spofs(t.cabled.node_links)
    return _Analysis(bisection, after, over, diameter, mean, ecmp, spof, notes)


def _cube(fabric: BuiltFabric, p: CubeParams, t: _Totals) -> _Analysis:
    """Torus / hypercube: the cut across the largest dimension; switched cubes add the 2 node links."""
    dims = list(p.dims)
    diameter, mean, ecmp = _cube_hops(dims)
    cut_dim = max(range(len(dims)), key=lambda i: dims[i])
    k = dims[cut_dim]
    stride = math.prod(dims[:cut_dim])
    crossing_links = (p.vertices // k) * (2 if k > 2 else 1)
    bisection = min(t.injection / 2, crossing_links * t.speed_gbps)
    after = (min(t.injection / 2, (crossing_links - 1) * t.speed_gbps) / bisection) if bisection else 0.0
    if p.attach == "switch":
        diameter, mean = diameter + 2, round(mean + 2, 4)
        per_node_ports = max(1, t.endpoints // max(1, p.vertices))
        over = {"switch": round(per_node_ports / p.degree, 4)}
    else:
        over = {"node": 1.0}
    note = f"bisection cut across dimension {cut_dim} (size {k}, stride {stride})"
    spof = terminal_spofs(t.cabled.node_links)
    return _Analysis(bisection, after, over, diameter, round(mean, 4), ecmp, spof, [note])


def compute_metrics(name: str, fabric: BuiltFabric, speed_gbps: float) -> FabricMetrics:
    cabled = _cabled(fabric)
    used, free = _port_usage(fabric, cabled.used)
    node_links = cabled.node_links
    injection = sum((lk.speed_gbps or speed_gbps) for lk in node_links)
    layers = dict(Counter(lk.layer for lk in fabric.links))
    totals = _Totals(speed_gbps, len(node_links), injection, layers, cabled)
    p = fabric.params
    if isinstance(p, ClosParams):
        a = _clos(fabric, p, totals)
    elif isinstance(p, DragonflyParams):
        a = _dragonfly(fabric, p, totals)
    else:
        a = _cube(fabric, p, totals)
    return FabricMetrics(
        fabric=name,
        topology=fabric.kind,
        switches=dict(Counter(s.tier for s in fabric.switches)),
        ports_used=used,
        ports_free=free,
        cables=totals.cables,
        endpoints=totals.endpoints,
        injection_gbps=totals.injection,
        bisection_gbps=round(a.bisection, 3),
        oversubscription=a.oversubscription,
        diameter_hops=int(a.diameter),
        mean_hops=float(a.mean_hops),
        ecmp_paths=int(a.ecmp),
        spof=tuple(a.spof),
        bandwidth_after_spine_loss=round(a.after_loss, 4),
        notes=tuple(a.notes),
    )


# ---- exact algorithms, for tests and small fabrics --------------------------------------------------


def flow_graph(fabric: BuiltFabric, speed_gbps: float) -> nx.DiGraph:
    """Devices as vertices, both directions of every cable as capacity (parallel cables add up)."""
    import networkx as nx

    g = nx.DiGraph()
    for link in fabric.links:
        cap = link.speed_gbps or speed_gbps
        for u, v in ((link.a.device, link.b.device), (link.b.device, link.a.device)):
            if g.has_edge(u, v):
                g[u][v]["capacity"] += cap
            else:
                g.add_edge(u, v, capacity=cap)
    return g


def exact_bisection(fabric: BuiltFabric, speed_gbps: float, first_half: set[str]) -> float:
    """Max-flow from the node ports in ``first_half`` (host names) to all other hosts."""
    import networkx as nx

    g = flow_graph(fabric, speed_gbps)
    hosts = sorted(
        {lk.a.device for lk in fabric.links if isinstance(lk.a.port, Terminal)}
        | {lk.b.device for lk in fabric.links if isinstance(lk.b.port, Terminal)}
    )
    for h in hosts:
        if h in first_half:
            g.add_edge("__src__", h, capacity=float("inf"))
        else:
            g.add_edge(h, "__dst__", capacity=float("inf"))
    value, _ = nx.maximum_flow(g, "__src__", "__dst__")
    return float(value)


def exact_spofs(fabric: BuiltFabric) -> list[str]:
    """Switches whose removal disconnects some host from the others (checked by graph search)."""
    import networkx as nx

    g = nx.Graph()
    for link in fabric.links:
        g.add_edge(link.a.device, link.b.device)
    hosts = {lk.a.device for lk in fabric.links if isinstance(lk.a.port, Terminal)}
    switch_names = {s.name for s in fabric.switches}
    out = []
    for ap in nx.articulation_points(g):
        if ap not in switch_names:
            continue
        h = g.copy()
        h.remove_node(ap)
        comps = [c & hosts for c in nx.connected_components(h)]
        if sum(1 for c in comps if c) > 1:
            out.append(ap)
    if len(switch_names) == 1 and len(hosts) > 1:
        out = sorted(switch_names)
    return sorted(out)
