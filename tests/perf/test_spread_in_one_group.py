"""A packed job that stays in one leaf group sends its spread traffic (alltoall) over no uplink, as its rings
do not. The model charged such a job the whole fabric's oversubscription (two H100 nodes under one leaf of a
4:1 fat-tree: all_gather 322 GB/s, alltoall 25 GB/s, "uplinks 3.92:1"; found by a sweep of `estimate`
inputs). A packed job across several groups meets the uplinks for the share of its own peers outside each
node's group, not the whole fabric's. The oracle is the bytes: with one rank a node, an alltoall and an
all_gather of two ranks each send half the buffer to the other rank, so they must take the same time."""

from __future__ import annotations

from pathlib import Path

import pytest
from perf_blueprints import build, server_nodes

from generator.perf.predict import RunSettings, sweep
from generator.perf.system import System, spread_bound, system_for

GIB = 1 << 30


def _h100_fat_tree(tmp_path: Path, oversubscription: str) -> System:
    """64 DGX H100 (8 × 400G NDR a node) on a two-tier NDR fat-tree that is not rail-optimised."""
    fabric = {
        "technology": "infiniband-ndr",
        "topology": {
            "kind": "fat-tree",
            "switch": "qm9700",
            "tiers": 2,
            "rail_optimized": False,
            "oversubscription": oversubscription,
        },
        "subnet_manager": {"kind": "opensm"},
    }
    data = server_nodes("dgx-h100", 64, fabric)
    data["site"]["racks_per_row"] = 32
    cluster, plan, _ = build(data, tmp_path, f"ft-{oversubscription[0]}.yaml")
    return system_for(cluster, plan)


def _busbw(
    system: System, collective: str, nodes: int, placement: str = "packed", rpn: int | None = None
) -> float:
    settings = RunSettings(ranks_per_node=rpn)
    (row,) = sweep(system, collective, [8 * GIB], nodes, placement=placement, settings=settings)
    return row.busbw_gbytes


def test_two_packed_nodes_under_one_leaf_meet_no_oversubscription(tmp_path: Path) -> None:
    thin = _h100_fat_tree(tmp_path, "4:1")
    full = _h100_fat_tree(tmp_path, "1:1")
    assert thin.fabric is not None and thin.fabric.oversubscription > 3
    assert thin.spread_shape is not None and 2 <= thin.spread_shape.smallest_domain_nodes < 64
    # two packed nodes: the same alltoall on either fabric, as no byte climbs an uplink
    assert _busbw(thin, "alltoall", 2) == pytest.approx(_busbw(full, "alltoall", 2))
    # ranks scattered over the fabric meet its uplinks even on two nodes
    assert _busbw(thin, "alltoall", 2, "scattered") < 0.5 * _busbw(full, "alltoall", 2, "scattered")


def test_a_packed_job_across_groups_meets_the_uplinks_for_its_own_peers(tmp_path: Path) -> None:
    thin = _h100_fat_tree(tmp_path, "4:1")
    full = _h100_fat_tree(tmp_path, "1:1")
    shape, net = thin.spread_shape, thin.net
    assert shape is not None and net is not None
    over, d = shape.oversubscription, shape.domain_nodes
    # worked by hand: a node of a packed n-node job sends (n − d)/(n − 1) of its bytes to peers outside its
    # leaf group, over uplinks of 1/over of its line rate: net × (n − 1) / (over × (n − d)) while below net
    for n in (16, 32, 64):
        assert spread_bound(shape, n).gbytes == pytest.approx(
            net.gbytes * (n - 1) / (over * (n - d)), rel=1e-9
        )
    assert spread_bound(shape, 64) == thin.fabric.limit  # the whole fabric's bound is the 64-node job's
    assert _busbw(thin, "alltoall", 32) < 0.5 * _busbw(full, "alltoall", 32)
    # a lone node past the first group has its leaf's uplinks to itself; the others send it 1/(n − 1) each
    lone = shape.smallest_domain_nodes + 1
    assert spread_bound(shape, lone) == net


def test_two_ranks_move_the_same_bytes_in_alltoall_and_all_gather(tmp_path: Path) -> None:
    thin = _h100_fat_tree(tmp_path, "4:1")
    alltoall = _busbw(thin, "alltoall", 2, rpn=1)
    all_gather = _busbw(thin, "all_gather", 2, rpn=1)
    assert alltoall == pytest.approx(all_gather, rel=0.01)
