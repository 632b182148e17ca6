"""A torus or hypercube routes a job's traffic over its own cables (generator/perf/routes.py).

The model charged a cube the fat-tree's closed form: every node's spread traffic across the bisection at the
whole fabric's share, whatever the job. Two neighbours of the example's 4 x 4 Ethernet torus, which share one
100G cable, got an alltoall of 1.5 GB/s against an all_gather of 24 GB/s through four NICs the ring cannot
use (found by a sweep of `estimate` inputs). The oracles here are closed forms worked by hand: uniform traffic
over a whole k-ary n-cube loads every cable of a dimension alike, so its load is the dimension's hop count
over its cables; a ring in torus order loads each cable once; hashed splits cost what ecmp.py says."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from perf_blueprints import build, l40s_nodes

from generator.perf import routes
from generator.perf.ecmp import ecmp_efficiency
from generator.perf.predict import RunSettings, sweep
from generator.perf.routes import Hop, RoutedFabric, routed_fabric
from generator.perf.system import ROUTED_LIMIT, System, system_for

GIB = 1 << 30
RATE = 100.0  # Gb/s of one cable of the test fabrics


def _direct_cube(topology: dict, nodes: int, ports: int) -> dict:
    """``nodes`` 4 x L40S servers cabled node to node as ``topology`` over 100G Ethernet."""
    return l40s_nodes("cube", nodes, ports, RATE, {**topology, "attach": "direct"})


def _torus(tmp_path: Path, dims: list[int]) -> tuple[RoutedFabric, System]:
    ports = sum(1 if k == 2 else 2 for k in dims)
    data = _direct_cube({"kind": "torus", "dimensions": dims}, math.prod(dims), ports)
    cluster, plan, _ = build(data, tmp_path, f"torus-{'x'.join(map(str, dims))}.yaml")
    fabric = routed_fabric(plan)
    assert fabric is not None
    return fabric, system_for(cluster, plan)


def _ring_hops(k: int) -> int:
    """Hops from one vertex of a k-ring to all the others, the shorter way round."""
    return sum(min(o, k - o) for o in range(k))


@pytest.mark.parametrize("dims", [[3, 3], [4, 4], [5, 3], [4, 4, 4], [6, 4]])
def test_uniform_traffic_over_a_whole_torus_loads_each_dimension_by_its_hops(
    tmp_path: Path, dims: list[int]
) -> None:
    fabric, _ = _torus(tmp_path, dims)
    n = math.prod(dims)
    # each node sends 1/(n-1) to every other: dimension d carries n · (n/k) · R(k) / (n-1) unit-hops over
    # its 2n directed cables (a + and a − cable a vertex; ties split evenly both ways round)
    expected = max(n * _ring_hops(k) / (2 * k * (n - 1)) for k in dims)
    load = fabric.load("spread", n)
    assert load is not None and not load.hashed
    assert load.per_gbps * RATE == pytest.approx(expected)


@pytest.mark.parametrize("dimension", [2, 3, 4, 5])
def test_uniform_traffic_over_a_whole_hypercube_loads_each_cable_by_half(
    tmp_path: Path, dimension: int
) -> None:
    n = 2**dimension
    data = _direct_cube({"kind": "hypercube", "dimension": dimension}, n, dimension)
    _, plan, _ = build(data, tmp_path, f"hypercube-{dimension}.yaml")
    fabric = routed_fabric(plan)
    assert fabric is not None
    # half the destinations differ in any one bit: n · n/2 unit-hops / (n-1) over n directed cables
    load = fabric.load("spread", n)
    assert load is not None and load.per_gbps * RATE == pytest.approx(n / (2 * (n - 1)))


def test_two_neighbours_share_one_cable(tmp_path: Path) -> None:
    fabric, system = _torus(tmp_path, [4, 4])
    for pattern in ("spread", "ring"):
        load = fabric.load(pattern, 2, flows_per_path=1)
        assert load is not None and load.per_gbps * RATE == pytest.approx(1.0) and not load.hashed
    # the estimate: an all_gather ring and an alltoall both move their bytes over that one cable
    cable = RATE / 8 * system.spread_shape.eff  # type: ignore[union-attr]
    gather = _row(system, "all_gather", 2)
    alltoall = _row(system, "alltoall", 2)
    assert gather.bottleneck == alltoall.bottleneck == ROUTED_LIMIT
    assert gather.busbw_gbytes == pytest.approx(cable, rel=0.01)
    # 4 ranks a node each send half their buffer to the other node: 2 buffers a node over the cable
    assert alltoall.algbw_gbytes == pytest.approx(cable / 2, rel=0.01)


def test_a_ring_in_torus_order_loads_each_cable_once(tmp_path: Path) -> None:
    fabric, _ = _torus(tmp_path, [8, 2])
    load = fabric.load("ring", 8)  # the first row: 0 → 1 → … → 7 → 0 round its own cables
    assert load is not None and load.per_gbps * RATE == pytest.approx(1.0)


@pytest.mark.parametrize("side", [8, 32])
def test_a_ring_over_a_whole_torus_in_row_order(tmp_path: Path, side: int) -> None:
    fabric, _ = _torus(tmp_path, [side, side])
    n = side * side
    # each row's cables carry the ring once; from the end of a row to the start of the next the ring goes two
    # hops, half each way: over the row's wrap cable first, or up and then over the next row's wrap cable. A
    # wrap cable so carries ½ + ½ evenly; hashed, the first hop's ½ is charged 1/E (E: ecmp.py, 2 next hops)
    even = fabric.load("ring", n)
    hashed = fabric.load("ring", n, flows_per_path=1)
    assert even is not None and even.per_gbps * RATE == pytest.approx(1.0)
    assert hashed is not None and hashed.per_gbps * RATE == pytest.approx(0.5 + 0.5 / ecmp_efficiency(2, 1))
    if side == 32:  # its ring is routed whole (each pass ends two hops out); its spread traffic is not
        assert 2 * n * n > routes.MAX_ROUTED_VISITS and fabric.load("spread", n) is None


def test_nccl_s_two_trees_as_its_source_draws_them() -> None:
    # NVIDIA/nccl src/graph/trees.cc draws the first tree of 14 ranks (0 → 8 → 4, 12; 4 → 2, 6; 12 → 10, 13;
    # 2 → 1, 3; 6 → 5, 7; 10 → 9, 11), the mirrored second tree of 12 (11 → 3 → 1, 7; 1 → 0, 2; 7 → 5, 9;
    # 5 → 4, 6; 9 → 8, 10) and the shifted one of 13 (1 → 9 → 5, 0; 5 → 3, 7; 0 → 11; 3 → 2, 4; 7 → 6, 8;
    # 11 → 10, 12)
    assert routes._btree_parents(14) == [-1, 2, 4, 2, 8, 6, 4, 6, 0, 10, 12, 10, 8, 12]
    assert routes._second_tree_parents(12) == [1, 3, 1, 11, 5, 7, 5, 3, 9, 7, 9, -1]
    assert routes._second_tree_parents(13) == [9, -1, 3, 5, 3, 9, 7, 5, 7, 1, 11, 0, 11]


def test_trees_over_a_row_of_four(tmp_path: Path) -> None:
    fabric, _ = _torus(tmp_path, [4, 4])
    # trees of 4: 0-2, 2-1, 2-3 and (mirrored) 0-1, 1-3, 1-2, one share each way; nodes 1 and 2 send 4 shares,
    # the busiest. Cable 1 → 2 carries 1 → 2 twice, ½ of 0 → 2 (via 1) and ½ of 1 → 3 (via 2): 3 shares
    load = fabric.load("tree", 4)
    assert load is not None and load.per_gbps * RATE == pytest.approx(3 / 4)
    two = fabric.load("tree", 2)
    assert two is not None and two.per_gbps * RATE == pytest.approx(1.0)


def test_a_hashed_split_charges_the_busiest_next_hop(tmp_path: Path) -> None:
    fabric, _ = _torus(tmp_path, [4, 4])
    # three nodes of a row: 0 sends ½ to 1 directly, and ½ to 2 split both ways round (via 1 and via 3)
    even = fabric.load("spread", 3)
    hashed = fabric.load("spread", 3, flows_per_path=1)
    assert even is not None and hashed is not None
    assert even.per_gbps * RATE == pytest.approx(0.5 + 0.25)
    assert hashed.per_gbps * RATE == pytest.approx(0.5 + 0.25 / ecmp_efficiency(2, 1))
    assert hashed.hashed and not even.hashed


def test_the_pool_s_nodes_come_first(tmp_path: Path) -> None:
    _, plan, _ = build(_direct_cube({"kind": "torus", "dimensions": [4, 4]}, 16, 4), tmp_path)
    names = sorted(d.name for d in plan.devices if d.kind == "node")
    last = frozenset(names[-2:])
    fabric = routed_fabric(plan, first=last)
    assert fabric is not None and fabric.nodes == 16
    plain = routed_fabric(plan)
    assert plain is not None and fabric.adjacency != plain.adjacency


def test_a_job_too_large_to_route_keeps_the_closed_forms(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fabric, system = _torus(tmp_path, [4, 4])
    routed = _row(system, "alltoall", 16)
    monkeypatch.setattr(routes, "MAX_ROUTED_VISITS", 10)
    _, system = _torus(tmp_path, [4, 4])  # a fresh plan: loads are cached per fabric
    closed = _row(system, "alltoall", 16)
    assert routed.bottleneck == ROUTED_LIMIT and closed.bottleneck == "fabric bisection"
    assert sum(len(hops) for hops in fabric.adjacency) == 64


def test_a_direct_torus_hashes_over_no_more_next_hops_than_a_node_has_ports(tmp_path: Path) -> None:
    # an 8 x 8 torus has C(8, 4) shortest paths between opposite nodes on each of 4 sides; a node chooses
    # among its 4 ports. E[max] over the path count took 89 s to validate a 32 x 32 torus (benchmarks/hostile.py)
    data = _direct_cube({"kind": "torus", "dimensions": [8, 8]}, 64, 4)
    cluster, plan, _ = build(data, tmp_path, "torus-8x8.yaml")
    assert plan.metrics["compute"].ecmp_paths > 4
    shape = system_for(cluster, plan).spread_shape
    assert shape is not None and shape.ecmp == pytest.approx(ecmp_efficiency(4, 1))


def test_a_small_graph_routes_by_hand() -> None:
    # a square 0-1-2-3-0 with a double cable 0-1: 0 → 2 splits over 1 and 3 per next-hop router, then the
    # double cable carries its share over twice the rate
    adjacency = (
        (Hop(1, 2, 200.0), Hop(3, 1, 100.0)),
        (Hop(0, 2, 200.0), Hop(2, 1, 100.0)),
        (Hop(1, 1, 100.0), Hop(3, 1, 100.0)),
        (Hop(0, 1, 100.0), Hop(2, 1, 100.0)),
    )
    fabric = RoutedFabric(adjacency, 4)
    load = routes._route(fabric, routes.Lifted({2: {0: 1.0}}, {}), None, [routes.MAX_ROUTED_VISITS])
    # by cables: 2 of the 3 cables to next hops go to 1 (⅔), 1 to 3 (⅓); then 1 → 2 and 3 → 2 carry them
    assert load.per_gbps == pytest.approx((2 / 3) / 100.0)
    assert fabric.load("spread", 1) is None


def test_rings_in_random_order_over_a_complete_graph_or_a_star_load_each_cable_once() -> None:
    # every node cabled to every other (K5), or every node to one switch (a star): whatever nodes a draw takes
    # and in whatever order, each ring hop is one cable (K5) or one cable up and one down (the star), so every
    # draw's busiest cable carries exactly one unit
    k5 = tuple(tuple(Hop(u, 1, RATE) for u in range(5) if u != v) for v in range(5))
    star = (*((Hop(4, 1, RATE),),) * 4, tuple(Hop(v, 1, RATE) for v in range(4)))
    for adjacency, nodes, n in ((k5, 5, 5), (k5, 5, 3), (star, 4, 4)):
        load = RoutedFabric(adjacency, nodes).load("ring", n, shuffled=True)
        assert load is not None and load.per_gbps * RATE == pytest.approx(1.0)


def test_a_ring_in_random_order_piles_its_hops_onto_some_cables(tmp_path: Path) -> None:
    fabric, _ = _torus(tmp_path, [8, 8])
    in_order = fabric.load("ring", 64)  # row order: 1 a cable (test above)
    uniform = fabric.load("spread", 64)
    shuffled = fabric.load("ring", 64, shuffled=True)
    assert in_order is not None and uniform is not None and shuffled is not None
    # a random peer is 4 · 64/63 hops away on average: a random ring's 64 hops put 1.016 units on the mean
    # one of the 256 directed cables, the uniform load, more than the row order's 1, and each draw's busiest
    # cable carries at least its mean; the busiest carries far more (hops pile up where the draw sends them)
    assert uniform.per_gbps * RATE == pytest.approx(4 * 64 / 63 * 64 / 256)
    assert shuffled.per_gbps > 2 * uniform.per_gbps > 2 * in_order.per_gbps
    # the draws are seeded: another build of the same fabric gives the same figure
    (tmp_path / "again").mkdir()
    again, _ = _torus(tmp_path / "again", [8, 8])
    assert again.load("ring", 64, shuffled=True) == shuffled


def test_random_orders_past_the_budget_are_left_to_the_closed_forms(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a random ring's next node is ~16 hops away on a 32 x 32 torus: one draw's 1,024 passes over about half
    # the fabric look at ~2 M cables, where the ring in row order looks at a few thousand and routes whole;
    # with half that budget not one draw fits, and the closed forms take the random order
    monkeypatch.setattr(routes, "MAX_ROUTED_VISITS", 1_000_000)
    fabric, _ = _torus(tmp_path, [32, 32])
    assert fabric.load("ring", 1024) is not None
    assert fabric.load("ring", 1024, shuffled=True) is None


@pytest.mark.parametrize("example", ["ethernet-torus.yaml", "hypercube-research.yaml"])
def test_ranks_spread_over_a_cube_run_no_faster_than_ranks_in_topology_order(example: str) -> None:
    from generator.pipeline import load_and_resolve
    from generator.plan.build import build_plan

    examples = Path(__file__).resolve().parents[2] / "examples"
    cluster = load_and_resolve(examples / example)[1]
    system = system_for(cluster, build_plan(cluster))
    for collective in ("all_reduce", "all_gather"):
        (packed,) = sweep(system, collective, [GIB])
        (spread,) = sweep(system, collective, [GIB], placement="scattered")
        # the uniform load alone had spread ranks ahead (all_gather on the torus: 16.1 against 9.3 GB/s)
        assert spread.busbw_gbytes <= packed.busbw_gbytes
        assert spread.bottleneck == ROUTED_LIMIT


def _row(system: System, collective: str, nodes: int):  # type: ignore[no-untyped-def]
    (row,) = sweep(system, collective, [GIB], nodes, settings=RunSettings())
    return row


def test_prf002_reports_a_cube_whose_cables_cut_rings_in_topology_order() -> None:
    from generator.pipeline import check
    from generator.rules.prf.prf002_oversubscribed_allreduce import ROUTED_FIX

    examples = Path(__file__).resolve().parents[2] / "examples"
    # packed rings and trees reach their next node over one 200G cable of a node's 2 x 200G: about half the
    # NICs whether the ranks are packed or spread, so placement does not recover it
    (finding,) = [f for f in check(examples / "hypercube-research.yaml").findings if f.rule == "PRF002"]
    assert finding.hint == ROUTED_FIX and "limited by busiest cable" in finding.message
