"""Renames that reuse a name (a site renumbering its switches: S1 → S2 while S2 → S3, or two switches
swapping names) are relabels in a safe order, not relocations with every cable of them moved: `diff` of
a spine list shifted by one said 3 switches relocated, 1 removed, 1 installed and 384 cables moved."""

from __future__ import annotations

import csv
import json
import time
from pathlib import Path

from conftest import EXAMPLES, run_cli  # tests/conftest.py

from generator.diff import compare
from generator.diff.model import Relabel
from generator.diff.renames import relabel_order
from generator.plan.model import Device, Endpoint, Link, Plan

TOPOLOGY = (
    "    topology: {kind: fat-tree, tiers: 2, switch: sn5600, rail_optimized: true, scalable_unit: 32}\n"
)


def _spines(tmp_path: Path, name: str, spines: list[str]) -> Path:
    """The RoCE example with the site's own names for its four spines (given in placement order)."""
    text = (EXAMPLES / "roce-rail-2tier.yaml").read_text()
    assert text.count(TOPOLOGY) == 1
    names = f"names: {{spine: {{names: [{', '.join(spines)}]}}}}"
    path = tmp_path / f"{name}.yaml"
    path.write_text(text.replace(TOPOLOGY, TOPOLOGY[:-2] + f", {names}}}\n"))
    return path


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _diff(tmp_path: Path, old: list[str], new: list[str]) -> tuple[dict, str, Path]:  # type: ignore[type-arg]
    a, b = _spines(tmp_path, "old", old), _spines(tmp_path, "new", new)
    wo = tmp_path / "wo"
    code, out, err = run_cli("diff", str(a), str(b), "--format", "json", "--work-order", str(wo))
    assert code == 1, err
    code, text, err = run_cli("diff", str(a), str(b))
    assert code == 1, err
    return json.loads(out), text, wo


def _relabel_only(data: dict, text: str, wo: Path, renamed: int) -> None:  # type: ignore[type-arg]
    """Nothing moves, nothing goes down: the switches and their cables get new labels."""
    assert data["live"] and not data["disruption"]["devices_down"] and not data["disruption"]["links_down"]
    s = data["summary"]
    assert (s["devices_added"], s["devices_removed"], s["devices_relocated"], s["devices_renamed"]) == (
        0,
        0,
        0,
        renamed,
    )
    assert (s["cables_moved"], s["cables_added"], s["cables_removed"]) == (0, 0, 0)
    assert f"0 relocated, {renamed} renamed (relabel only)" in text
    assert "cables: +0 added, -0 removed, 0 moved, 0 re-pulled" in text
    assert "live: yes — additions and relabelling only" in text
    cables = _rows(wo / "work-order.csv")
    assert cables and {r["action"] for r in cables} == {"relabel"}


def test_a_chain_of_three_renames_is_relabelled_from_its_end(tmp_path: Path) -> None:
    data, text, wo = _diff(tmp_path, ["S1", "S2", "S3", "X4"], ["S2", "S3", "S4", "X4"])
    _relabel_only(data, text, wo, 3)
    assert [(r["old"], r["new"], r["u"]) for r in data["devices"]["renamed"]] == [
        ("S1", "S2", 1),
        ("S2", "S3", 3),
        ("S3", "S4", 5),
    ]
    # S4 is free: S3 takes it first, then S2 the freed S3, then S1 the freed S2
    order = [
        (r["old"], r["new"], r["from"], r["to"], r["temporary"]) for r in data["devices"]["relabel_order"]
    ]
    assert order == [
        ("S3", "S4", "S3", "S4", False),
        ("S2", "S3", "S2", "S3", False),
        ("S1", "S2", "S1", "S2", False),
    ]
    assert "  = switch S1 → S2 (sn5600, compute spine) at r04-12 U1: relabel it and its cables" in text
    assert "relabel in this order, names are reused: S3 → S4, S2 → S3, S1 → S2" in text
    assert [
        (r["seq"], r["action"], r["name"], r["old_name"], r["old_u"]) for r in _rows(wo / "devices.csv")
    ] == [
        ("1", "relabel", "S4", "S3", "5"),
        ("2", "relabel", "S3", "S2", "3"),
        ("3", "relabel", "S2", "S1", "1"),
    ]
    # the cables of U1's spine carry its new name, S2 (those of U3's S3): none of the unrenamed X4's
    labels = {(r["b_u"], r["b_device"]) for r in _rows(wo / "work-order.csv")}
    assert labels == {("1", "S2"), ("3", "S3"), ("5", "S4")}


def test_two_switches_that_swap_names_are_relabelled_through_a_temporary_label(tmp_path: Path) -> None:
    data, text, wo = _diff(tmp_path, ["S1", "S2", "S3", "S4"], ["S2", "S1", "S3", "S4"])
    _relabel_only(data, text, wo, 2)
    assert [(r["old"], r["new"]) for r in data["devices"]["renamed"]] == [("S1", "S2"), ("S2", "S1")]
    order = [
        (r["old"], r["new"], r["from"], r["to"], r["temporary"]) for r in data["devices"]["relabel_order"]
    ]
    assert order == [
        ("S1", "S2", "S1", "tmp-S1", True),
        ("S2", "S1", "S2", "S1", False),
        ("S1", "S2", "tmp-S1", "S2", False),
    ]
    assert "(a temporary label opens a swap): S1 → tmp-S1, S2 → S1, tmp-S1 → S2" in text
    assert [(r["action"], r["name"], r["old_name"], r["old_u"]) for r in _rows(wo / "devices.csv")] == [
        ("relabel-temporary", "tmp-S1", "S1", "1"),
        ("relabel", "S1", "S2", "3"),
        ("relabel", "S2", "tmp-S1", "1"),
    ]
    assert {(r["b_u"], r["b_device"]) for r in _rows(wo / "work-order.csv")} == {("1", "S2"), ("3", "S1")}


# ---- hand-built plans ---------------------------------------------------------------------------------


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


def _sw(name: str, u: int) -> Device:
    return Device(name, "switch", "leaf", "qm9700", "compute", rack="r01-01", u=u)


def _node(name: str, u: int) -> Device:
    return Device(name, "node", "gpu", "dgx-h100", None, pool="dgx", rack="r01-02", u=u)


def _link(cid: str, node: str, leaf: str, port: str) -> Link:
    return Link(
        cid, "compute", "node_leaf", Endpoint(node, "mlx5_0/1", 1), Endpoint(leaf, port, 1), 400, "mmf", 10.0
    )


def _leaves(names: list[str], ports: list[str] | None = None) -> Plan:
    """A leaf per unit 1, 3, 5 … named ``names``, each with node n<i> on its port ``ports[i]`` (1)."""
    ports = ports or ["1"] * len(names)
    return _plan(
        [_sw(n, 1 + 2 * i) for i, n in enumerate(names)] + [_node(f"n{i}", i + 1) for i in range(len(names))],
        [_link(f"C-{i}", f"n{i}", n, ports[i]) for i, n in enumerate(names)],
    )


def test_a_cycle_of_three_is_opened_once() -> None:
    d = compare(_leaves(["a", "b", "c"]), _leaves(["b", "c", "a"]))
    assert d.devices_renamed == (("a", "b"), ("b", "c"), ("c", "a"))
    assert not (d.devices_relocated or d.cables_moved or d.links_down) and d.live
    assert d.device_relabels == (
        Relabel(
            "a",
            "b",
            "a",
            "tmp-a",
        ),
        Relabel("c", "a", "c", "a"),
        Relabel("b", "c", "b", "c"),
        Relabel("a", "b", "tmp-a", "b"),
    )


def test_the_temporary_label_is_no_device_name() -> None:
    steps = relabel_order({"a": "b", "b": "a"}, ({"a", "b", "tmp-a"}, {"a", "b", "tmp-a-2"}))
    assert [s.after for s in steps] == ["tmp-a-3", "a", "b"]
    # nor one that differs from a device's name by case only
    steps = relabel_order({"a": "b", "b": "a"}, ({"a", "b", "TMP-A"},))
    assert [s.after for s in steps] == ["tmp-a-2", "a", "b"]


def test_a_chain_with_a_cable_on_another_port_is_no_rename() -> None:
    """S1 → S2 → S3, but S1's node cable lands on another port of the leaf at S1's unit: that leaf is not
    S1 renamed, and without it S2 cannot take its name, so nothing in the chain is a rename."""
    d = compare(_leaves(["s1", "s2"]), _leaves(["s2", "s3"], ports=["7", "1"]))
    assert not d.devices_renamed and not d.live
    assert [x.name for x in d.devices_relocated] == ["s2"] and d.cables_moved


def test_a_name_taken_from_a_device_that_keeps_it_is_no_rename() -> None:
    """a's unit and cables are now b's, but the old b is gone, not renamed: b would be two devices."""
    old = _leaves(["a", "b"])
    new = _plan([_sw("b", 1), _node("n0", 1), _node("n1", 2)], [_link("C-0", "n0", "b", "1")])
    d = compare(old, new)
    assert not d.devices_renamed and {x.name for x in d.devices_removed} == {"a"}
    assert [x.name for x in d.devices_relocated] == ["b"]


def test_a_long_chain_is_matched_and_ordered_in_linear_time() -> None:
    """A site shifting 20,000 names by one is one chain: relabelled from its end, and when its end is no
    rename (a cable on another port) it unravels whole, in seconds (pair by pair, each round checking every
    pair again, took about 30 s for 3,000)."""
    names = [f"l{i:06d}" for i in range(20_001)]
    old = _leaves(names[:-1])
    start = time.process_time()  # CPU: a loaded machine does not fail it
    d = compare(old, _leaves(names[1:]))
    assert len(d.devices_renamed) == 20_000 and d.live
    assert [r.old for r in d.device_relabels[:2]] == ["l019999", "l019998"]
    assert not any(r.temporary for r in d.device_relabels)
    broken = compare(old, _leaves(names[1:], ports=["1"] * 19_999 + ["7"]))
    assert not broken.devices_renamed and len(broken.devices_relocated) == 19_999
    assert time.process_time() - start < 60
