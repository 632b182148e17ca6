"""Plan-vs-plan comparison on real plans: growth by a scalable unit, HDR → NDR, a pool grown."""

from __future__ import annotations

from collections import Counter

from diff_blueprints import plan_of, variant

from generator.diff import compare
from generator.plan.model import Device, Endpoint, Link, Plan


def _layers(links) -> Counter[str]:  # type: ignore[no-untyped-def]
    return Counter(x.layer for x in links)


def test_identical_plans() -> None:
    p = plan_of(variant("same", dgx=64, growth=128))
    d = compare(p, p)
    assert d.identical and d.live and not d.racks_affected and not d.links_down


def test_grow_two_to_three_scalable_units_compute() -> None:
    """Spines sized for 4 SUs (growth_nodes): a third SU adds its 8 rail leaves, 32 nodes and their cables,
    nothing else on the compute fabric changes port, and the cable ids of existing cables stay."""
    old, new = plan_of(variant("su2", dgx=64, growth=128)), plan_of(variant("su3", dgx=96, growth=128))
    d = compare(old, new, ["compute"])
    switches = sorted(x.name for x in d.devices_added if x.kind == "switch")
    assert switches == [f"c-leaf-su3-r{r}" for r in range(8)]  # 8 leaves, no spine (sized for growth)
    assert sorted(x.name for x in d.devices_added if x.kind == "node") == [
        f"dgx{i:03d}" for i in range(65, 97)
    ]
    assert _layers(d.cables_added) == {"node_leaf": 256, "leaf_spine": 256}
    assert sorted(x.id for x in d.cables_added if x.layer == "node_leaf") == [
        f"C-NL-{i:06d}" for i in range(513, 769)
    ]
    assert sorted(x.id for x in d.cables_added if x.layer == "leaf_spine") == [
        f"C-LS-{i:06d}" for i in range(513, 769)
    ]
    new_leaves = set(switches)
    for x in d.cables_added:  # every new cable touches a new leaf
        assert {x.a.device, x.b.device} & new_leaves
    assert not d.devices_removed and not d.cables_removed and not d.cables_moved and not d.devices_replaced
    assert not d.port_speeds
    # units fill the site from the front, spines from the back: nothing already placed moves
    assert not d.devices_relocated
    # label ids of untouched cables: every old compute cable keeps its id and both ports
    new_by = {x.id: x for x in new.links}
    for x in old.links_of("compute"):
        y = new_by[x.id]
        assert (y.a.device, y.a.port, y.b.device, y.b.port) == (x.a.device, x.a.port, x.b.device, x.b.port)
    assert set(d.racks_added) <= set(d.racks_affected)


def test_grow_without_growth_headroom_moves_leaf_spine_cables() -> None:
    """2 → 3 SUs without growth_nodes: the spine layer grows from 8 to 16 switches, so every existing
    leaf–spine cable is re-spread (moved) and the change cannot be done live."""
    old, new = plan_of(variant("su2-tight", dgx=64)), plan_of(variant("su3-tight", dgx=96))
    d = compare(old, new, ["compute"])
    added_spines = sorted(x.name for x in d.devices_added if x.role == "spine")
    assert added_spines == [f"c-spine-{i:03d}" for i in range(9, 17)]
    moved = [m for m in d.cables_moved if m.new.layer == "leaf_spine"]
    assert moved and all(m.ends == ("b",) for m in moved)  # the leaf port stays, the spine end moves
    old_by = {x.id: x for x in old.links}
    for m in moved:
        assert old_by[m.id].b != m.new.b
    assert not d.live and set(m.id for m in moved) <= set(d.links_down)
    assert not [m for m in d.cables_moved if m.new.layer == "node_leaf"]


def test_hdr_to_ndr() -> None:
    old = plan_of(variant("hdr", dgx=40, su=20, hdr=True))
    new = plan_of(variant("ndr", dgx=40, su=20))
    d = compare(old, new, ["compute"])
    leaves = sorted(x.name for x in old.switches("compute") if x.role == "leaf")
    assert sorted(r.name for r in d.devices_replaced if r.name in leaves) == leaves
    assert {(r.old_model, r.new_model) for r in d.devices_replaced} == {("qm8700", "qm9700")}
    # every node port of the compute fabric goes from 200 to 400 Gb/s
    node_ports = {
        (ep.device, ep.port)
        for x in old.links_of("compute")
        for ep in (x.a, x.b)
        if old.device_by_name[ep.device].kind == "node"
    }
    speed = {(p.device, p.port): (p.old_gbps, p.new_gbps) for p in d.port_speeds}
    assert len(node_ports) == 40 * 8
    assert all(speed[p] == (200, 400) for p in node_ports)
    # node–leaf cables keep their ports (same SU shape) and are re-pulled at the new speed
    nl = [c for c in d.cables_changed if c.new.layer == "node_leaf"]
    assert len(nl) == 320 and all("speed_gbps" in c.fields for c in nl)
    # a 64-port spine takes twice the uplinks of a 40-port one: fewer spines, the rest removed
    old_spines = {x.name for x in old.switches("compute") if x.role == "spine"}
    new_spines = {x.name for x in new.switches("compute") if x.role == "spine"}
    assert sorted(x.name for x in d.devices_removed) == sorted(old_spines - new_spines)
    assert not d.live and d.devices_down


def test_management_pool_grown_is_live() -> None:
    old, new = plan_of(variant("mgmt3")), plan_of(variant("mgmt5", mgmt=5))
    d = compare(old, new, ["management"])
    assert [x.name for x in d.devices_added] == ["mgmt004", "mgmt005"]
    assert [(x.a.device, x.layer) for x in d.cables_added] == [
        ("mgmt004", "node_leaf"),
        ("mgmt005", "node_leaf"),
    ]
    assert not d.cables_moved and not d.cables_removed and not d.devices_relocated
    assert d.live and not d.disruptions


def test_grow_by_one_scalable_unit_whole_plan_is_live() -> None:
    old, new = plan_of(variant("su2", dgx=64, growth=128)), plan_of(variant("su3", dgx=96, growth=128))
    d = compare(old, new)
    assert not d.cables_moved and not d.devices_relocated and d.live


# ---- small hand-built plans: each kind of change on its own ----------------------------------------------


def _plan(devices: list[Device], links: list[Link]) -> Plan:
    return Plan(
        cluster=None,
        devices=tuple(devices),
        links=tuple(links),
        racks=(),
        metrics={},
        bom=(),  # type: ignore[arg-type]
        transceivers={},
    )


def _sw(name: str, model: str = "qm9700", rack: str = "r01-01", u: int = 1) -> Device:
    return Device(name, "switch", "leaf", model, "compute", rack=rack, u=u)


def _node(name: str) -> Device:
    return Device(name, "node", "gpu", "dgx-h100", None, pool="dgx", rack="r01-02", u=1)


def _link(cid: str, a: str, ap: str, b: str, bp: str, speed: float = 400, medium: str = "mmf") -> Link:
    return Link(
        cid, "compute", "node_leaf", Endpoint(a, ap, 1), Endpoint(b, bp, int(bp)), speed, medium, 10.0
    )


def test_each_kind_of_change() -> None:
    old = _plan(
        [_sw("s1"), _sw("s2"), _node("n1"), _node("n2")],
        [
            _link("C-NL-1", "n1", "mlx5_0/1", "s1", "1"),
            _link("C-NL-2", "n2", "mlx5_0/1", "s1", "2"),
            _link("C-NL-3", "n1", "mlx5_1/1", "s2", "1"),
        ],
    )
    new = _plan(
        [_sw("s1", model="qm9790"), _sw("s2", rack="r01-03"), _node("n1"), _node("n2"), _sw("s3")],
        [
            _link("C-NL-1", "n1", "mlx5_0/1", "s1", "5"),  # moved at the switch end
            _link("C-NL-2", "n2", "mlx5_0/1", "s1", "2", speed=200),  # re-speed
            _link("C-NL-4", "n2", "mlx5_1/1", "s3", "1"),
        ],
    )  # new; C-NL-3 removed
    d = compare(old, new)
    assert [m.id for m in d.cables_moved] == ["C-NL-1"] and d.cables_moved[0].ends == ("b",)
    assert [(c.id, c.fields) for c in d.cables_changed] == [("C-NL-2", ("speed_gbps",))]
    assert [x.id for x in d.cables_removed] == ["C-NL-3"] and [x.id for x in d.cables_added] == ["C-NL-4"]
    assert [(r.name, r.old_model, r.new_model) for r in d.devices_replaced] == [("s1", "qm9700", "qm9790")]
    assert [(r.name, r.old_rack, r.new_rack) for r in d.devices_relocated] == [("s2", "r01-01", "r01-03")]
    assert [x.name for x in d.devices_added] == ["s3"]
    assert [(p.device, p.port, p.old_gbps, p.new_gbps) for p in d.port_speeds] == [
        ("n2", "mlx5_0/1", 400, 200),
        ("s1", "2", 400, 200),
    ]
    assert set(d.links_down) == {"C-NL-1", "C-NL-2", "C-NL-3"}
    assert d.devices_down == ("s1", "s2") and not d.live
    assert "r01-03" in d.racks_affected


def test_new_cable_on_a_busy_port_is_a_conflict() -> None:
    old = _plan([_sw("s1"), _node("n1"), _node("n2")], [_link("C-NL-1", "n1", "mlx5_0/1", "s1", "1")])
    new = _plan(
        [_sw("s1"), _node("n1"), _node("n2")],
        [_link("C-NL-1", "n1", "mlx5_0/1", "s1", "1"), _link("C-NL-2", "n2", "mlx5_0/1", "s1", "1")],
    )
    d = compare(old, new)
    assert d.conflicts and "C-NL-1" in d.conflicts[0] and not d.live
