"""The dragonfly's hop figures (the router-level breadth-first search on bitsets in
generator/topology/metrics.py) against networkx's shortest paths on the same cables: an independent oracle.

The metric is: from a sample of the switches that host node ports (every ``step``-th in name order, at most
48), the router hops to every other host switch it reaches; diameter = the most, mean = their average, both
plus the 2 node links. With at most 48 host switches every one is a source, so the oracle is all pairs.
"""

from __future__ import annotations

import networkx as nx
import pytest

from generator.topology.base import BuiltFabric, Terminal
from generator.topology.dragonfly import dragonfly
from generator.topology.metrics import compute_metrics


def hosts(n: int, ports: int = 1) -> list[list[Terminal]]:
    return [[Terminal(f"n{i:05d}", f"mlx5_{r}/1", 1, r) for r in range(ports)] for i in range(n)]


def oracle(fabric: BuiltFabric, sources: list[str] | None = None) -> tuple[int, float]:
    """(diameter, mean) from networkx: all host switches, or only ``sources``, as the start points."""
    g = nx.Graph()
    g.add_nodes_from(s.name for s in fabric.switches)
    for link in fabric.links:
        a, b = link.a, link.b
        if not isinstance(a.port, Terminal) and not isinstance(b.port, Terminal) and a.device != b.device:
            g.add_edge(a.device, b.device)
    homes = {link.b.device for link in fabric.links if isinstance(link.a.port, Terminal)}
    dists = [
        d
        for s in (sources if sources is not None else sorted(homes))
        for t, d in nx.single_source_shortest_path_length(g, s).items()
        if t in homes and t != s
    ]
    if not dists:
        return 2, 2.0
    return max(dists) + 2, round(sum(dists) / len(dists) + 2, 4)


@pytest.mark.parametrize("arrangement", ["absolute", "relative", "circulant"])
@pytest.mark.parametrize(("p", "a", "h", "groups"), [(2, 4, 2, 9), (1, 3, 1, 4), (2, 2, 1, 5), (4, 8, 4, 5)])
def test_dragonfly_hops_match_networkx(p: int, a: int, h: int, groups: int, arrangement: str) -> None:
    f = dragonfly(hosts(p * a * groups), p=p, a=a, h=h, groups=groups, radix=64, arrangement=arrangement)
    m = compute_metrics("compute", f, 400.0)
    assert (m.diameter_hops, m.mean_hops) == oracle(f)


def test_disconnected_groups_count_only_what_is_reached() -> None:
    # one global port per group, absolute arrangement: groups 0 and 1 pair up, groups 2 and 3 get no partner
    f = dragonfly(hosts(4), p=1, a=1, h=1, groups=4, radix=8, arrangement="absolute")
    m = compute_metrics("compute", f, 100.0)
    assert (m.diameter_hops, m.mean_hops) == oracle(f) == (3, 3.0)


def test_partly_filled_dragonfly_measures_only_host_routers() -> None:
    f = dragonfly(hosts(10, ports=2), p=4, a=4, h=2, groups=5, radix=32, arrangement="relative")
    m = compute_metrics("compute", f, 200.0)
    assert (m.diameter_hops, m.mean_hops) == oracle(f)


def test_sampled_sources_on_a_large_dragonfly() -> None:
    # 128 host routers: 48 sources, every (128 // 48 = 2)nd router in name order
    f = dragonfly(hosts(16 * 8 * 16), p=16, a=8, h=4, groups=16, radix=64, arrangement="relative")
    homes = sorted({link.b.device for link in f.links if isinstance(link.a.port, Terminal)})
    assert len(homes) == 128
    m = compute_metrics("compute", f, 400.0)
    assert (m.diameter_hops, m.mean_hops) == oracle(f, homes[::2][:48])
