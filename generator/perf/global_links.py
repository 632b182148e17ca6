"""A dragonfly's global links in closed form: what the spread traffic of a job too large to route over the
cables (routes.py) meets between groups.

Both routings the tool generates for a dragonfly take shortest paths only: its RoCE routers run eBGP with an
ASN each and ``bgp bestpath as-path multipath-relax`` (generator/emit/switches/frr.py), so they share traffic
only over paths of the shortest AS path, and OpenSM routes InfiniBand with min-hop unless the blueprint names
another engine (generator/plan/subnet_manager.py). Routes between two groups take the global links joining
them directly wherever those give the shortest paths (Kim et al., "Technology-Driven, Highly-Scalable
Dragonfly Topology", ISCA 2008: a minimal route crosses at most one global channel). Bytes between groups i
and j are charged to those links: with m_i and m_j of a job's n nodes in them, spread traffic (each node
sends 1/(n − 1) of its bytes to every peer) puts m_i·m_j/(n − 1) of a node's bytes on them each way, so a node
can send at most ``links_ij × (n − 1) / (m_i · m_j)``. A job in two groups of a large dragonfly meets only
the few links between them; over the whole fabric a balanced dragonfly's global links carry what its nodes
inject (Kim et al.: a = 2p = 2h).

What the closed form leaves out, and the routes count: the local links inside a group; a route through a
third group where that is as short as the direct links (a router without a link of its own to the other
group reaches it in three hops directly, but in two through a third group whose router links to the
destination: two groups of nine, one link between each two, allow twice the closed form); and an uneven
split over the links. On the example, whose routers each link to every other group, routing two groups'
spread traffic loads their 34 links within 1 % of the closed form.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from generator.plan.model import Plan


@dataclass(frozen=True)
class Crossing:
    """What the busiest pair of groups allows a node of a job: ``gbps`` per node (line rate, one direction),
    the pair's direct links (``links`` of ``link_gbps`` in all) and the job's nodes in each group."""

    gbps: float
    groups: tuple[int, int]
    links: int
    link_gbps: float
    nodes: tuple[int, int]


@dataclass(frozen=True)
class GlobalLinks:
    """A dragonfly's nodes by group (``group_of``: the pool's nodes first, in plan order, as a packed job
    takes them, then the others) and the global links joining each pair of groups (count and total Gb/s)."""

    group_of: tuple[int, ...]
    links: dict[tuple[int, int], tuple[int, float]]
    _cache: dict[int, Crossing | None] = field(default_factory=dict, compare=False, repr=False)

    def crossing(self, n: int) -> Crossing | None:
        """The tightest pair of groups for spread traffic over the first ``n`` nodes; None when they sit in
        one group (nothing crosses) or two of their groups have no direct link (minimal routes then cross a
        third group: not modelled here)."""
        n = min(n, len(self.group_of))
        if n not in self._cache:
            self._cache[n] = self._crossing(n)
        return self._cache[n]

    def _crossing(self, n: int) -> Crossing | None:
        counts = Counter(self.group_of[:n])
        if n < 2 or len(counts) < 2:
            return None
        best: Crossing | None = None
        groups = sorted(counts)
        for x, i in enumerate(groups):
            for j in groups[x + 1 :]:
                count, gbps = self.links.get((i, j), (0, 0.0))
                if count == 0:
                    return None
                per_node = gbps * (n - 1) / (counts[i] * counts[j])
                if best is None or per_node < best.gbps:
                    best = Crossing(per_node, (i, j), count, gbps, (counts[i], counts[j]))
        return best


def global_links(
    plan: Plan, first: frozenset[str] = frozenset(), fabric: str = "compute"
) -> GlobalLinks | None:
    """The planned dragonfly's groups and global links (None for other topologies): each node's group is that
    of the router it is cabled to (its ``su``); a link between routers of two groups is a global link."""
    m = plan.metrics.get(fabric)
    links = plan.links_of(fabric)
    if m is None or m.topology != "dragonfly" or not links:
        return None
    group = {d.name: d.su for d in plan.devices if d.kind == "switch" and d.su is not None}
    nodes = {d.name for d in plan.devices if d.kind == "node"}
    home: dict[str, int] = {}
    between: dict[tuple[int, int], tuple[int, float]] = {}
    # one pass over the cables (380,600 on the largest benchmark dragonfly)
    for link in links:
        a, b = link.a.device, link.b.device
        ga, gb = group.get(a), group.get(b)
        if ga is not None and gb is not None:
            if ga != gb:
                pair = (ga, gb) if ga < gb else (gb, ga)
                count, gbps = between.get(pair, (0, 0.0))
                between[pair] = (count + 1, gbps + link.speed_gbps)
        elif gb is not None and a in nodes:
            home.setdefault(a, gb)
        elif ga is not None and b in nodes:
            home.setdefault(b, ga)
    order = [d.name for d in plan.devices if d.name in home]
    order = [n for n in order if n in first] + [n for n in order if n not in first]
    if len(set(home.values())) < 2:
        return None
    return GlobalLinks(tuple(home[n] for n in order), between)
