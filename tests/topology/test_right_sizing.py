"""Right-sizing: uplinks follow the nodes present (and declared growth), the plan reports the real ratio.

Expectations are counted by hand: a non-blocking leaf carries as many uplinks as it has nodes, so the
leaf-spine cable count equals the node-leaf count whatever the switch radix.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from generator.topology.base import Terminal
from generator.topology.fat_tree import fat_tree
from generator.topology.metrics import compute_metrics

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def hosts(n: int, ports: int = 1) -> list[list[Terminal]]:
    return [[Terminal(f"n{i:05d}", f"mlx5_{r}/1", 1, r) for r in range(ports)] for i in range(n)]


@pytest.mark.parametrize("nodes", [2, 16, 40, 64])
def test_rail_optimised_uplinks_follow_the_nodes_present(nodes: int) -> None:
    # SN5600 at 400G: 128 logical ports, no SU size: a leaf could take 64 nodes
    f = fat_tree(hosts(nodes, ports=8), radix=128, tiers=2, rail_optimized=True)
    layers = Counter(link.layer for link in f.links)
    assert layers["node_leaf"] == nodes * 8
    assert layers["leaf_spine"] == nodes * 8  # 1:1: one uplink per node port, none spare
    m = compute_metrics("compute", f, 400)
    assert m.oversubscription["leaf"] == 1.0


def test_declared_growth_buys_uplinks_for_the_grown_su() -> None:
    f = fat_tree(hosts(16, ports=8), radix=128, rail_optimized=True, growth_nodes=32)
    assert Counter(link.layer for link in f.links)["leaf_spine"] == 8 * 32
    # the ports exist for nodes that will come: today's leaves run 16:32
    assert compute_metrics("compute", f, 400).oversubscription["leaf"] == 0.5


def test_two_to_one_halves_the_uplinks() -> None:
    f = fat_tree(hosts(16, ports=8), radix=128, rail_optimized=True, ratio=(2, 1))
    assert Counter(link.layer for link in f.links)["leaf_spine"] == 8 * 8
    assert compute_metrics("compute", f, 400).oversubscription["leaf"] == 2.0


def test_reported_ratio_is_measured_not_requested() -> None:
    # a full SuperPOD SU is still 1:1 (NVIDIA RA: 32 down, 32 up per leaf)
    f = fat_tree(hosts(128, ports=8), radix=64, su_size=32)
    assert compute_metrics("compute", f, 400).oversubscription == {"leaf": 1.0}


def test_plan_of_16_node_roce_rail_design() -> None:
    from generator.pipeline import load_and_resolve
    from generator.plan.build import build_plan

    plan = build_plan(load_and_resolve(FIXTURES / "roce16-rail.yaml")[1])
    layers = Counter(link.layer for link in plan.links_of("compute"))
    assert layers["leaf_spine"] <= layers["node_leaf"] == 16 * 8
    assert plan.metrics["compute"].oversubscription["leaf"] == 1.0


def test_declared_partial_su_is_built_whole_like_the_nvidia_ra() -> None:
    # NVIDIA DGX SuperPOD H100 RA, Network Fabrics, Table 4 row 1: 31 nodes (one SU, a UFM port on the
    # 32nd), 8 leaves, 4 spines, 256 spine-leaf cables; "the fabric should be designed to support the full
    # SU, including leaf switches and leaf-spine cables"
    f = fat_tree(hosts(31, ports=8), radix=64, rail_optimized=True, su_size=32)
    assert Counter(s.tier for s in f.switches) == {"leaf": 8, "spine": 4}
    assert Counter(link.layer for link in f.links)["leaf_spine"] == 256


def test_awkward_uplink_count_rounds_up_to_the_fewest_spines() -> None:
    # 31 nodes, no SU declared, 128-port leaves: 31 uplinks per leaf would need 31 spines (31 is prime);
    # one more uplink per leaf reaches the 2 spines the 8 x 31 uplinks need
    f = fat_tree(hosts(31, ports=8), radix=128, rail_optimized=True)
    assert Counter(s.tier for s in f.switches)["spine"] == 2
    assert Counter(link.layer for link in f.links)["leaf_spine"] == 8 * 32
