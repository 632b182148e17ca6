"""OpenSM's fat-tree routing (ftree) accepts every generated fat-tree and rejects broken ones.

Each fabric is written with ``render_netfile``, simulated by ibsim and swept once by OpenSM 3.3.23
through the umad2sim preload. OpenSM exits 0 either way, so the log is the verdict: success is
``ftree tables configured on all switches``; a broken fat-tree logs an ERR (AB0B/AB0C uneven
up/down port groups, AB26 an HCA on a non-leaf switch), ``Fabric topology is not a fat-tree`` and
falls back to minhop — exactly what it logs for real miscabled fabrics (OpenSM 3.3 log).
NDR fabrics are simulated at HDR (ibsim 0.10 models nothing faster).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import ib_faults
import pytest
from ib_fixtures import plan_of, simulators
from ibsim_harness import REQUIRES_TOOLS, SIM_SPEEDS, Simulator, first_ca

from generator.emit.ibnetdiscover import render_netfile
from generator.plan.model import Plan

pytestmark = [pytest.mark.realtools, REQUIRES_TOOLS]


@pytest.fixture
def simulator(tmp_path: Path) -> Iterator[Callable[..., Simulator]]:
    yield from simulators(tmp_path)


REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SUPERPOD = str(REPO / "examples" / "superpod-h100-4su.yaml")
FT2 = str(FIXTURES / "ft2-hdr-rail.yaml")
FT3 = str(FIXTURES / "ft3-ndr.yaml")
SUPERPOD8 = str(FIXTURES / "superpod-h100-8su.yaml")
REJECTIONS = ("ERR AB0B", "ERR AB0C", "ERR AB26", "ERR AB2B", "not a fat-tree")


def sim_netfile(plan: Plan, fabric: str) -> str:
    token = plan.cluster.fabrics[fabric].tech.speed_token
    return render_netfile(plan, fabric, sim_speed=None if token in SIM_SPEEDS else "HDR")


def fabric_counts(log: str) -> tuple[int, int]:
    m = re.search(r"Fabric has (\d+) CAs, \d+ CA ports \(\d+ of them CNs\), (\d+) switches", log)
    assert m, "OpenSM did not describe the fabric (ftree never ran?)"
    return int(m.group(1)), int(m.group(2))


@pytest.mark.parametrize(
    ("blueprint", "fabric", "ranks"),
    [
        (FT2, "compute", 2),
        (FT3, "compute", 3),
        (SUPERPOD, "compute", 2),  # 127 DGX x 8 HCAs + 4 UFM ports = 1020 CAs, 48 switches
        (SUPERPOD, "storage", 2),  # leaf-spine with dual-port storage HCAs
        (SUPERPOD8, "compute", 2),  # 2048 CAs + 96 switches: beyond ibsim's default -N
    ],
    ids=["ft2-hdr-rail", "ft3-ndr", "superpod-4su-compute", "superpod-4su-storage", "superpod-8su-compute"],
)
def test_opensm_routes_generated_fat_tree_with_ftree(
    blueprint: str, fabric: str, ranks: int, simulator: Callable[[str, str], Simulator]
) -> None:
    plan = plan_of(blueprint)
    net = sim_netfile(plan, fabric)
    sim = simulator(net, fabric)
    run = sim.opensm(first_ca(net), "ftree")
    assert not [r for r in REJECTIONS if r in run.log], run.log[-4000:]
    assert run.ftree_ok, run.log[-4000:]
    assert f"FatTree rank (roots to leaf switches): {ranks}" in run.log
    cas = len(
        {
            (ln.a.device, ln.a.port.split("/")[0])
            for ln in plan.links_of(fabric)
            if plan.device_by_name[ln.a.device].kind != "switch"  # nodes and appliances (UFM) are CAs
        }
        | {
            (ln.b.device, ln.b.port.split("/")[0])
            for ln in plan.links_of(fabric)
            if plan.device_by_name[ln.b.device].kind != "switch"
        }
    )
    assert fabric_counts(run.log) == (cas, len(plan.switches(fabric)))


def _uplinks(plan: Plan) -> list[str]:
    return [ln.id for ln in plan.links_of("compute") if ln.layer == "leaf_spine"]


def _first_uplinks_of_two_leaves(plan: Plan) -> tuple[str, str]:
    seen: dict[str, str] = {}
    for ln in plan.links_of("compute"):
        if ln.layer == "leaf_spine":
            leaf = ln.a.device if plan.device_by_name[ln.a.device].role == "leaf" else ln.b.device
            seen.setdefault(leaf, ln.id)
    first, second = list(seen.values())[:2]
    return first, second


def _free_port(plan: Plan, device: str) -> int:
    used = {int(ep.port) for ln in plan.links for ep in (ln.a, ln.b) if ep.device == device}
    return next(p for p in range(1, plan.device_by_name[device].ports + 1) if p not in used)


def _break(plan: Plan, fault: str) -> Plan:
    if fault == "leaf-leaf":
        return ib_faults.leaf_to_leaf(plan, *_first_uplinks_of_two_leaves(plan))
    if fault == "drop-uplink":
        return ib_faults.drop(plan, _uplinks(plan)[0])
    if fault == "hca-on-spine":
        spine = plan.switches("compute")[-1].name
        node_link = next(ln for ln in plan.links_of("compute") if ln.layer == "node_leaf")
        return ib_faults.move_switch_end(plan, node_link.id, spine, _free_port(plan, spine))
    raise AssertionError(fault)


@pytest.mark.parametrize(
    ("fault", "errors"),
    [
        ("leaf-leaf", ("AB0B", "AB0C")),
        ("drop-uplink", ("AB0B", "AB0C")),
        ("hca-on-spine", ("AB26",)),
    ],
)
def test_opensm_rejects_broken_fat_tree(
    fault: str, errors: tuple[str, ...], simulator: Callable[[str, str], Simulator]
) -> None:
    broken = _break(plan_of(FT2), fault)
    net = sim_netfile(broken, "compute")
    sim = simulator(net, fault)
    run = sim.opensm(first_ca(net), "ftree")
    assert any(f"ERR {e}" in run.log for e in errors), run.log[-4000:]
    assert "Fabric topology is not a fat-tree" in run.log, run.log[-4000:]
    assert "minhop tables configured on all switches" in run.log, run.log[-4000:]
    assert not run.ftree_ok


def test_opensm_rejects_broken_superpod(simulator: Callable[[str, str], Simulator]) -> None:
    """The full-size example with one leaf uplink re-cabled leaf↔leaf."""
    broken = _break(plan_of(SUPERPOD), "leaf-leaf")
    net = sim_netfile(broken, "compute")
    run = simulator(net, "superpod-broken").opensm(first_ca(net), "ftree")
    assert re.search(r"ERR AB0[BC]", run.log), run.log[-4000:]
    assert "Fabric topology is not a fat-tree" in run.log
    assert "minhop tables configured on all switches" in run.log


SPINE_APPLIANCE = FIXTURES / "ft2-spine-appliance.yaml"


def test_an_appliance_on_a_spine_is_no_fat_tree_for_opensm(
    tmp_path: Path, simulator: Callable[[str, str], Simulator]
) -> None:
    """A host cabled to a spine: real OpenSM's ftree refuses the fabric (ERR AB2B, two roots of rank 0) and
    routes minhop, so the plan's default engine is minhop; the same fabric without it routes with ftree."""
    from generator.plan.subnet_manager import routing_engine

    bare = tmp_path / "bare.yaml"
    bare.write_text(SPINE_APPLIANCE.read_text().split("appliances:")[0])
    for blueprint, engine in ((bare, "ftree"), (SPINE_APPLIANCE, "minhop")):
        plan = plan_of(str(blueprint))
        assert routing_engine(plan.cluster.fabrics["compute"], plan) == engine
        net = sim_netfile(plan, "compute")
        run = simulator(net, blueprint.stem).opensm(first_ca(net), "ftree")
        assert run.ftree_ok == (engine == "ftree"), run.log[-4000:]
        assert f"{engine} tables configured on all switches" in run.log, run.log[-4000:]
    assert "ERR AB2B" in run.log, run.log[-4000:]
