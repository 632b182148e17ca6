"""One leaf split (issue 29): the rules' port budget equals the ports the fat-tree builder cables.

The oracle is arithmetic on the decimals the user wrote: a 64-port leaf at 1.5:1.7 has
floor(64·1.5/3.2) = 30 node ports, which need ceil(30·1.7/1.5) = 34 uplinks; at 2:1, 42 node ports need
21 uplinks. Binary floats used to give 29 in the builder and 30 in the rules (96/3.2 vs 96//3.2), and the
rules counted k − down = 22 uplinks where the builder right-sizes to 21.
"""

from __future__ import annotations

from collections import Counter

import pytest

from blueprints.models import parse_ratio
from generator.rules.sizing import leaf_split
from generator.topology.base import Terminal
from generator.topology.fat_tree import fat_tree

HAND = [
    (64, "1.5:1.7", 30, 34),
    (64, "2:1", 42, 21),
    (64, "1:1", 32, 32),
    (40, "1.2:1", 21, 18),  # 40·1.2/2.2 = 21.8; ceil(21·1/1.2) = 18
    (36, "3:1", 27, 9),
    (128, "1.1:1", 67, 61),  # 128·1.1/2.1 = 67.04; ceil(67/1.1) = 61
]


@pytest.mark.parametrize(("k", "ratio", "down", "up"), HAND)
def test_rules_split_equals_hand_arithmetic(k: int, ratio: str, down: int, up: int) -> None:
    assert leaf_split(k, ratio) == (down, up)


@pytest.mark.parametrize(("k", "ratio", "down", "up"), HAND)
def test_builder_cables_the_same_split(k: int, ratio: str, down: int, up: int) -> None:
    """Enough nodes to fill two leaves: the first leaf has `down` node cables and `up` uplinks."""
    nodes = [[Terminal(f"n{i:05d}", "mlx5_0/1", 1, 0)] for i in range(2 * down)]
    built = fat_tree(nodes, radix=k, tiers=2, ratio=parse_ratio(ratio), rail_optimized=False)
    leaf = built.switches[0].name
    per_end: Counter[str] = Counter()
    for link in built.links:
        for end in (link.a, link.b):
            if end.device == leaf:
                per_end["node" if (link.a.device.startswith("n") or link.b.device.startswith("n")) else "up"] += 1
    assert (per_end["node"], per_end["up"]) == (down, up)
