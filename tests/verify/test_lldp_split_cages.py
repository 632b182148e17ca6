"""LLDP interface names on a switch whose cages are split (SN5600: every 800G cage two 400G sub-ports,
``swp<N>s0``/``swp<N>s1``), read from real lldpd output (fixtures/lldp-sn5600). There the plan's logical
port 5 is cage 3 sub-port 1 (``swp3s0``), and ``swp5`` is cage 5 not split: the two never pass for each
other."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sn5600_lldp import BLUEPRINT, discovered
from vfy_plans import plan_of, run_cli

from generator.verify.identify import PlanIndex


def _verify(path: Path, *extra: str) -> tuple[int, str, dict[str, Any]]:
    code, out, err = run_cli("verify-cabling", str(BLUEPRINT), "--discovered", str(path), *extra)
    _, js, _ = run_cli(
        "verify-cabling", str(BLUEPRINT), "--discovered", str(path), "--format", "json", *extra
    )
    return code, out + err, json.loads(js) if js else {}


def test_the_clean_run_matches(tmp_path: Path) -> None:
    code, out, _ = _verify(discovered(tmp_path))
    assert code == 0, out


@pytest.mark.parametrize("variant", ["cage5", "j0"])  # lldpcli -f json, and -f json0
def test_a_cable_in_an_unsplit_cage_is_not_the_logical_port_of_that_number(
    tmp_path: Path, variant: str
) -> None:
    """The leaf's uplink planned on logical port 5 (P03/1, swp3s0) landed in empty cage 5, which the switch
    reports as swp5: it was read as logical port 5 and the fabric matched the plan."""
    code, out, report = _verify(discovered(tmp_path, variant))
    assert code == 1, out
    assert "MATCHES THE PLAN" not in out.replace("DOES NOT MATCH THE PLAN", "")
    (bad,) = report["results"]
    assert (bad["status"], bad["cable"]) == ("miswired", "C-LS-000001")
    assert bad["b_connected_to"] == {
        "device": "c-leaf-su1-r0",
        "port": "swp5",
        "identified": True,
        "sheet_port": "P05",
    }
    assert "c-spine-001 port 1 [P01/1] goes to c-leaf-su1-r0 port swp5 [P05]" in out
    assert "c-leaf-su1-r0 port 5 [P03/1] is not connected" in out


def test_switch_port_names_on_split_and_unsplit_switches() -> None:
    index = PlanIndex(plan_of(BLUEPRINT), "compute")
    leaf = "c-leaf-su1-r0"
    assert index.devices[leaf].ports_per_cage == 2
    assert index.switch_port(leaf, "swp3s0") == "5"
    assert index.switch_port(leaf, "swp5") == "swp5"  # cage 5 whole: no logical port
    assert index.switch_port(leaf, "Eth1/5") == "Eth1/5"
    assert index.end(leaf, "swp5", "switch").text() == f"{leaf} port swp5 [P05]"


def _accept(tmp_path: Path, port: object) -> Path:
    path = tmp_path / "accept.yaml"
    path.write_text(f"ports:\n  - {{device: c-leaf-su1-r0, port: {port}, reason: UFM appliance}}\n")
    return path


def test_a_device_on_an_unplanned_sub_port_is_read_at_its_logical_port(tmp_path: Path) -> None:
    """A UFM appliance on cage 20 sub-port 2 (swp20s1), which the plan leaves free: logical port 40, as the
    cabling sheet numbers it (P20/2), so the site can acknowledge it."""
    index = PlanIndex(plan_of(BLUEPRINT), "compute")
    assert index.switch_port("c-leaf-su1-r0", "swp20s1") == "40"
    assert index.switch_port("c-leaf-su1-r0", "swp20s2") is None  # a cage of two has no third sub-port
    assert index.switch_port("c-leaf-su1-r0", "swp65s0") is None  # 64 cages (128 logical ports)
    code, out, report = _verify(discovered(tmp_path, "ufm"))
    assert code == 1 and "c-leaf-su1-r0 port 40 [P20/2]" in out, out
    code, out, report = _verify(discovered(tmp_path, "ufm"), "--accept", str(_accept(tmp_path, 40)))
    assert code == 0, out
    (acked,) = [r for r in report["results"] if r["status"] == "unexpected"]
    assert acked["accepted"] == "UFM appliance"


@pytest.mark.parametrize("port", ["swp20s1", "40"])
def test_the_accept_file_names_an_ethernet_port_by_its_interface(tmp_path: Path, port: str) -> None:
    code, out, _ = _verify(discovered(tmp_path, "ufm"), "--accept", str(_accept(tmp_path, port)))
    assert code == 0, out


def test_an_interface_the_switch_cannot_have_is_refused_at_its_line(tmp_path: Path) -> None:
    code, out, _ = _verify(discovered(tmp_path, "ufm"), "--accept", str(_accept(tmp_path, "swp20s2")))
    assert code == 2 and "accept.yaml" in out and "there is no port swp20s2" in out, out


def test_a_host_port_on_the_wrong_switch_is_never_said_not_connected(tmp_path: Path) -> None:
    """gpu001's and gpu005's rail-0 cables are crossed between two leaves; their hosts publish no interface
    names, so ens0np0 is tied to no plan port from either side: where it was seen is named."""
    code, out, report = _verify(discovered(tmp_path, "xsw"))
    assert code == 1, out
    assert "is not connected" not in out
    assert "gpu001 mlx5_0/1 was not seen under its plan name" in out
    assert "gpu001 ens0np0 goes to c-leaf-su2-r0 port 1 [P01/1]" in out
    assert [(r["status"], r["cable"]) for r in report["results"]] == [
        ("miswired", "C-NL-000001"),
        ("miswired", "C-NL-000009"),
    ]


def test_a_second_lldp_agent_on_a_matched_port_is_a_warning(tmp_path: Path) -> None:
    """The leaf's port 1 hears gpu001's lldpd and an agent with only a chassis MAC (a NIC's firmware): the
    cable matched, the fabric matches, and the extra agent is named in a warning."""
    code, out, report = _verify(discovered(tmp_path, "2agents"))
    assert code == 0, out
    assert report["unidentified"] == [] and "node description" not in out
    (agent,) = [w for w in report["warnings"] if "second LLDP neighbour" in w]
    assert agent.startswith(
        "c-leaf-su1-r0 port 1 [P01/1]: a second LLDP neighbour, unidentified LLDP chassis id"
    )
    assert "C-NL-000001" in agent


def test_an_unplanned_device_gets_an_lldp_hint(tmp_path: Path) -> None:
    code, out, _ = _verify(discovered(tmp_path, "ufm"))
    assert code == 1 and "lldpcli configure system hostname" in out and "--node-name-map" not in out, out
