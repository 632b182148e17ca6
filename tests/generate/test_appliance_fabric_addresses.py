"""An appliance cabled to a routed (BGP) RoCE fabric gets a /31 with its leaf port as a host port does
(generator/deploy/addresses.py): the leaf port carries the leaf end and BGP announces the /31, and the
appliance inventory gives the appliance end, gateway and routes. It used to be a routed leaf port with no
address and no network statement: nothing could reach the appliance over the fabric."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import run_cli

BLUEPRINT = """\
apiVersion: cluster-blueprint/v1
name: site-m
site: {name: dc1, rows: 1, racks_per_row: 8, rack: {units: 48, power_kw: 44}}
pools:
  - name: gpu
    role: gpu
    count: 4
    server: hgx-h200
    placement: {nodes_per_rack: 4}
    ports:
      - {role: compute, rdma: mlx5_0, netdev: eth0}
      - {role: compute, rdma: mlx5_1, netdev: eth1}
      - {role: compute, rdma: mlx5_2, netdev: eth2}
      - {role: compute, rdma: mlx5_3, netdev: eth3}
      - {role: compute, rdma: mlx5_4, netdev: eth4}
      - {role: compute, rdma: mlx5_5, netdev: eth5}
      - {role: compute, rdma: mlx5_6, netdev: eth6}
      - {role: compute, rdma: mlx5_7, netdev: eth7}
  - {name: head, role: management, count: 1, server: cpu-1u}
fabrics:
  compute:
    technology: roce-v2-400
    topology:
      kind: fat-tree
      tiers: 2
      switch: sn5600
      scalable_unit: 4
      names: {leaf: {template: "R{rail}"}, spine: {names: [S1]}}
    lossless: {pfc: true, pfc_priority: 3, ecn: true, dscp: 26, trust: dscp}
appliances:
  - {name: spare01, links: [{switch: R1, port: 100}, {switch: R2, port: 100}], rack_units: 2, power_w: 900}
  - {name: r2x, links: [{switch: R3, port: 101}], rack_units: 2, power_w: 900}
software: {os: ubuntu-24.04, driver_branch: "570", cuda: "12.8", nccl: "2.25.1", ofed: {kind: doca, version: "2.9.1"}}
"""
CABLES = {("spare01", "p1"): "R1", ("spare01", "p2"): "R2", ("r2x", "p1"): "R3"}


def _generate(
    tmp: Path, switch_os: str | None = None, compute_cidr: str | None = None, extra: list[Any] | None = None
) -> tuple[int, str, Path]:
    doc = yaml.safe_load(BLUEPRINT)
    if extra:
        doc["appliances"].append({"name": "big", "links": extra, "rack_units": 1, "power_w": 100})
    if switch_os:
        doc["fabrics"]["compute"]["switch_os"] = switch_os
    if compute_cidr:
        doc["deployment"] = {"target": "maas", "maas": {"compute_cidr": compute_cidr}}
    tmp.mkdir(exist_ok=True)
    bp = tmp / "bp.yaml"
    bp.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    out = tmp / "build"
    code, stdout, err = run_cli("generate", str(bp), "-o", str(out), "--quiet")
    return code, stdout + err, out


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    code, text, out = _generate(tmp_path_factory.mktemp("app"))
    assert code == 0, text
    return out


def _appliances(build: Path) -> dict[str, Any]:
    doc = yaml.safe_load((build / "ansible" / "appliances.yml").read_text())
    hosts: dict[str, Any] = doc["all"]["children"]["appliances"]["children"]["appliance_host"]["hosts"]
    return hosts


def _nvue_port(build: Path, leaf: str, peer: str) -> tuple[dict[str, Any], list[str]]:
    """The leaf's interface whose description names ``peer`` (`... to spare01 p1`), and its BGP networks."""
    doc = yaml.safe_load((build / "switches" / "compute" / leaf / "startup.yaml").read_text())
    setv = next(d["set"] for d in doc if "set" in d)
    port = next(
        i for i in setv["interface"].values() if str(i.get("description", "")).endswith(f" to {peer}")
    )
    family = setv["vrf"]["default"]["router"]["bgp"]["address-family"]["ipv4-unicast"]
    return port, list(family.get("network", {}))


def test_appliance_ports_on_a_routed_leaf_get_a_31_announced_in_bgp(build: Path) -> None:
    inv = _appliances(build)
    hosts = yaml.safe_load((build / "ansible" / "inventory.yml").read_text())
    taken = {
        ipaddress.ip_interface(a).ip
        for hv in hosts["all"]["children"]["pool_gpu"]["hosts"].values()
        for a in hv["cb_fabric_addresses"].values()
    }
    for (name, port), leaf in CABLES.items():
        own = ipaddress.ip_interface(inv[name]["cb_fabric_addresses"][port])
        gateway = ipaddress.ip_address(inv[name]["cb_fabric_gateways"][port])
        assert own.network.prefixlen == 31 and own.ip == own.network.network_address, own
        assert gateway == own.ip + 1
        assert own.ip not in taken and gateway not in taken  # after the hosts' /31s, none shared
        assert "10.100.0.0/16" in inv[name]["cb_fabric_routes"][port]
        iface, networks = _nvue_port(build, leaf, f"{name} {port}")
        assert list(iface["ipv4"]["address"]) == [f"{gateway}/31"], iface
        assert str(own.network) in networks, networks


def test_frr_leaf_addresses_and_announces_the_appliance_port(tmp_path: Path) -> None:
    code, text, out = _generate(tmp_path, switch_os="frr")
    assert code == 0, text
    inv = _appliances(out)
    own = ipaddress.ip_interface(inv["spare01"]["cb_fabric_addresses"]["p1"])
    conf = (out / "switches" / "compute" / "R1" / "frr.conf").read_text()
    assert f" ip address {own.ip + 1}/31" in conf, conf
    assert f"network {own.network}" in conf, conf


def test_appliance_31s_count_in_the_compute_block(tmp_path: Path) -> None:
    """compute_cidr 10.100.0.0/24 in 8 rails of /27: (32 - 1 - 10) // 2 = 10 routed ports each. The 4 hosts
    and the 3 appliance cables fit; 7 more cables do not (4 + 10 > 10): DEP010, not addresses past the rail
    subnet's end."""
    code, text, _ = _generate(tmp_path / "fits", compute_cidr="10.100.0.0/24")
    assert code == 0, text
    more = [{"switch": "R4", "port": 100 + k} for k in range(7)]
    code, text, _ = _generate(tmp_path / "full", compute_cidr="10.100.0.0/24", extra=more)
    assert code == 1, text
    assert "DEP010" in text and "holds 10 host ports of the routed fabric" in text and "14 needed" in text, (
        text
    )
