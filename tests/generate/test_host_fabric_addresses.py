"""Host-facing addresses of routed (BGP) Ethernet/RoCE fabrics (issue 26): one address plan for the hosts'
inventory and the leaves' configuration.

The expectations are computed here with ``ipaddress`` from the documented scheme (generator/deploy/
addresses.py, docs/switches.md "Host addresses"): ``compute_cidr`` split into one subnet per rail, host port
k (0-based, blueprint order) of a rail on ``rail + 10 + 2k``/31, its leaf port on the next address as the
gateway, the rail subnet and ``compute_cidr`` routed via it; the leaf writes the leaf end on the port the
cable plan lands the host on and announces the /31 in BGP.
"""

from __future__ import annotations

import csv
import io
import ipaddress
from pathlib import Path

import pytest
import yaml
from conftest import EXAMPLES, run_cli

from generator.deploy.address_plan import _split as cloud_split
from generator.deploy.addresses import onprem_plan, split

RAILS = 8
NODES = 64


def _blueprint(tmp: Path, switch_os: str | None = None, compute_cidr: str | None = None) -> Path:
    doc = yaml.safe_load((EXAMPLES / "roce-rail-2tier.yaml").read_text())
    gpu = next(p for p in doc["pools"] if p["name"] == "gpu")
    gpu["ports"] = [{"role": "compute", "rdma": f"mlx5_{r}", "netdev": f"eth{r}"} for r in range(RAILS)]
    if switch_os:
        doc["fabrics"]["compute"]["switch_os"] = switch_os
    if compute_cidr:
        doc["deployment"] = {"target": "maas", "maas": {"compute_cidr": compute_cidr}}
    path = tmp / "roce-named.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def _generate(tmp: Path, switch_os: str | None = None) -> Path:
    out = tmp / "build"
    code, _, err = run_cli("generate", str(_blueprint(tmp, switch_os)), "-o", str(out), "--quiet")
    assert code == 0, err
    return out


def _expected() -> dict[tuple[str, int], tuple[str, str]]:
    """(host, rail) -> (host address/31, gateway) by the documented arithmetic."""
    rails = list(ipaddress.ip_network("10.100.0.0/16").subnets(new_prefix=16 + 3))
    out = {}
    for k in range(NODES):
        for r in range(RAILS):
            host = rails[r].network_address + 10 + 2 * k
            out[(f"gpu{k + 1:03d}", r)] = (f"{host}/31", str(host + 1))
    return out


def _inventory(build: Path) -> dict[str, dict]:  # type: ignore[type-arg]
    doc = yaml.safe_load((build / "ansible" / "inventory.yml").read_text())
    return doc["all"]["children"]["pool_gpu"]["hosts"]


def _leaf_ports(build: Path) -> dict[tuple[str, str], tuple[str, int]]:
    """(leaf, leaf interface) -> (host, rail) from the cabling plan."""
    rows = csv.DictReader(io.StringIO((build / "cabling" / "cables.csv").read_text()))
    return {
        (r["b_device"], r["b_netdev"]): (r["a_device"], int(r["rail"]))
        for r in rows
        if r["fabric"] == "compute" and r["layer"] == "node_leaf"
    }


@pytest.fixture(scope="module")
def nvue_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _generate(tmp_path_factory.mktemp("nvue"))


def test_inventory_addresses_gateways_and_routes(nvue_build: Path) -> None:
    want = _expected()
    hosts = _inventory(nvue_build)
    for (host, rail), (address, gateway) in want.items():
        assert hosts[host]["cb_fabric_addresses"][f"eth{rail}"] == address
        assert hosts[host]["cb_fabric_gateways"][f"eth{rail}"] == gateway
    gv = yaml.safe_load(
        (nvue_build / "ansible" / "group_vars" / "pool_gpu.yml").read_text().replace("!unsafe ", "")
    )
    rails = list(ipaddress.ip_network("10.100.0.0/16").subnets(new_prefix=19))
    for nic in gv["host_fabric_interfaces"]:
        assert nic["routes"] == [str(rails[nic["rail"]]), "10.100.0.0/16"]


@pytest.mark.parametrize("release,key", [("5.14", "ip"), ("5.15", "ipv4")])
def test_nvue_leaf_ports_carry_the_gateway_and_bgp_announces_each_host_31(
    release: str, key: str, tmp_path: Path
) -> None:
    build = _generate(tmp_path, f"cumulus-linux@{release}")
    want = _expected()
    ports = _leaf_ports(build)
    leaves = {leaf for leaf, _ in ports}
    assert len(leaves) == 16 and len(ports) == NODES * RAILS
    for leaf in leaves:
        doc = yaml.safe_load((build / "switches" / "compute" / leaf / "startup.yaml").read_text())[0]["set"]
        mine = {ifname: hr for (sw, ifname), hr in ports.items() if sw == leaf}
        for ifname, hr in mine.items():
            assert doc["interface"][ifname][key]["address"] == {f"{want[hr][1]}/31": {}}
            assert ("ip" if key == "ipv4" else "ipv4") not in doc["interface"][ifname]
        nets = doc["vrf"]["default"]["router"]["bgp"]["address-family"]["ipv4-unicast"]["network"]
        hosts = {str(ipaddress.ip_interface(want[hr][0]).network) for hr in mine.values()}
        assert set(nets) == hosts | {f"{doc['router']['bgp']['router-id']}/32"}
    spine = yaml.safe_load((build / "switches" / "compute" / "c-spine-001" / "startup.yaml").read_text())[0]
    assert (
        len(spine["set"]["vrf"]["default"]["router"]["bgp"]["address-family"]["ipv4-unicast"]["network"]) == 1
    )


def test_frr_leaf_ports_and_network_statements(tmp_path: Path) -> None:
    build = _generate(tmp_path, "frr")
    want = _expected()
    ports = _leaf_ports(build)
    text = (build / "switches" / "compute" / "c-leaf-su2-r3" / "frr.conf").read_text()
    mine = {ifname: hr for (sw, ifname), hr in ports.items() if sw == "c-leaf-su2-r3"}
    assert len(mine) == 32
    for ifname, hr in mine.items():
        host, gateway = want[hr]
        assert f"\ninterface {ifname}\n description " in text
        block = text.split(f"\ninterface {ifname}\n", 1)[1].split("\nexit\n", 1)[0]
        assert f" ip address {gateway}/31" in block.splitlines()
        assert f"\n  network {ipaddress.ip_interface(host).network}\n" in text
    assert text.count("\n  network ") == 32 + 1  # the host /31s and the loopback


def test_a_compute_cidr_too_small_for_the_31s_is_dep010(tmp_path: Path) -> None:
    """64 hosts need 128 addresses per rail (+ the 10 left at the start): a /21 split in 8 gives /24s of 245
    usable, a /22 gives /25s of 117: refused by validate with the routed wording."""
    ok = _blueprint(tmp_path, compute_cidr="10.100.0.0/21")
    assert run_cli("validate", str(ok), "--quiet")[0] == 0
    small = _blueprint(tmp_path, compute_cidr="10.100.0.0/22")
    code, out, err = run_cli("validate", str(small), "--format", "json")
    assert code == 1, out + err
    assert "DEP010" in out and "holds 58 host ports of the routed fabric (a /31 each" in out, out
    assert run_cli("generate", str(small), "-o", str(tmp_path / "b"), "--quiet")[0] != 0


def test_one_splitter_for_both_address_plans() -> None:
    net = ipaddress.ip_network("10.8.0.0/16")
    assert split(net, 5) == list(net.subnets(new_prefix=19))[:5]
    assert cloud_split("10.8.0.0/16", 5) == split(net, 5)
    assert split(ipaddress.ip_network("10.8.0.0/29"), 2) is not None  # /30s: the longest allowed
    assert split(ipaddress.ip_network("10.8.0.0/30"), 2) is None  # /31s are not subnets of hosts


def test_the_plan_is_the_one_the_inventory_reads(nvue_build: Path) -> None:
    """The cached plan and a fresh one agree (the switch emitter and the inventory read the same object)."""
    from generator.pipeline import check

    checked = check(str(_blueprint(nvue_build.parent)))
    plan = onprem_plan(checked.cluster)
    row = next(a for a in plan.fabric["gpu003"] if a.rail == 5)
    assert (row.address, row.gateway, row.port) == _expected()[("gpu003", 5)] + ("mlx5_5/1",)
