"""The generated frr.conf files bring up a real BGP unnumbered underlay (Debian's FRR, one netns per switch).

For each fabric, declared ``switch_os: frr`` (a variant of the fixture), the switches output is read from
disk (one ``frr.conf`` per switch, nothing else), every switch gets a network namespace running zebra +
bgpd from its own ``frr.conf``, every switch-to-switch cable of the plan becomes a veth pair with the
configured interface names. Expectations are computed independently from the
plan's cable graph (breadth-first distances): a switch reaches a destination over every cable whose far
end is one hop closer; for the rail-optimised fat-tree that is the closed form "one path per spine" (the
fixture has one cable per leaf-spine pair). Then one spine (dragonfly: one router) is stopped and every
remaining switch must still reach every other remaining one, with the paths through it gone.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Iterator
from pathlib import Path

import pytest
from frr_harness import FrrFabric, missing_tools
from ib_fixtures import plan_of
from switch_os import with_switch_os

from generator.emit import switches as switches_emit
from generator.emit.switches import underlay
from generator.plan.model import Plan

pytestmark = [pytest.mark.realtools]

FIXTURES = Path(__file__).resolve().parent / "fixtures"
FAT_TREE = str(FIXTURES / "roce-ft2-rail.yaml")
DRAGONFLY = str(FIXTURES / "roce-dragonfly-small.yaml")
CONVERGE_S = 90.0


@pytest.fixture
def frr_tools() -> None:
    missing = missing_tools()
    if missing:
        msg = f"FRR test needs: {', '.join(missing)} (apt-get install frr; run as root)"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)


@pytest.fixture
def fabric_factory(tmp_path: Path) -> Iterator[list[FrrFabric]]:
    made: list[FrrFabric] = []
    try:
        yield made
    finally:
        for fab in made:
            fab.close()


def _cable_graph(plan: Plan, fabric: str) -> dict[str, list[str]]:
    """Switch → far ends of its switch-to-switch cables (one entry per cable)."""
    devices = plan.device_by_name
    adj: dict[str, list[str]] = {d.name: [] for d in plan.switches(fabric)}
    for link in plan.links_of(fabric):
        a, b = link.a.device, link.b.device
        if devices[a].kind == "switch" and devices[b].kind == "switch":
            adj[a].append(b)
            adj[b].append(a)
    return adj


def _distances(adj: dict[str, list[str]], dst: str, down: set[str]) -> dict[str, int]:
    dist = {dst: 0}
    queue = deque([dst])
    while queue:
        u = queue.popleft()
        for v in adj[u]:
            if v not in dist and v not in down:
                dist[v] = dist[u] + 1
                queue.append(v)
    return dist


def expected_paths(plan: Plan, fabric: str, sources: list[str], down: set[str]) -> dict[str, dict[str, int]]:
    """src → {dst loopback owner → number of equal-cost next hops (cables)}."""
    adj = _cable_graph(plan, fabric)
    alive = [s for s in adj if s not in down]
    out: dict[str, dict[str, int]] = {s: {} for s in sources if s not in down}
    for dst in alive:
        dist = _distances(adj, dst, down)
        for src in out:
            if src == dst or src not in dist:
                continue
            out[src][dst] = sum(1 for n in adj[src] if n not in down and dist.get(n) == dist[src] - 1)
    return out


def _start(plan: Plan, fabric: str, build: Path, made: list[FrrFabric]) -> FrrFabric:
    switches_emit.emit(plan.cluster, plan, build)
    fab = FrrFabric()
    made.append(fab)
    sws = underlay(plan, fabric)
    for sw in sws:
        assert [p.name for p in (build / fabric / sw.name).iterdir()] == ["frr.conf"]  # no startup.yaml
        fab.add_switch(sw.name, (build / fabric / sw.name / "frr.conf").read_text())
    done: set[str] = set()
    for sw in sws:
        for port in sw.bgp_ports:
            if port.cable not in done:
                done.add(port.cable)
                fab.cable(sw.name, port.ifname, port.peer, port.peer_ifname)
    for s in fab.switches.values():
        fab.start(s)
    return fab


def _observed(fab: FrrFabric, plan: Plan, fabric: str, src: str) -> dict[str, int]:
    """Destination switch → active BGP next hops in src's RIB."""
    owner = {f"{sw.loopback}/32": sw.name for sw in underlay(plan, fabric)}
    got: dict[str, int] = {}
    for prefix, entries in fab.switches[src].routes().items():
        for e in entries:
            if e.get("protocol") == "bgp" and e.get("selected") and prefix in owner:
                got[owner[prefix]] = sum(1 for nh in e.get("nexthops", []) if nh.get("active"))
    return got


def _converge(fab: FrrFabric, plan: Plan, fabric: str, want: dict[str, dict[str, int]]) -> None:
    deadline = time.monotonic() + CONVERGE_S
    last: dict[str, dict[str, int]] = {}
    while time.monotonic() < deadline:
        last = {src: _observed(fab, plan, fabric, src) for src in want}
        if last == want:
            return
        time.sleep(1.0)
    bad = {s: (want[s], last.get(s)) for s in want if last.get(s) != want[s]}
    first = next(iter(bad))
    raise AssertionError(
        f"not converged after {CONVERGE_S:.0f} s on {len(bad)} switches; e.g. {first}: "
        f"want {bad[first][0]}, got {bad[first][1]}\n{fab.switches[first].vtysh('show bgp summary')}"
    )


def test_fat_tree_leaves_learn_each_other_over_every_spine(
    frr_tools: None, fabric_factory: list[FrrFabric], tmp_path: Path
) -> None:
    plan = plan_of(str(with_switch_os(FAT_TREE, tmp_path, compute="frr")))
    leaves = sorted(d.name for d in plan.switches("compute") if d.role == "leaf")
    spines = sorted(d.name for d in plan.switches("compute") if d.role == "spine")
    assert len(leaves) == 4 and len(spines) == 4
    fab = _start(plan, "compute", tmp_path / "build", fabric_factory)
    want = expected_paths(plan, "compute", leaves, set())
    # closed form for this fixture (one cable per leaf-spine pair): one path per spine to every other leaf
    for leaf in leaves:
        assert {d: n for d, n in want[leaf].items() if d in leaves} == {
            other: len(spines) for other in leaves if other != leaf
        }
    _converge(fab, plan, "compute", want)

    fab.stop(spines[0])
    after = expected_paths(plan, "compute", leaves, {spines[0]})
    for leaf in leaves:
        assert {d: n for d, n in after[leaf].items() if d in leaves} == {
            other: len(spines) - 1 for other in leaves if other != leaf
        }
    _converge(fab, plan, "compute", after)


def test_dragonfly_routers_reach_each_other_on_all_shortest_paths(
    frr_tools: None, fabric_factory: list[FrrFabric], tmp_path: Path
) -> None:
    plan = plan_of(str(with_switch_os(DRAGONFLY, tmp_path, compute="frr")))
    routers = sorted(d.name for d in plan.switches("compute"))
    assert len(routers) == 12
    fab = _start(plan, "compute", tmp_path / "build", fabric_factory)
    want = expected_paths(plan, "compute", routers, set())
    assert all(len(w) == len(routers) - 1 for w in want.values())  # every router reaches every other
    _converge(fab, plan, "compute", want)

    victim = routers[0]
    fab.stop(victim)
    after = expected_paths(plan, "compute", routers, {victim})
    assert all(len(w) == len(routers) - 2 for w in after.values())  # the dragonfly survives one router
    _converge(fab, plan, "compute", after)
