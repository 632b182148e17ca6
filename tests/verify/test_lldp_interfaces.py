"""LLDP interface names as real switches and hosts report them: a switch's management port ``eth0`` is no
cable of the plan, and a host port lldpd names by its MAC (its default) is read from the switch side."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from vfy_plans import HERE, plan_of, run_cli

from generator.emit import lldp as emitter
from generator.verify.identify import front_panel

ROCE = (
    HERE.parents[1] / "examples" / "roce-rail-2tier.yaml"
)  # its hosts publish no netdev: plan ports mlx5_0/1


def _files() -> dict[str, Any]:
    return {name: json.loads(text) for name, text in emitter.render_lldp(plan_of(ROCE), "compute").items()}


def _write(tmp_path: Path, files: dict[str, Any]) -> Path:
    for name, doc in files.items():
        (tmp_path / name).write_text(json.dumps(doc))
    return tmp_path


def _verify(path: Path) -> tuple[int, str, dict[str, Any]]:
    code, out, _ = run_cli("verify-cabling", str(ROCE), "--discovered", str(path))
    _, js, _ = run_cli("verify-cabling", str(ROCE), "--discovered", str(path), "--format", "json")
    return code, out, json.loads(js)


def _entry(doc: dict[str, Any], ifname: str) -> dict[str, Any]:
    return next(item[ifname] for item in doc["lldp"]["interface"] if ifname in item)


@pytest.mark.parametrize(
    ("name", "panel"),
    [
        ("swp1", True),
        ("swp9s1", True),
        ("swp9s0", True),
        ("Ethernet8", False),  # SONiC: a lane number, refused by verify-cabling (below)
        ("Eth1/17", True),
        ("eth0", False),
        ("mgmt0", False),
        ("lo", False),
        ("bond0", False),
        ("vlan10", False),
        ("Eth1/17/2", False),
        ("swp0", False),
        ("Ethernet0", False),
        ("swp1\n", False),
        ("swp" + "9" * 5000, False),  # no int() of 5,000 digits (Python refuses past 4,300)
    ],
)
def test_only_front_panel_names_are_switch_ports(name: str, panel: bool) -> None:
    assert front_panel(name) is panel


def test_a_switchs_management_port_is_no_cable_and_is_said_once(tmp_path: Path) -> None:
    """Cumulus Linux reports the out-of-band switch on eth0 (NVIDIA NVUE reference, `nv show interface
    lldp`: "eth0 1G eth oob-mgmt-switch swp10"); it is not front-panel port 0 of the leaf."""
    files = _files()
    oob = {"chassis": {"oob-mgmt-switch": {}}, "port": {"id": {"type": "ifname", "value": "swp10"}}}
    files["c-leaf-su1-r0.json"]["lldp"]["interface"].insert(0, {"eth0": oob})
    files["c-leaf-su1-r0.json"]["lldp"]["interface"].insert(1, {"bond0": oob})
    code, out, report = _verify(_write(tmp_path, files))
    assert code == 0, out
    assert "port 0" not in out and report["matches"] is True
    (note,) = [w for w in report["warnings"] if w.startswith("c-leaf-su1-r0:")]  # one per switch
    assert "eth0 (oob-mgmt-switch swp10)" in note and "bond0 (oob-mgmt-switch swp10)" in note
    assert "not front-panel ports" in note


def test_a_remote_switch_port_that_is_no_front_panel_port_keeps_its_name(tmp_path: Path) -> None:
    files = _files()
    _entry(files["c-spine-001.json"], "swp1s0")["port"] = {"id": {"type": "ifname", "value": "eth0"}}
    code, out, _ = _verify(_write(tmp_path, files))
    assert code == 1 and "c-leaf-su1-r0 port eth0" in out, out


def _lldpd_default(files: dict[str, Any]) -> None:
    """Every host port as lldpd sends it by default (lldpcli(8), `configure lldp portidsubtype`): its MAC as
    port id, its interface name as description."""
    for name, doc in files.items():
        if name.startswith("c-leaf"):
            for item in doc["lldp"]["interface"]:
                for body in item.values():
                    if "gpu" in next(iter(body["chassis"])):
                        body["port"] = {
                            "id": {"type": "mac", "value": "b8:3f:d2:00:00:00"},
                            "descr": "ens0f0np0",
                        }


def test_lldpd_default_host_ports_are_matched_from_the_switch_side(tmp_path: Path) -> None:
    files = _files()
    _lldpd_default(files)
    code, out, report = _verify(_write(tmp_path, files))
    assert code == 0, out
    hosts = [w for w in report["warnings"] if "matched from the switch side" in w]
    assert len(hosts) == 64 and any(w.startswith("gpu001: LLDP port name 'ens0f0np0'") for w in hosts)


def test_lldpd_default_still_reports_swaps(tmp_path: Path) -> None:
    files = _files()
    _lldpd_default(files)
    leaf = files["c-leaf-su1-r0.json"]
    one, two = _entry(leaf, "swp1s0"), _entry(leaf, "swp1s1")
    one["chassis"], two["chassis"] = two["chassis"], one["chassis"]  # two hosts' cables crossed
    # a name the plan does give gpu003 (its rail-1 port), reported on its rail-0 switch port: a swap
    _entry(leaf, "swp2s0")["port"] = {
        "id": {"type": "mac", "value": "b8:3f:d2:00:00:01"},
        "descr": "mlx5_1/1",
    }
    code, out, report = _verify(_write(tmp_path, files))
    assert code == 1
    # gpu001's and gpu002's rail-0 cables; gpu003's rail-0 cable (its rail-1 port is where it should be too)
    assert report["summary"]["miswired"] == 3, out
    assert "c-leaf-su1-r0 port 1 [P01/1] goes to gpu002 ens0f0np0, plan says gpu001 mlx5_0/1" in out
    assert "c-leaf-su1-r0 port 3 [P02/1] goes to gpu003 mlx5_1/1, plan says gpu003 mlx5_0/1" in out


def test_a_hosts_own_lldp_file_is_read_from_the_switch_side_too(tmp_path: Path) -> None:
    files = _files()
    leaf = files["c-leaf-su1-r0.json"]["lldp"]["interface"]
    leaf[:] = [item for item in leaf if "swp1s0" not in item]  # only gpu001's own file sees this cable
    files["gpu001.json"] = {
        "lldp": {
            "interface": {
                "enp24s0np0": {
                    "chassis": {"c-leaf-su1-r0": {}},
                    "port": {"id": {"type": "ifname", "value": "swp1s0"}, "descr": "swp1s0"},
                }
            }
        }
    }
    code, out, report = _verify(_write(tmp_path, files))
    assert code == 0, out
    assert any(w.startswith("gpu001: LLDP port name 'enp24s0np0'") for w in report["warnings"])


@pytest.mark.parametrize("where", ["switch", "host"])
def test_sonic_lane_numbered_ports_are_refused_not_misread(tmp_path: Path, where: str) -> None:
    """SONiC's Ethernet<N> is the port's first SerDes lane (sonic-buildimage ACS-MSN2700 port_config.ini:
    Ethernet0 = etp1, Ethernet4 = etp2): read as port N, a correct cabling was reported all miswired."""
    files = _files()
    if where == "switch":
        doc = files["c-leaf-su1-r0.json"]["lldp"]["interface"]
        doc[0] = {"Ethernet0": next(iter(doc[0].values()))}
    else:  # a host's view of its SONiC leaf
        files["gpu001.json"] = {
            "lldp": {
                "interface": {
                    "eth1": {
                        "chassis": {"c-leaf-su1-r0": {}},
                        "port": {"id": {"type": "ifname", "value": "Ethernet0"}},
                    }
                }
            }
        }
    code, _, err = run_cli("verify-cabling", str(ROCE), "--discovered", str(_write(tmp_path, files)))
    assert code == 2, err
    assert "names a SONiC port (Ethernet<N>)" in err
    assert (
        "c-leaf-su1-r0.json interface Ethernet0" if where == "switch" else "gpu001.json interface eth1"
    ) in err


def test_an_out_of_band_switch_with_ethernet_ports_is_still_left_out(tmp_path: Path) -> None:
    """The SONiC refusal is for the plan's switches: an Arista or SONiC out-of-band switch a leaf sees on
    eth0 (its port Ethernet10) is no cable of the plan and stays a note, as any off-panel neighbour."""
    files = _files()
    oob = {"chassis": {"oob-mgmt-switch": {}}, "port": {"id": {"type": "ifname", "value": "Ethernet10"}}}
    files["c-leaf-su1-r0.json"]["lldp"]["interface"].insert(0, {"eth0": oob})
    code, out, report = _verify(_write(tmp_path, files))
    assert code == 0, out
    assert any("oob-mgmt-switch Ethernet10" in w for w in report["warnings"])
