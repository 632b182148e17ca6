"""A dragonfly routes a job's rings, trees and spread traffic over its own cables (generator/perf/routes.py).

The model gave a dragonfly's rings the nodes' NIC bandwidth wherever the ranks sat. The builder cables a
node's NICs to one router and joins two routers of a group with one local link, and both routings the tool
generates take shortest paths only (eBGP with an ASN a router and multipath-relax; OpenSM's min-hop): a ring
in rank order sends a whole node's bytes from one router to the next over that one link. On the 1,024-node
example (eight 400G NICs a node, 400G local links) a packed all_reduce got 293 GB/s where one local link
allows 46. The oracles are the cabling's own: one local link between routers, and a two-group dragonfly whose
groups are joined by their own links alone, where the closed form of global_links.py is exact."""

from __future__ import annotations

from pathlib import Path

import pytest
from perf_blueprints import build, l40s_nodes

from generator.perf import routes
from generator.perf.global_links import global_links
from generator.perf.predict import sweep
from generator.perf.routes import RoutedFabric, routed_fabric
from generator.perf.system import ROUTED_LIMIT, routed_bound, system_for
from generator.pipeline import load_and_resolve
from generator.plan.build import build_plan

GIB = 1 << 30
RATE = 100.0  # Gb/s of every cable of the test dragonflies
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "roce-dragonfly.yaml"


def _dragonfly(tmp_path: Path, groups: int, h: int, ports: int):  # type: ignore[no-untyped-def]
    """One-switch-port-a-NIC 4 x L40S servers filling a dragonfly of ``groups`` groups of four routers with
    two terminal ports each (a node of two NICs has a router to itself) and ``h`` global links a router."""
    topology = {"kind": "dragonfly", "switch": "sn4600c", "p": 2, "a": 4, "h": h, "groups": groups}
    data = l40s_nodes(
        "dragonfly", groups * 8 // ports, ports, RATE, {**topology, "global_arrangement": "relative"}
    )
    return build(data, tmp_path, "dragonfly.yaml")


def test_a_ring_goes_from_router_to_router_over_their_one_local_link(tmp_path: Path) -> None:
    cluster, plan, _ = _dragonfly(tmp_path, 9, 2, ports=2)
    system = system_for(cluster, plan)
    shape = system.spread_shape
    assert shape is not None and shape.routes is not None and system.net is not None
    for nodes in (2, 4):  # inside group 1: each node's two NICs (200G) meet one 100G local link
        ring = routed_bound(shape, "ring", nodes)
        assert ring is not None and ring.name == ROUTED_LIMIT
        assert ring.gbytes == pytest.approx(RATE * shape.eff / 8)
        assert ring.gbytes == pytest.approx(system.net.gbytes / 2)
    (row,) = sweep(system, "all_gather", [GIB], 4)
    assert row.bottleneck == ROUTED_LIMIT


def test_groups_joined_by_their_own_links_alone_route_as_the_closed_form(tmp_path: Path) -> None:
    # two groups of four routers, router r of one cabled to router r of the other: every route between the
    # groups takes one of those four links, and the routers are alike, so spread traffic loads each evenly:
    # 8 x 8 pairs of 1/15 of a node's bytes over 4 links, what global_links.py's closed form charges
    _, plan, _ = _dragonfly(tmp_path, 2, 1, ports=1)
    fabric, links = routed_fabric(plan), global_links(plan)
    assert fabric is not None and links is not None
    load, crossing = fabric.load("spread", 16), links.crossing(16)
    assert load is not None and crossing is not None
    assert 1 / load.per_gbps == pytest.approx(crossing.gbps) == pytest.approx(4 * RATE * 15 / 64)


def test_shortest_routes_through_a_third_group_relieve_the_direct_link(tmp_path: Path) -> None:
    # nine groups, one global link between each two: router 1 of group 1 reaches group 2 over the direct link
    # in three hops (local, global, local), but over a third group in two where that group's router links to
    # the destination; the routers take the shorter routes, so two groups' spread traffic is not held to the
    # one link the closed form charges (it allows 2.04 times as much)
    _, plan, _ = _dragonfly(tmp_path, 9, 2, ports=1)
    fabric, links = routed_fabric(plan), global_links(plan)
    assert fabric is not None and links is not None
    load, crossing = fabric.load("spread", 16), links.crossing(16)
    assert load is not None and crossing is not None and crossing.links == 1
    assert 1 / load.per_gbps > 2 * crossing.gbps


def test_routing_from_routers_loads_the_cables_routing_from_nodes_did(tmp_path: Path) -> None:
    # a node cabled to one router sends and receives everything over its own cables: routing its bytes from
    # the router (far fewer passes) must load every cable as routing them from the node itself
    _, plan, _ = _dragonfly(tmp_path, 9, 2, ports=1)
    lifted = routed_fabric(plan)
    assert lifted is not None and any(v != a for v, a in enumerate(lifted.attach))
    per_node = RoutedFabric(lifted.adjacency, lifted.nodes)  # no attachment: every node routes itself
    for pattern in ("ring", "tree", "spread"):
        for nodes, flows, shuffled in ((5, None, False), (16, 1, False), (72, None, False), (40, 1, True)):
            a, b = (
                lifted.load(pattern, nodes, flows, shuffled),
                per_node.load(pattern, nodes, flows, shuffled),
            )
            assert a is not None and b is not None and a.hashed == b.hashed
            assert a.per_gbps == pytest.approx(b.per_gbps, rel=1e-12)


def test_the_example_s_rings_cross_routers_on_one_local_link() -> None:
    cluster = load_and_resolve(EXAMPLE)[1]
    system = system_for(cluster, build_plan(cluster))
    shape = system.spread_shape
    assert shape is not None and system.net is not None
    assert routed_bound(shape, "ring", 2) is shape.net  # two nodes of one router: nothing leaves it
    for nodes in (3, 64, 1024):  # 8 NICs of 400G a node, one 400G local link to the next router
        ring = routed_bound(shape, "ring", nodes)
        assert ring is not None and ring.gbytes == pytest.approx(400 * shape.eff / 8)
        assert ring.gbytes < system.net.gbytes / 7
    # packed or scattered, the whole pool's all_reduce is held by the cables, and scattered ranks (random
    # routers a hop or two apart, their routes piling up) get no more than ranks in rank order
    (packed,) = sweep(system, "all_reduce", [GIB])
    (spread,) = sweep(system, "all_reduce", [GIB], placement="scattered")
    assert packed.bottleneck == spread.bottleneck == ROUTED_LIMIT
    assert spread.busbw_gbytes <= packed.busbw_gbytes < system.net.gbytes / 5


def _example_fabric() -> RoutedFabric:
    """The example dragonfly's router graph, fresh (its routes cached on it alone)."""
    fabric = routed_fabric(build_plan(load_and_resolve(EXAMPLE)[1]))
    assert fabric is not None
    return fabric


def _counted_draws(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The node counts of the random orders drawn from here on (one entry a draw)."""
    drawn: list[int] = []
    sample = routes.random.Random.sample

    def counted(self: routes.random.Random, population, k):  # type: ignore[no-untyped-def]
        drawn.append(k)
        return sample(self, population, k)

    monkeypatch.setattr(routes.random.Random, "sample", counted)
    return drawn


def test_random_orders_get_the_draws_the_budget_leaves_room_for(monkeypatch: pytest.MonkeyPatch) -> None:
    fabric = _example_fabric()
    seeds = _counted_draws(monkeypatch)
    # one draw of a random ring over the 1,024 nodes looks at ~0.6 M cables: three fit the budget, not 16
    assert fabric.load("ring", 1024, shuffled=True) is not None
    assert 1 < len(seeds) < routes.RANDOM_DRAWS
    monkeypatch.setattr(routes, "MAX_ROUTED_VISITS", 100_000)  # not even one: the closed forms
    assert (
        RoutedFabric(fabric.adjacency, fabric.nodes, fabric.attach).load("ring", 1024, shuffled=True) is None
    )


def test_a_pattern_past_the_budget_gives_up_before_spending_it(monkeypatch: pytest.MonkeyPatch) -> None:
    fabric = _example_fabric()
    # the trees over the example's 1,024 nodes look at ~142 k cables: with 100 k left, the first sixteenth of
    # the destinations has spent more than its share, and routing stops there, most of the budget unspent
    budget = [100_000]
    with pytest.raises(routes._Unrouted):
        routes._route(fabric, routes._lifted(routes._demands("tree", 1024), fabric.attach), None, budget)
    assert budget[0] > 80_000
    # where rank order is past the budget, a random order is not drawn at all
    monkeypatch.setattr(routes, "MAX_ROUTED_VISITS", 50_000)
    drawn = _counted_draws(monkeypatch)
    assert fabric.load("ring", 1024) is None and fabric.load("ring", 1024, shuffled=True) is None
    assert drawn == []


def test_a_random_order_past_the_budget_is_no_faster_than_rank_order(monkeypatch: pytest.MonkeyPatch) -> None:
    # room for the rings in rank order (~59 k cables) but not for one random draw (~620 k): the uniform load
    # alone would let scattered ranks read 4.7 times faster than the routed draws do
    monkeypatch.setattr(routes, "MAX_ROUTED_VISITS", 200_000)
    cluster = load_and_resolve(EXAMPLE)[1]
    system = system_for(cluster, build_plan(cluster))
    shape = system.spread_shape
    assert shape is not None and shape.routes is not None
    assert shape.routes.load("ring", 1024, 1, shuffled=True) is None
    packed, scattered = routed_bound(shape, "ring", 1024), routed_bound(shape, "ring", 1024, shuffled=True)
    assert packed is not None and scattered is not None
    assert scattered.gbytes == packed.gbytes and "past the routing budget" in scattered.detail
    (row,) = sweep(system, "all_gather", [GIB], placement="scattered")
    assert row.bottleneck == ROUTED_LIMIT


def test_a_draw_past_the_budget_keeps_the_draws_made(monkeypatch: pytest.MonkeyPatch) -> None:
    fabric = _example_fabric()
    real, calls = routes._route, []

    def second_draw_over(*args):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) == 3:  # rank order first, then the first draw, then the second draw
            raise routes._Unrouted
        return real(*args)

    monkeypatch.setattr(routes, "_route", second_draw_over)
    load = fabric.load("ring", 1024, shuffled=True)
    assert load is not None and load.draws == 1
