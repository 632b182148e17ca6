"""NCCL's PAT meets a routed fabric's cables as its rings and trees do (generator/perf/routes.py "pat").

PAT runs all_gather / reduce_scatter at one rank per node over the tree graph's channels, and the model gave it
that graph's bandwidth wherever the nodes sat. Its peers are fixed by NCCL: rank r exchanges with r ± 2^d
(NVIDIA/nccl src/transport/generic.cc, ncclTransportPatConnect), and the PAT paper (arXiv 2506.20252) takes a
Bruck all-gather's dimensions farthest first, so 2^d ranks away a rank sends 2^(K − 1 − d) of its n − 1 blocks.
The oracle is a ring of eight nodes worked by hand."""

from __future__ import annotations

from pathlib import Path

import pytest
from perf_blueprints import build, l40s_nodes

from generator.perf import routes
from generator.perf.predict import RunSettings, sweep
from generator.perf.routes import routed_fabric
from generator.perf.system import ROUTED_LIMIT, routed_bound, system_for

GIB = 1 << 30
RATE = 100.0  # Gb/s of every cable of the test ring


def test_pat_s_peers_and_shares_follow_nccl_and_the_paper() -> None:
    # eight ranks: 4, 2 and 1 of the 7 blocks to the ranks 1, 2 and 4 on; each node sends 1 in all
    demands = routes._demands("pat", 8)
    assert demands[3] == pytest.approx({2: 4 / 7, 1: 2 / 7, 7: 1 / 7})
    sent: dict[int, float] = {}
    for sources in demands.values():
        for src, units in sources.items():
            sent[src] = sent.get(src, 0.0) + units
    assert sent == pytest.approx(dict.fromkeys(range(8), 1.0))
    # six ranks (not a power of two): the peers 1, 2 and 4 on, in the shares 4 : 2 : 1
    assert routes._demands("pat", 6)[0] == pytest.approx({5: 4 / 7, 4: 2 / 7, 2: 1 / 7})


def test_pat_over_a_ring_of_eight_nodes_loads_each_cable_ten_sevenths(tmp_path: Path) -> None:
    # a 1-D torus of 8 nodes, one 100G cable each way between neighbours: 4/7 of a node's bytes go one hop
    # on, 2/7 two hops, 1/7 four hops (half each way round). A clockwise cable carries 8 × 4/7 × 1 +
    # 8 × 2/7 × 2 + 8 × 1/14 × 4 over its 8 cables: 10/7 of a node's bytes; the ring in order carries 1
    data = l40s_nodes("pat", 8, 2, RATE, {"kind": "torus", "dimensions": [8], "attach": "direct"})
    cluster, plan, _ = build(data, tmp_path, "ring8.yaml")
    fabric = routed_fabric(plan)
    assert fabric is not None
    pat, ring = fabric.load("pat", 8), fabric.load("ring", 8)
    assert pat is not None and ring is not None
    assert pat.per_gbps * RATE == pytest.approx(10 / 7) and ring.per_gbps * RATE == pytest.approx(1.0)
    # the estimate: one rank a node runs PAT where NCCL can, now held by the busiest cable
    system = system_for(cluster, plan, nccl_version="2.25.1")
    shape = system.spread_shape
    assert shape is not None and system.pat
    bound = routed_bound(shape, "pat", 8)
    assert bound is not None and bound.name == ROUTED_LIMIT
    (row,) = sweep(system, "all_gather", [GIB], settings=RunSettings(algorithms=("pat",), ranks_per_node=1))
    assert row.algorithm == "pat" and "busiest cable" in row.bottleneck
