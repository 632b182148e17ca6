"""A dragonfly's spread traffic meets the global links between its groups as minimal routing loads them
(generator/perf/global_links.py).

The model charged a dragonfly job that left one group the whole fabric's bisection share: a packed job in two
groups of the 1,024-node example got the alltoall of a job over all sixteen, although the eBGP routing the
tool generates (multipath-relax over the shortest AS path) and OpenSM's min-hop both route minimally, over
the few links joining the two groups. The oracles are the topology's own: a dragonfly of a·h + 1 groups joins
each pair of groups with exactly one global link (Kim et al., ISCA 2008), and m_i·m_j/(n − 1) of a node's
bytes cross between two groups of a job's spread traffic."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from perf_blueprints import build, l40s_nodes

from generator.perf import routes
from generator.perf.global_links import GlobalLinks, global_links
from generator.perf.predict import sweep
from generator.perf.system import GLOBAL_LINKS_LIMIT, ROUTED_LIMIT, spread_bound, system_for
from generator.pipeline import load_and_resolve
from generator.plan.build import build_plan

GIB = 1 << 30
RATE = 100.0  # Gb/s of every cable of the test dragonfly
P, A, H = 2, 4, 2  # terminals and routers a group, global links a router: balanced (a = 2p = 2h)
GROUPS = A * H + 1  # the largest dragonfly of these routers: one global link between every two groups
PER_GROUP = A * P  # one-NIC nodes a group


def _dragonfly(tmp_path: Path):  # type: ignore[no-untyped-def]
    """72 one-NIC 4 x L40S servers on a 9-group dragonfly of 100G Ethernet routers."""
    topology = {"kind": "dragonfly", "switch": "sn4600c", "p": P, "a": A, "h": H, "groups": GROUPS}
    data = l40s_nodes(
        "dragonfly", GROUPS * PER_GROUP, 1, RATE, {**topology, "global_arrangement": "relative"}
    )
    return build(data, tmp_path, "dragonfly.yaml")


def test_a_largest_dragonfly_joins_every_two_groups_with_one_link(tmp_path: Path) -> None:
    _, plan, _ = _dragonfly(tmp_path)
    links = global_links(plan)
    assert links is not None
    assert set(links.links.values()) == {(1, RATE)} and len(links.links) == math.comb(GROUPS, 2)
    # a packed job takes the nodes group by group
    assert links.group_of[: 2 * PER_GROUP] == (1,) * PER_GROUP + (2,) * PER_GROUP


@pytest.mark.parametrize("groups", [2, 3, GROUPS])
def test_spread_traffic_between_two_groups_shares_their_one_link(tmp_path: Path, groups: int) -> None:
    _, plan, _ = _dragonfly(tmp_path)
    links = global_links(plan)
    assert links is not None
    n = groups * PER_GROUP
    crossing = links.crossing(n)
    # each of the 8 nodes of one group sends 1/(n − 1) of its bytes to each of the 8 of another: 64/(n − 1)
    # of a node's bytes on the one link between them
    assert crossing is not None and crossing.gbps == pytest.approx(RATE * (n - 1) / PER_GROUP**2)
    assert links.crossing(PER_GROUP) is None  # one group: nothing crosses


def test_the_estimate_meets_the_global_links_only_where_they_bind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the closed form holds jobs too large to route over the cables (test_dragonfly_routes.py): none here
    monkeypatch.setattr(routes, "MAX_ROUTED_VISITS", 0)
    cluster, plan, _ = _dragonfly(tmp_path)
    system = system_for(cluster, plan)
    shape = system.spread_shape
    assert shape is not None and shape.ecmp == 1.0  # one path between two groups: nothing to hash
    two = spread_bound(shape, 2 * PER_GROUP)
    assert two.name == GLOBAL_LINKS_LIMIT
    assert two.gbytes == pytest.approx(RATE * (2 * PER_GROUP - 1) / PER_GROUP**2 * shape.eff / 8)
    (alltoall,) = sweep(system, "alltoall", [GIB], 2 * PER_GROUP)
    assert alltoall.bottleneck == GLOBAL_LINKS_LIMIT
    # the whole balanced dragonfly: 71/64 of a link for each node, more than its one NIC; one group: none
    for nodes in (PER_GROUP, GROUPS * PER_GROUP):
        (row,) = sweep(system, "alltoall", [GIB], nodes)
        assert row.bottleneck != GLOBAL_LINKS_LIMIT


def test_two_groups_without_a_direct_link_are_left_to_the_closed_form() -> None:
    # minimal routes between groups 0 and 2 would cross group 1: not modelled here
    links = GlobalLinks((0, 0, 1, 1, 2, 2), {(0, 1): (1, RATE), (1, 2): (1, RATE)})
    assert links.crossing(6) is None
    crossing = links.crossing(4)
    assert crossing is not None and crossing.gbps == pytest.approx(RATE * 3 / 4)


def test_the_example_dragonfly_crushes_a_job_in_two_groups() -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "roce-dragonfly.yaml"
    cluster = load_and_resolve(example)[1]
    system = system_for(cluster, build_plan(cluster))
    rows = {n: sweep(system, "alltoall", [GIB], n)[0] for n in (64, 128, 1024)}
    # one group: its NICs; two groups: 34 links of 400G for 64 x 64 node pairs; all sixteen: each pair's
    # 34 links for 64 x 64 of 1,023 peers, sixteen times the two groups' share. Two groups are routed over
    # the cables (each router of the example links to every other group: no route through a third group is
    # as short), all sixteen are past routing and meet the closed form
    assert rows[128].bottleneck == ROUTED_LIMIT
    shape = system.spread_shape
    assert shape is not None and shape.global_links is not None and shape.routes is not None
    # split evenly (no hashing) the routes load the 34 links within 1 % of the closed form's share
    crossing, even = shape.global_links.crossing(128), shape.routes.load("spread", 128)
    assert crossing is not None and even is not None
    assert 1 / even.per_gbps == pytest.approx(crossing.gbps, rel=0.01)
    assert rows[128].busbw_gbytes < rows[1024].busbw_gbytes < rows[64].busbw_gbytes
