"""Every example validates (exit 0) and plans; `plan --format json` carries the contract keys."""

from __future__ import annotations

import json

import pytest
from conftest import EXAMPLES, run_cli

PLAN_KEYS = {
    "nodes",
    "gpus",
    "switches",
    "cables",
    "transceivers",
    "racks",
    "bisection_gbps",
    "oversubscription",
    "diameter_hops",
    "spof",
    "bom",
}


def example_ids() -> list[str]:
    return sorted(p.name for p in EXAMPLES.glob("*.yaml"))


@pytest.mark.parametrize("name", example_ids())
def test_example_plans_with_contract_keys(name: str) -> None:
    code, out, err = run_cli("plan", str(EXAMPLES / name), "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert set(data) >= PLAN_KEYS
    assert isinstance(data["switches"], dict) and isinstance(data["cables"], dict)
    assert all({"item", "model", "count"} <= set(line) for line in data["bom"])


def test_superpod_plan_numbers() -> None:
    code, out, _ = run_cli("plan", str(EXAMPLES / "superpod-h100-4su.yaml"), "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["switches"]["leaf"] == 32 and data["switches"]["spine"] == 16
    # NVIDIA's RA, 4 SUs: 127 DGX (a node slot left to the UFM appliances), 1024 leaf-spine cables
    assert data["cables"]["node_leaf"] == 127 * 8 and data["cables"]["leaf_spine"] == 1024
    assert data["gpus"] == 127 * 8
    # non-blocking: half the injection bandwidth (1016 ports x 400 Gb/s / 2)
    assert data["bisection_gbps"] == 127 * 8 * 400 / 2
    assert data["oversubscription"] == {"leaf": 1.0}
    assert data["spof"] == []
    # twin-port cages: one transceiver per used cage at both ends of every optical run
    # (the UFM appliances' 4 cables have no length, so no module, until the appliances are racked: NET024)
    assert data["transceivers"] == (32 + 16) * 32 + 127 * 4


def test_topology_exports_parse() -> None:
    import xml.etree.ElementTree as ET

    path = str(EXAMPLES / "superpod-h100-4su.yaml")
    code, out, _ = run_cli("topology", path, "--format", "json")
    assert code == 0
    graph = json.loads(out)
    cables = [e for e in graph["links"] if e.get("kind") == "cable"]
    assert len(cables) == 1020 + 1024  # the RA's Table 4: "Compute and UFM" 1020, spine-leaf 1024
    code, out, _ = run_cli("topology", path, "--format", "graphml")
    assert code == 0 and ET.fromstring(out.encode()).tag.endswith("graphml")
    code, out, _ = run_cli("topology", path, "--format", "dot", "--level", "device")
    assert code == 0 and out.startswith("graph fabric {") and '"c-spine-016"' in out
