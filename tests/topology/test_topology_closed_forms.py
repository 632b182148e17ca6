"""Builders against the closed forms (Al-Fares k-ary fat-tree, 2-tier Clos, Kim et al. dragonfly, tori)."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from generator.topology.base import Terminal, TopologyError
from generator.topology.cube import cube, hypercube, torus
from generator.topology.dragonfly import dragonfly
from generator.topology.fat_tree import fat_tree
from generator.topology.metrics import compute_metrics, exact_bisection, exact_spofs


def hosts(n: int, ports: int = 1) -> list[list[Terminal]]:
    return [[Terminal(f"n{i:05d}", f"mlx5_{r}/1", 1, r) for r in range(ports)] for i in range(n)]


@pytest.mark.parametrize("k", [4, 6, 8, 16])
def test_k_ary_fat_tree(k: int) -> None:
    f = fat_tree(hosts(k**3 // 4), radix=k, tiers=3, rail_optimized=False)
    tiers = Counter(s.tier for s in f.switches)
    assert tiers == {"leaf": k * k // 2, "spine": k * k // 2, "core": k * k // 4}
    assert sum(tiers.values()) == 5 * k * k // 4
    layers = Counter(link.layer for link in f.links)
    assert layers == {"node_leaf": k**3 // 4, "leaf_spine": k**3 // 4, "spine_core": k**3 // 4}


@pytest.mark.parametrize("k", [4, 8, 40, 64])
def test_two_tier_clos(k: int) -> None:
    f = fat_tree(hosts(k * k // 2), radix=k, tiers=2, rail_optimized=False)
    tiers = Counter(s.tier for s in f.switches)
    assert tiers == {"leaf": k, "spine": k // 2}
    assert Counter(link.layer for link in f.links) == {"node_leaf": k * k // 2, "leaf_spine": k * k // 2}


def test_two_tier_refuses_too_many_nodes() -> None:
    with pytest.raises(TopologyError, match="more than 2 tiers"):
        fat_tree(hosts(8 * 8 // 2 + 1), radix=8, tiers=2, rail_optimized=False)


def test_rail_optimised_superpod_shape() -> None:
    f = fat_tree(hosts(128, ports=8), radix=64, tiers=2, rail_optimized=True, su_size=32)
    tiers = Counter(s.tier for s in f.switches)
    assert tiers == {"leaf": 32, "spine": 16}
    # every leaf carries exactly one rail
    rails_on_leaf: dict[str, set[int]] = {}
    for link in f.links:
        if link.layer == "node_leaf":
            rails_on_leaf.setdefault(link.b.device, set()).add(link.a.port.rail)
    assert all(len(r) == 1 for r in rails_on_leaf.values())
    assert len(rails_on_leaf) == 32


def test_growth_sizes_spines_for_the_full_build() -> None:
    now = fat_tree(hosts(128, ports=8), radix=64, su_size=32)
    grown = fat_tree(hosts(128, ports=8), radix=64, su_size=32, growth_nodes=256)
    assert Counter(s.tier for s in now.switches)["spine"] == 16
    assert Counter(s.tier for s in grown.switches)["spine"] == 32
    # leaf-spine cables for the full build-out of the existing leaves; spine ports left free for new leaves
    m = compute_metrics("compute", grown, 400)
    assert m.ports_free["spine"] == 32 * 64 - 32 * 32


@pytest.mark.parametrize("h", [1, 2, 3])
def test_balanced_dragonfly_size(h: int) -> None:
    p, a = h, 2 * h
    g = a * h + 1
    n = a * p * g
    assert n == 4 * h**4 + 2 * h**2
    f = dragonfly(hosts(n), p=p, a=a, h=h, groups=g, radix=p + a + h - 1)
    layers = Counter(link.layer for link in f.links)
    assert layers["node_router"] == n
    assert layers["local"] == g * a * (a - 1) // 2
    assert layers["global"] == g * (g - 1) // 2  # absolute arrangement: one link per group pair
    pairs = {
        frozenset((link.a.device.split("-")[2], link.b.device.split("-")[2]))
        for link in f.links
        if link.layer == "global"
    }
    assert len(pairs) == g * (g - 1) // 2


@pytest.mark.parametrize("arrangement", ["absolute", "relative", "circulant"])
def test_dragonfly_arrangements_use_each_port_once(arrangement: str) -> None:
    f = dragonfly(hosts(4 * 2 * 9), p=2, a=4, h=2, groups=9, radix=7, arrangement=arrangement)
    used = Counter()
    for link in f.links:
        for end in (link.a, link.b):
            if not isinstance(end.port, Terminal):
                used[(end.device, end.port)] += 1
    assert max(used.values()) == 1
    assert sum(1 for link in f.links if link.layer == "global") == 36


@pytest.mark.parametrize("dims", [[3, 3], [4, 4, 2], [5, 3, 2], [2, 2, 2, 2]])
def test_torus_link_count(dims: list[int]) -> None:
    n = math.prod(dims)
    degree = sum(1 if k == 2 else 2 for k in dims)
    f = torus(hosts(n, ports=degree), dims=dims)
    expected = sum(n if k > 2 else n // 2 for k in dims)
    assert len(f.links) == expected
    per_node = Counter()
    for link in f.links:
        per_node[link.a.device] += 1
        per_node[link.b.device] += 1
    assert set(per_node.values()) == {degree}


@pytest.mark.parametrize("d", [1, 3, 5])
def test_hypercube(d: int) -> None:
    f = hypercube(hosts(2**d, ports=d), dimension=d)
    assert len(f.links) == d * 2 ** (d - 1)
    m = compute_metrics("compute", f, 100)
    assert m.diameter_hops == d


def test_non_blocking_bisection_is_half_injection_by_max_flow() -> None:
    f = fat_tree(hosts(32), radix=8, tiers=2, rail_optimized=False)
    m = compute_metrics("compute", f, 100.0)
    assert m.bisection_gbps == pytest.approx(m.injection_gbps / 2)
    first = {f"n{i:05d}" for i in range(16)}
    assert exact_bisection(f, 100.0, first) == pytest.approx(m.bisection_gbps)


def test_oversubscribed_bisection_shows_the_ratio() -> None:
    f = fat_tree(hosts(48), radix=8, tiers=2, ratio=(3, 1), rail_optimized=False)
    m = compute_metrics("compute", f, 100.0)
    assert m.oversubscription["leaf"] == pytest.approx(3.0)
    assert m.bisection_gbps == pytest.approx(m.injection_gbps / 2 / 3)
    first = {f"n{i:05d}" for i in range(24)}
    assert exact_bisection(f, 100.0, first) == pytest.approx(m.bisection_gbps)


def test_three_tier_bisection_by_max_flow() -> None:
    k = 4
    f = fat_tree(hosts(k**3 // 4), radix=k, tiers=3, rail_optimized=False)
    m = compute_metrics("compute", f, 10.0)
    first = {f"n{i:05d}" for i in range(k**3 // 8)}
    assert (
        exact_bisection(f, 10.0, first)
        == pytest.approx(m.bisection_gbps)
        == pytest.approx(m.injection_gbps / 2)
    )


def test_spofs_match_articulation_points() -> None:
    single_homed = fat_tree(hosts(16), radix=8, tiers=2, rail_optimized=False)
    m = compute_metrics("compute", single_homed, 100.0)
    assert list(m.spof) == exact_spofs(single_homed)
    assert len(m.spof) == 4  # every leaf carries whole nodes
    rails = fat_tree(hosts(16, ports=4), radix=32, tiers=2, su_size=16)
    assert compute_metrics("compute", rails, 100.0).spof == () and exact_spofs(rails) == []
    t = torus(hosts(9, ports=4), dims=[3, 3])
    assert compute_metrics("compute", t, 100.0).spof == () and exact_spofs(t) == []


def test_torus_bisection_by_max_flow() -> None:
    t = torus(hosts(16, ports=4), dims=[4, 4])
    m = compute_metrics("compute", t, 100.0)
    first = {f"n{i:05d}" for i in range(16) if (i // 4) < 2}  # split across dimension 1
    assert exact_bisection(t, 100.0, first) == pytest.approx(m.bisection_gbps)


def test_cube_argument_checks() -> None:
    with pytest.raises(TopologyError, match="vertices"):
        cube(hosts(10, ports=4), dims=[3, 3])
    with pytest.raises(TopologyError, match="needs 4 ports"):
        cube(hosts(9, ports=2), dims=[3, 3])
