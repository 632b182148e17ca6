"""The typed facts each builder reports (``BuiltFabric.params``) against what is counted on the switches and
cables it built, and against closed forms (Al-Fares k-ary fat-tree, Kim et al. dragonfly, k-ary n-cubes).
The metrics, the placement units and the site layout read these facts, so they must describe the fabric."""

from __future__ import annotations

import math
from collections import Counter, defaultdict

import pytest

from generator.topology.base import (
    BuiltFabric,
    ClosParams,
    CubeParams,
    DragonflyParams,
    FatTreeParams,
    LeafSpineParams,
    Terminal,
)
from generator.topology.cube import cube
from generator.topology.dragonfly import dragonfly
from generator.topology.fat_tree import fat_tree
from generator.topology.leaf_spine import leaf_spine


def hosts(n: int, ports: int = 1, prefix: str = "n") -> list[list[Terminal]]:
    return [[Terminal(f"{prefix}{i:05d}", f"mlx5_{r}/1", 1, r) for r in range(ports)] for i in range(n)]


def _tiers(f: BuiltFabric) -> Counter[str]:
    return Counter(s.tier for s in f.switches)


def _links_per_device(f: BuiltFabric, layer: str) -> tuple[Counter[str], Counter[tuple[str, str]]]:
    """Cables of ``layer`` per far-end device (b side), and per (a, b) device pair."""
    into: Counter[str] = Counter()
    pair: Counter[tuple[str, str]] = Counter()
    for lk in f.links:
        if lk.layer == layer:
            into[lk.b.device] += 1
            pair[(lk.a.device, lk.b.device)] += 1
    return into, pair


def _check_clos(f: BuiltFabric) -> ClosParams:
    """Every Clos fact against the cables: leaf and spine counts, first uplink port, links per spine and
    per leaf-spine pair, cores and pods."""
    p = f.params
    assert isinstance(p, ClosParams)
    tiers = _tiers(f)
    assert p.leaves == tiers["leaf"]
    leaf_names = {s.name for s in f.switches if s.tier == "leaf"}
    uplink_ports = [lk.a.port for lk in f.links if lk.layer == "leaf_spine" and lk.a.device in leaf_names]
    if p.spine is None:
        assert tiers["spine"] == 0 and p.leaves == 1 and not uplink_ports
        return p
    assert p.spine.spines == tiers["spine"]
    assert min(port for port in uplink_ports if isinstance(port, int)) == p.first_up
    into_spine, per_pair = _links_per_device(f, "leaf_spine")
    assert max(per_pair.values()) == p.spine.per_pair
    if p.core is None:
        assert p.tiers == 2 or isinstance(p, FatTreeParams)
        assert max(into_spine.values()) == p.spine.spine_links
        assert tiers["core"] == 0
    else:
        assert p.tiers == 3
        assert p.core.cores == tiers["core"]
        assert p.core.pods == len({s.pod for s in f.switches if s.tier == "spine"})
        assert p.core.spines_per_pod * p.core.pods == tiers["spine"]
        assert max(into_spine.values()) == p.core.leaves_per_pod
        _, spine_core = _links_per_device(f, "spine_core")
        assert max(spine_core.values()) == p.core.core_pair
    return p


@pytest.mark.parametrize("k", [4, 8, 16])
def test_k_ary_fat_tree_facts(k: int) -> None:
    """Al-Fares: k pods of k/2 leaves and k/2 spines, (k/2)^2 cores in k/2 groups of k/2."""
    f = fat_tree(hosts(k**3 // 4), radix=k, tiers=3, rail_optimized=False)
    p = _check_clos(f)
    assert isinstance(p, FatTreeParams) and p.core is not None
    assert (p.down, p.up, p.first_up) == (k // 2, k // 2, k // 2 + 1)
    assert (p.core.pods, p.core.spines_per_pod, p.core.cores_per_group) == (k, k // 2, k // 2)
    assert (p.core.spine_down, p.core.spine_up, p.core.core_pair) == (k // 2, k // 2, 1)


def test_rail_optimised_fat_tree_facts() -> None:
    """4 SUs of 32 nodes with 8 rails on 64-port leaves at 1:1: 32 leaves of 32 down and 32 up ports, 16 spines
    with 2 cables to each leaf (32 x 32 uplinks over 16 spines of 64 ports)."""
    f = fat_tree(hosts(128, ports=8), radix=64, tiers=2, rail_optimized=True, su_size=32)
    p = _check_clos(f)
    assert isinstance(p, FatTreeParams) and p.spine is not None and p.core is None
    assert (p.down, p.up, p.rails, p.su_nodes, p.leaves, p.leaves_final) == (32, 32, 8, 32, 32, 32)
    assert (p.spine.spines, p.spine.per_pair, p.spine.spine_links) == (16, 2, 64)


def test_single_leaf_fat_tree_has_no_spine_layer() -> None:
    f = fat_tree(hosts(8), radix=16, tiers=2, rail_optimized=False)
    p = _check_clos(f)
    assert p.single_switch and p.spine is None and p.core is None


@pytest.mark.parametrize(
    ("units", "per_unit", "radix"), [(2, 8, 16), (6, 10, 48), (40, 8, 16), (37, 8, 16), (41, 5, 16)], ids=str
)
def test_leaf_spine_facts(units: int, per_unit: int, radix: int) -> None:
    groups = [(f"u{i}", hosts(per_unit, prefix=f"u{i}-")) for i in range(units)]
    f = leaf_spine(groups, radix=radix)
    p = _check_clos(f)
    assert isinstance(p, LeafSpineParams)
    # every leaf belongs to the unit whose nodes it carries
    unit_of_host = {t[0].host: label for label, nodes in groups for t in nodes}
    carried: dict[str, set[str]] = defaultdict(set)
    for lk in f.links:
        if lk.layer == "node_leaf":
            carried[lk.b.device].add(unit_of_host[lk.a.device])
    assert {leaf: {unit} for leaf, unit in p.leaf_unit.items()} == dict(carried)


def test_leaf_spine_with_dedicated_uplinks() -> None:
    """48 x 1G down + 4 x 100G up leaves: uplinks numbered after the 48 node ports, at the uplink speed."""
    groups = [(f"u{i}", hosts(40, prefix=f"u{i}-")) for i in range(3)]
    f = leaf_spine(groups, radix=48, uplink_ports=4, uplink_speed_gbps=100.0, node_speed_gbps=1.0)
    p = _check_clos(f)
    assert (p.down, p.up, p.first_up, p.uplink_speed_gbps) == (48, 4, 49, 100.0)


@pytest.mark.parametrize("arrangement", ["absolute", "relative", "circulant"])
def test_dragonfly_facts(arrangement: str) -> None:
    """Kim et al.: a = 2p = 2h balanced, g = a*h + 1 groups give one global link per group pair."""
    p_, a, h = 2, 4, 2
    g = a * h + 1
    f = dragonfly(hosts(p_ * a * g), p=p_, a=a, h=h, groups=g, radix=p_ + a - 1 + h, arrangement=arrangement)
    p = f.params
    assert isinstance(p, DragonflyParams)
    assert (p.p, p.a, p.h, p.groups, p.arrangement) == (p_, a, h, g, arrangement)
    assert p.routers == _tiers(f)["router"] == a * g
    assert p.global_ports == a * h * g
    assert p.global_links == sum(1 for lk in f.links if lk.layer == "global")
    if arrangement != "circulant":  # absolute and relative reach every other group once
        assert p.global_links == g * (g - 1) // 2


@pytest.mark.parametrize(("dims", "attach"), [((4, 4), "direct"), ((2, 2, 2), "switch"), ((3, 5), "switch")])
def test_cube_facts(dims: tuple[int, ...], attach: str) -> None:
    """k-ary n-cube: prod(k) vertices of degree sum(2 if k > 2 else 1); prod(k) links along a dimension of
    size k > 2 (one ring per line), half that along a dimension of size 2 (one link per pair)."""
    vertices = math.prod(dims)
    degree = sum(2 if k > 2 else 1 for k in dims)
    n = vertices if attach == "direct" else vertices * 2
    ports = degree if attach == "direct" else 1
    f = cube(hosts(n, ports=ports), dims=list(dims), attach=attach, nodes_per_switch=2, radix=16)
    p = f.params
    assert isinstance(p, CubeParams)
    assert (p.dims, p.vertices, p.degree, p.attach) == (dims, vertices, degree, attach)
    ring_links = sum(vertices if k > 2 else vertices // 2 for k in dims)
    assert sum(1 for lk in f.links if lk.layer == "torus") == ring_links
