"""Hosts on their leaves (issues 26, 27): the generated host fabric addresses, gateways and routes placed in
namespaces on their leaves, and pinged across leaves of each rail through FRR running the generated leaves.

roce-rail-2tier as shipped has no host fabric addresses (its platform's port map names no interface), so the
tests give its GPU pool declared ports (``pools[].ports``, docs/ports.md) and let ``generate`` write the
addresses: the inventory and the switch configuration come from the one address plan, as on a real site.
"""

from __future__ import annotations

import csv
import io
import ipaddress
import re
import shutil
from pathlib import Path

import pytest
import yaml
from rehearse_fixtures import REPO, failed, generate, need_tools, rehearse

from generator.rehearse import tools
from generator.rehearse.build_input import read_build
from generator.rehearse.hosts import (
    PING_PACKAGE,
    HostPort,
    host_addresses,
    host_ports,
    host_routing,
    routing_problems,
    sampled,
)

HOST_TOOLS = {**tools.ETHERNET_TOOLS, "ping": PING_PACKAGE}


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate(REPO / "examples" / "roce-rail-2tier.yaml", tmp_path_factory.mktemp("hosts") / "build")


@pytest.fixture(scope="module")
def named(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """roce-rail-2tier with its GPU pool's eight compute ports named eth0..eth7 (mlx5_0..mlx5_7)."""
    doc = yaml.safe_load((REPO / "examples" / "roce-rail-2tier.yaml").read_text())
    gpu = next(p for p in doc["pools"] if p["name"] == "gpu")
    gpu["ports"] = [{"role": "compute", "rdma": f"mlx5_{r}", "netdev": f"eth{r}"} for r in range(8)]
    tmp = tmp_path_factory.mktemp("named")
    (tmp / "roce-named.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return generate(tmp / "roce-named.yaml", tmp / "build")


def test_the_shipped_build_has_no_host_addresses(shipped: Path) -> None:
    assert host_addresses(shipped) == {}


def test_generated_hosts_sit_on_a_31_with_their_leaf_port(named: Path) -> None:
    """The inventory's address, the leaf's port address and the gateway form one /31; the leaf announces it
    (independent arithmetic: rail r of compute_cidr 10.100.0.0/16 split in 8 is 10.100.32r.0/19)."""
    build = read_build(named)
    configs = build.switches["compute"]
    ports = host_ports(build, "compute", configs, host_addresses(named))
    assert len(ports) == 64 * 8
    routing = host_routing(named)
    for p in ports:
        host = ipaddress.ip_interface(p.address)
        gw = routing[(p.host, p.interface)].gateway
        rail_net = ipaddress.ip_network(f"10.100.{32 * int(p.rail)}.0/19")
        assert host.network.prefixlen == 31 and int(host.ip) % 2 == 0 and host.ip in rail_net
        assert gw == str(host.ip + 1)
        assert configs[p.leaf].addresses[p.leaf_if] == (f"{gw}/31",), (p, configs[p.leaf].addresses)
        assert str(host.network) in configs[p.leaf].networks
        assert routing[(p.host, p.interface)].routes == (str(rail_net), "10.100.0.0/16")
    first = next(p for p in ports if p.host == "gpu001" and p.rail == "0")
    assert (first.leaf, first.leaf_if, first.address) == ("c-leaf-su1-r0", "swp1s0", "10.100.0.10/31")
    assert routing_problems(ports, configs) == []


def test_a_leaf_without_its_host_networks_is_named(named: Path) -> None:
    build = read_build(named)
    configs = dict(build.switches["compute"])
    leaf = configs["c-leaf-su1-r0"]
    configs["c-leaf-su1-r0"] = type(leaf)(**{**leaf.__dict__, "networks": leaf.loopbacks})
    ports = [p for p in host_ports(build, "compute", configs, host_addresses(named)) if p.rail == "0"]
    bad = routing_problems(ports, configs)
    assert len(bad) == 32 and all(" on c-leaf-su1-r0 " in r for r in bad)


def test_sample_keeps_two_ports_of_two_leaves_per_rail() -> None:
    ports = [
        HostPort(f"h{i}", "eth0", f"10.0.0.{2 * i}/31", "0", f"leaf{i % 3}", f"swp{i}", f"C{i}")
        for i in range(9)
    ]
    ports += [HostPort("x", "eth1", "10.0.1.0/31", "1", "leafA", "swp1", "CX")]
    kept, note = sampled(ports)
    assert sorted(p.host for p in kept) == ["h0", "h1", "h3", "h4", "x"]
    assert "5 of 10 host ports" in note
    assert sampled(kept)[1] == ""


def _without_host_network(build: Path, dest: Path, leaf: str, network: str) -> Path:
    """A copy of ``build`` whose ``leaf`` no longer announces ``network`` (its BGP network statement)."""
    shutil.copytree(build, dest)
    conf = dest / "switches" / "compute" / leaf / "startup.yaml"
    text, n = re.subn(rf"^ +{re.escape(network)}: \{{\}}\n", "", conf.read_text(), flags=re.M)
    assert n == 1
    conf.write_text(text)
    return dest


def _host_of(build: Path, host: str, netdev: str) -> str:
    rows = csv.DictReader(io.StringIO((build / "cabling" / "cables.csv").read_text()))
    return next(r["b_device"] for r in rows if r["a_device"] == host and r["a_netdev"] == netdev)


@pytest.mark.realtools
def test_rehearse_pings_every_sampled_pair_across_leaves(named: Path) -> None:
    need_tools(HOST_TOOLS)
    code, report, err = rehearse(str(named), "--fabric", "compute", timeout_s=400)
    assert code == 0, (failed(report), err[-2000:])
    (fab,) = report["fabrics"]
    checks = {c["check"]: c for c in fab["checks"]}
    assert list(checks)[-2:] == ["host subnets routed", "host reachability"]
    # 8 rails x 2 leaves x 2 ports sampled; each port pings the 2 behind the other leaf of its rail
    assert checks["host reachability"]["detail"].startswith("64 pings "), checks["host reachability"]
    assert any("32 of 512 host ports" in n for n in fab["notes"])
    assert not any("not rehearsed yet" in n for n in fab["notes"])


@pytest.mark.realtools
def test_a_missing_host_network_statement_fails_precisely(named: Path, tmp_path: Path) -> None:
    """gpu001 eth0's /31 (10.100.0.10/31) removed from its leaf's BGP networks: the host check names it
    and the pings to and from gpu001 eth0 fail; every other pair and every switch check still holds."""
    need_tools(HOST_TOOLS)
    assert _host_of(named, "gpu001", "eth0") == "c-leaf-su1-r0"
    build = _without_host_network(named, tmp_path / "b", "c-leaf-su1-r0", "10.100.0.10/31")
    code, report, err = rehearse(str(build), "--fabric", "compute", timeout_s=400)
    assert code == 1, err[-2000:]
    bad = failed(report)
    assert sorted(bad) == ["host reachability", "host subnets routed"], bad
    (routed,) = bad["host subnets routed"]
    assert routed.startswith("gpu001 eth0 (10.100.0.10/31, rail 0) on c-leaf-su1-r0 swp1s0 (C-NL-000001)")
    assert len(bad["host reachability"]) == 4, bad["host reachability"]  # 2 peers x 2 directions
    assert all("gpu001 eth0 (10.100.0.10/31" in r for r in bad["host reachability"])
