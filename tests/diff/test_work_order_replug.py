"""A cable unplugged in step 1 because its device is replaced or relocated goes back in in step 3, even
where labels change (a site, rack or device renamed): the work order of a site renamed beside two
replaced switches unplugged their 6 cables and only relabelled them, never plugging them back."""

from __future__ import annotations

import csv
from pathlib import Path

from conftest import EXAMPLES, run_cli  # tests/conftest.py

from generator.diff import compare
from generator.diff.workorder import cable_actions
from generator.plan.model import Device, Endpoint, Link, Plan

MGMT = "    topology: {kind: leaf-spine, switch: sn2201, spine_switch: sn4600c}\n"


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def test_a_site_renamed_beside_replaced_switches_replugs_their_cables(tmp_path: Path) -> None:
    text = (EXAMPLES / "roce-rail-2tier.yaml").read_text()
    assert text.count(MGMT) == 1 and text.count("  name: dc1\n") == 1
    old, new = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old.write_text(text)
    new.write_text(
        text.replace("  name: dc1\n", "  name: dc2\n").replace(MGMT, MGMT.replace("sn4600c", "sn5600"))
    )
    code, _, err = run_cli("diff", str(old), str(new), "--work-order", str(tmp_path / "wo"))
    assert code == 1, err
    rows = _rows(tmp_path / "wo" / "work-order.csv")
    unplugged = {r["cable_id"] for r in rows if r["action"] == "unplug"}
    replugged = [r for r in rows if r["action"] == "replug"]
    assert unplugged and {r["cable_id"] for r in replugged} == unplugged
    assert all(r["step"] == "3" and r["a_label"].startswith("dc2-") for r in replugged)
    # every other cable is relabelled, once
    relabelled = [r["cable_id"] for r in rows if r["action"] == "relabel"]
    assert len(relabelled) == len(set(relabelled)) and not unplugged & set(relabelled)


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


def _leaf_and_nodes(leaf: str, n1_u: int) -> Plan:
    def link(cid: str, node: str, port: str) -> Link:
        return Link(
            cid,
            "compute",
            "node_leaf",
            Endpoint(node, "mlx5_0/1", 1),
            Endpoint(leaf, port, 1),
            400,
            "mmf",
            10.0,
        )

    return _plan(
        [
            Device(leaf, "switch", "leaf", "qm9700", "compute", rack="r01-01", u=1),
            Device("n1", "node", "gpu", "dgx-h100", None, pool="dgx", rack="r01-02", u=n1_u),
            Device("n2", "node", "gpu", "dgx-h100", None, pool="dgx", rack="r01-02", u=20),
        ],
        [link("C-1", "n1", "1"), link("C-2", "n2", "2")],
    )


def test_a_renamed_leaf_beside_a_relocated_node_replugs_the_nodes_cable() -> None:
    d = compare(_leaf_and_nodes("l1", 1), _leaf_and_nodes("L-01", 10))
    assert d.devices_renamed == (("l1", "L-01"),) and [r.name for r in d.devices_relocated] == ["n1"]
    down, up = cable_actions(d)
    assert [(a, x.id, x.b.device) for a, x in down] == [("unplug", "C-1", "l1")]
    assert sorted((a, x.id, x.b.device) for a, x in up) == [
        ("relabel", "C-2", "L-01"),
        ("replug", "C-1", "L-01"),
    ]
