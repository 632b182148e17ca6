"""A device only renamed (same place, same cables) is relabelled, not removed and installed with every cable
moved: `diff` of one spine renamed by case said 1 device unplugged and 32 links down, and a site moving
from the tool's switch names to its own (topology.names) 17 switches unplugged and 64 cables moved."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from conftest import EXAMPLES, run_cli  # tests/conftest.py

from generator.diff import compare
from generator.plan.model import Device, Endpoint, Link, Plan

SPINES = ["A06-SPINE-01", "A06-SPINE-02", "A06-SPINE-03", "A06-SPINE-04"]
TOPOLOGY = (
    "    topology: {kind: fat-tree, tiers: 2, switch: sn5600, rail_optimized: true, scalable_unit: 32}\n"
)


def _named(tmp_path: Path, name: str, spines: list[str] | None, leaf: str | None = None) -> Path:
    """The RoCE example with the site's own names for its spines (and leaves), or the tool's (None)."""
    text = (EXAMPLES / "roce-rail-2tier.yaml").read_text()
    assert text.count(TOPOLOGY) == 1
    if spines is not None:
        names = f"spine: {{names: [{', '.join(spines)}]}}" + (
            f", leaf: {{template: '{leaf}'}}" if leaf else ""
        )
        text = text.replace(TOPOLOGY, TOPOLOGY[:-2] + f", names: {{{names}}}}}\n")
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def test_a_switch_renamed_by_case_is_a_live_relabel(tmp_path: Path) -> None:
    old = _named(tmp_path, "old", SPINES)
    new = _named(tmp_path, "new", ["a06-spine-01", *SPINES[1:]])
    wo = tmp_path / "wo"
    code, out, err = run_cli("diff", str(old), str(new), "--format", "json", "--work-order", str(wo))
    assert code == 1, err
    data = json.loads(out)
    assert data["live"] and not data["identical"] and not data["disruption"]["devices_down"]
    s = data["summary"]
    assert (s["devices_added"], s["devices_removed"], s["devices_renamed"]) == (0, 0, 1)
    assert (s["cables_moved"], s["links_down"]) == (0, 0)
    [renamed] = data["devices"]["renamed"]
    assert (renamed["old"], renamed["new"], renamed["kind"], renamed["role"]) == (
        "A06-SPINE-01",
        "a06-spine-01",
        "switch",
        "spine",
    )
    # the work order: the switch relabelled where it stands, its cables relabelled, nothing removed or moved
    assert [(r["action"], r["name"], r["old_name"]) for r in _rows(wo / "devices.csv")] == [
        ("relabel", "a06-spine-01", "A06-SPINE-01")
    ]
    cables = _rows(wo / "work-order.csv")
    assert cables and {r["action"] for r in cables} == {"relabel"}
    assert all("a06-spine-01" in (r["a_device"], r["b_device"]) for r in cables)
    assert any(r["b_label"].endswith("-a06-spine-01-P01/1") for r in cables)
    code, text, _ = run_cli("diff", str(old), str(new))
    assert "1 renamed (relabel only)" in text and "= switch A06-SPINE-01 → a06-spine-01 (sn5600" in text
    assert "live: yes — additions and relabelling only" in text
    assert "cables: +0 added, -0 removed, 0 moved, 0 re-pulled" in text


def test_the_tools_names_to_the_sites_names_renames_every_switch(tmp_path: Path) -> None:
    """Both tiers renamed at once: each leaf's far ends are renamed spines, each spine's renamed leaves."""
    tools = _named(tmp_path, "tools", None)
    own = _named(tmp_path, "own", SPINES, leaf="A05-Leaf-SU{su}-R{rail:02}")
    for old, new in ((tools, own), (own, tools)):
        code, out, err = run_cli("diff", str(old), str(new), "--format", "json")
        assert code == 1, err
        data = json.loads(out)
        assert data["live"], data["disruption"]
        s = data["summary"]
        assert (s["devices_added"], s["devices_removed"], s["cables_moved"]) == (0, 0, 0)
        pairs = {(r["old"], r["new"]) for r in data["devices"]["renamed"]}
        spines = {(f"c-spine-{i:03d}", name) for i, name in enumerate(SPINES, 1)}
        leaves = {(f"c-leaf-su{su}-r{r}", f"A05-Leaf-SU{su}-R{r + 1:02d}") for su in (1, 2) for r in range(8)}
        assert pairs == (spines | leaves if old == tools else {(b, a) for a, b in spines | leaves})
        assert [r["old"] for r in data["devices"]["renamed"]] == sorted(
            r["old"] for r in data["devices"]["renamed"]
        )


# ---- hand-built plans: what is not a rename stays what it is ----------------------------------------------


def _plan(devices: list[Device], links: list[Link]) -> Plan:
    return Plan(
        cluster=None,
        devices=tuple(devices),
        links=tuple(links),
        racks=(),
        metrics={},
        bom=(),
        transceivers={},
    )  # type: ignore[arg-type]


def _sw(
    name: str, role: str = "leaf", model: str = "qm9700", u: int = 1, rack: str | None = "r01-01"
) -> Device:
    return Device(name, "switch", role, model, "compute", rack=rack, u=u)


def _node(name: str, u: int = 1) -> Device:
    return Device(name, "node", "gpu", "dgx-h100", None, pool="dgx", rack="r01-02", u=u)


def _link(cid: str, a: str, ap: str, b: str, bp: str, speed: float = 400) -> Link:
    return Link(cid, "compute", "node_leaf", Endpoint(a, ap, 1), Endpoint(b, bp, int(bp)), speed, "mmf", 10.0)


def _leaf_spine(
    leaf: str, spine: str, *, leaf_u: int = 1, spine_model: str = "qm9700", port: str = "1"
) -> Plan:
    """Two nodes on a leaf, the leaf on a spine."""
    return _plan(
        [_node("n1"), _node("n2", u=2), _sw(leaf, u=leaf_u), _sw(spine, "spine", spine_model, u=40)],
        [
            _link("C-NL-1", "n1", "mlx5_0/1", leaf, "1"),
            _link("C-NL-2", "n2", "mlx5_0/1", leaf, "2"),
            _link("C-LS-1", leaf, "33", spine, port),
        ],
    )


def test_a_renamed_tier_pairs_both_ways_and_moves_nothing() -> None:
    old, new = _leaf_spine("l1", "s1"), _leaf_spine("L-01", "S-01")
    d = compare(old, new)
    assert d.devices_renamed == (("l1", "L-01"), ("s1", "S-01"))
    assert not (d.devices_added or d.devices_removed or d.cables_moved or d.links_down)
    assert d.live and not d.identical and d.relabelled
    assert compare(new, old).devices_renamed == (("L-01", "l1"), ("S-01", "s1"))


def test_a_renamed_leaf_with_a_cable_re_pulled_keeps_the_old_name_on_the_old_side() -> None:
    old = _leaf_spine("l1", "s1")
    new = _plan(
        list(_leaf_spine("L-01", "s1").devices),
        [*_leaf_spine("L-01", "s1").links[:2], _link("C-LS-1", "L-01", "33", "s1", "1", speed=200)],
    )
    d = compare(old, new)
    assert d.devices_renamed == (("l1", "L-01"),)
    [c] = d.cables_changed
    assert c.fields == ("speed_gbps",) and not c.ends and c.old.a.device == "l1" and c.new.a.device == "L-01"
    assert d.links_down == ("C-LS-1",) and not d.devices_down


def test_another_model_another_unit_or_another_port_is_not_a_rename() -> None:
    old = _leaf_spine("l1", "s1")
    for new, gone in (
        (_leaf_spine("l1", "S-01", spine_model="qm9790"), ["s1"]),  # a new spine of another model
        (_leaf_spine("l1", "S-01", port="2"), ["s1"]),  # the uplink on another spine port
        (_leaf_spine("L-01", "s1", leaf_u=5), ["l1"]),  # a leaf at another unit
        # the leaf alike but for its uplink, which goes to a new spine: neither is the old one renamed
        (_leaf_spine("L-01", "S-01", spine_model="qm9790"), ["l1", "s1"]),
    ):
        d = compare(old, new)
        assert not d.devices_renamed and [x.name for x in d.devices_removed] == gone
        assert len(d.devices_added) == len(gone) and not d.live and d.devices_down


def test_two_switches_that_swap_places_are_relocated_not_renamed() -> None:
    old = _plan([_sw("a", u=1), _sw("b", u=3)], [])
    new = _plan([_sw("a", u=3), _sw("b", u=1)], [])
    d = compare(old, new)
    assert not d.devices_renamed and [r.name for r in d.devices_relocated] == ["a", "b"] and not d.live


def test_a_rename_the_plans_cannot_tell_apart_is_not_guessed() -> None:
    """Two unracked switches without cables, both renamed: which is which is unknown, so no pairing."""
    old = _plan([_sw("a", rack=None), _sw("b", rack=None)], [])
    new = _plan([_sw("x", rack=None), _sw("y", rack=None)], [])
    d = compare(old, new)
    assert not d.devices_renamed and len(d.devices_removed) == 2 and len(d.devices_added) == 2
