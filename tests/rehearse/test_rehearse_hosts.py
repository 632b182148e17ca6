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
    HostRouting,
    HostSample,
    PlacedHost,
    check_reachability,
    expected_down,
    host_addresses,
    host_ports,
    host_routing,
    ping_plan,
    routing_problems,
    sampled,
)
from generator.rehearse.verdict import FabricVerdict

HOST_TOOLS = {**tools.ETHERNET_TOOLS, "ping": PING_PACKAGE}
STORAGE = REPO / "tests" / "rehearse" / "data" / "roce-rail-2tier-storage.yaml"
SWITCH_CHECKS = ["configuration", "bgp sessions", "reachability", "ecmp"]


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate(REPO / "examples" / "roce-rail-2tier.yaml", tmp_path_factory.mktemp("hosts") / "build")


@pytest.fixture(scope="module")
def storage(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The storage fabric of tests/rehearse/data (4 leaves, 2 spines; both pools' ports declared)."""
    return generate(STORAGE, tmp_path_factory.mktemp("storage") / "build")


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


def _without_host_network(build: Path, dest: Path, leaf: str, network: str, fabric: str = "compute") -> Path:
    """A copy of ``build`` whose ``leaf`` no longer announces ``network`` (its BGP network statement)."""
    shutil.copytree(build, dest)
    conf = dest / "switches" / fabric / leaf / "startup.yaml"
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


def _placed(host: str, rail: str, leaf: str) -> PlacedHost:
    port = HostPort(host, "eth0", "10.0.0.0/31", rail, leaf, "swp1", f"C-{host}")
    return PlacedHost(port, f"ns-{host}", HostRouting(None, ()))


def test_no_cross_leaf_pair_fails_with_the_reason_and_a_lonely_rail_is_noted() -> None:
    """No tool needed (issue 27): a rail whose sampled host ports sit behind one leaf gets a note; a fabric
    where no rail has a pair fails ``host reachability`` instead of passing with 0 pings."""
    lonely = [_placed("a", "0", "leaf1"), _placed("b", "0", "leaf1")]
    verdict = FabricVerdict("compute", "ethernet", "")
    sample = HostSample(lonely, [h.port for h in lonely])
    check_reachability(verdict, sample, set(), "")
    (check,) = verdict.checks
    assert (check.name, check.ok) == ("host reachability", False)
    want = ("rail 0: 2 sampled host ports, the live ones all behind leaf1 (the rehearsed switches have no "
            "other leaf on it): no cross-leaf pair to ping")  # fmt: skip
    assert check.reasons == [
        f"no pair of sampled host ports on one rail behind different leaves to ping: {want}"
    ]
    # a second rail with a pair: rail 0 is a note, the pairs of rail 1 are what is pinged
    paired = [*lonely, _placed("c", "1", "leaf2"), _placed("d", "1", "leaf3")]
    plan = ping_plan(paired, set())
    assert plan.lonely == [want] and plan.skipped == 0
    assert sorted((a.port.host, b.port.host) for a, b in plan.pairs) == [("c", "d"), ("d", "c")]


def test_a_failed_leaf_takes_its_pairs_out_of_the_plan_and_names_its_ports() -> None:
    placed = [_placed("a", "0", "leaf1"), _placed("b", "0", "leaf2"), _placed("c", "0", "leaf3")]
    plan = ping_plan(placed, {"leaf2"})
    assert sorted((a.port.host, b.port.host) for a, b in plan.pairs) == [("a", "c"), ("c", "a")]
    assert plan.skipped == 4 and plan.lonely == []
    behind = [h.port for h in placed] + [HostPort("z", "eth1", "10.0.0.8/31", "0", "leaf2", "swp9", "C-z")]
    assert expected_down(behind, {"leaf2"}) == [
        "2 host ports behind failed leaf2: b eth0 (C-b), z eth1 (C-z)"
    ]
    gone = ping_plan(placed[:2], {"leaf2"})
    assert gone.pairs == [] and gone.lonely == [
        "rail 0: 2 sampled host ports, the live ones all behind leaf1 (leaf2 failed): no cross-leaf pair to ping"
    ]


def test_a_failed_sampled_leaf_brings_in_the_rails_next_live_leaf() -> None:
    ports = [
        HostPort(f"h{i}", "eth0", f"10.0.0.{2 * i}/31", "0", f"leaf{i % 3}", f"swp{i}", f"C{i}")
        for i in range(9)
    ]
    kept, note = sampled(ports, {"leaf1"})
    assert sorted(p.host for p in kept) == ["h0", "h1", "h2", "h3", "h4", "h5"]
    assert "and of leaf2 (standing in for a sampled leaf --fail takes down)" in note
    assert sampled(ports, {"leaf2"}) == sampled(ports)  # an unsampled leaf failing changes nothing


def _behind(build: Path, leaf: str) -> list[str]:
    """Independent oracle: the host ports cabled to ``leaf`` in cables.csv, as ``host netdev (cable)``."""
    rows = csv.DictReader(io.StringIO((build / "cabling" / "cables.csv").read_text()))
    ends = [(r["a_device"], r["a_netdev"], r["cable_id"]) for r in rows
            if r["fabric"] == "storage" and r["layer"] == "node_leaf" and r["b_device"] == leaf]  # fmt: skip
    return [f"{h} {n} ({c})" for h, n, c in sorted(ends)]


@pytest.mark.realtools
def test_pings_after_a_spine_and_then_a_leaf_fail(storage: Path) -> None:
    """Issue 27, cumulative: s-spine-001 down, every cross-leaf pair still pings (ECMP over s-spine-002);
    then s-leaf-su1-01 down too: its 32 host ports are named expected down, their pairs not pinged, every
    other pair still pings, and s-leaf-su2-01 stands in for it in rail 0's sample."""
    need_tools(HOST_TOOLS)
    code, report, err = rehearse(str(storage), "--fabric", "storage", "--fail", "s-spine-001",
                                 "--fail", "s-leaf-su1-01", timeout_s=400)  # fmt: skip
    assert code == 0, (failed(report), err[-2000:])
    (fab,) = report["fabrics"]
    checks = {c["check"]: c for c in fab["checks"]}
    after = [f" (after --fail {d})" for d in ("s-spine-001", "s-leaf-su1-01")]
    assert list(checks) == [*SWITCH_CHECKS, "host subnets routed", "host reachability"] + [
        f"{c}{a}" for a in after for c in [*SWITCH_CHECKS[1:], "host reachability"]
    ]
    # rail 0: s-leaf-stor-01, s-leaf-su1-01 and its stand-in s-leaf-su2-01, 2 ports each: 6 x 4 ordered
    # cross-leaf pairs; rail 1: s-leaf-stor-02 and s-leaf-su1-02: 4 x 2
    assert checks["host reachability"]["detail"].startswith("32 pings "), checks["host reachability"]
    spine = checks["host reachability" + after[0]]["detail"]
    assert spine.startswith("32 pings ") and "expected down" not in spine, spine
    leaf = checks["host reachability" + after[1]]["detail"]
    assert leaf.startswith("16 pings ") and leaf.endswith(
        "; 32 host ports behind failed leaves expected down (named in the notes), 16 sampled pairs with such "
        "an end not pinged"
    ), leaf
    behind = _behind(storage, "s-leaf-su1-01")
    assert len(behind) == 32 and behind[0].startswith("gpu001 ens1f0 ")
    down = [n for n in fab["notes"] if "expected down" in n]
    assert down == [f"host reachability{after[1]}: expected down: 32 host ports behind failed s-leaf-su1-01: "
                    + ", ".join(behind)]  # fmt: skip
    assert any(
        "and of s-leaf-su2-01 (standing in for a sampled leaf --fail takes down)" in n for n in fab["notes"]
    )


@pytest.mark.realtools
def test_a_fault_on_a_leaf_that_stays_up_is_caught_after_a_leaf_fails(storage: Path, tmp_path: Path) -> None:
    """gpu001 ens1f1's /31 removed from s-leaf-su1-02 (rail 1), s-leaf-su1-01 (rail 0) failed: the pings to and
    from gpu001 ens1f1 fail with every device up and still after the failure; nothing else fails."""
    need_tools(HOST_TOOLS)
    rows = csv.DictReader(io.StringIO((storage / "cabling" / "cables.csv").read_text()))
    assert next(r["b_device"] for r in rows if r["a_device"] == "gpu001" and r["a_netdev"] == "ens1f1") == (
        "s-leaf-su1-02"
    )
    address = host_addresses(storage)["gpu001"]["ens1f1"]
    network = str(ipaddress.ip_interface(address).network)
    build = _without_host_network(storage, tmp_path / "b", "s-leaf-su1-02", network, "storage")
    code, report, err = rehearse(str(build), "--fabric", "storage", "--fail", "s-leaf-su1-01", timeout_s=400)
    assert code == 1, err[-2000:]
    bad = failed(report)
    after = "host reachability (after --fail s-leaf-su1-01)"
    assert sorted(bad) == ["host reachability", after, "host subnets routed"], bad
    for check in ("host reachability", after):  # 2 peers behind s-leaf-stor-02 x 2 directions
        assert len(bad[check]) == 4 and all(f"gpu001 ens1f1 ({address}" in r for r in bad[check]), bad[check]
