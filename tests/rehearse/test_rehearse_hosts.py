"""Hosts on their leaves (issue 27): the generated host fabric addresses against what the leaves route.

roce-rail-2tier as shipped has no host fabric addresses (its platform's port map names no interface), so a
build is given some the way `generate` writes them for an on-prem target with named ports
(``cb_fabric_addresses`` in ansible/inventory.yml, the interface in cables.csv's ``a_netdev``)."""

from __future__ import annotations

import csv
import io
import re
import shutil
from pathlib import Path

import pytest
from rehearse_fixtures import REPO, failed, generate, need_tools, rehearse

from generator.rehearse import tools
from generator.rehearse.build_input import read_build
from generator.rehearse.hosts import HostPort, check_hosts, host_addresses, host_ports, sampled
from generator.rehearse.verdict import FabricVerdict

HOSTS = ("gpu001", "gpu002", "gpu033")  # two on the su1 leaves, one on the su2 leaves: every rail crosses


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate(REPO / "examples" / "roce-rail-2tier.yaml", tmp_path_factory.mktemp("hosts") / "build")


def _address(host: str, rail: int) -> str:
    return f"10.100.{rail}.{9 + int(host[3:])}/24"


def with_addresses(build: Path, dest: Path) -> Path:
    """A copy of ``build`` whose inventory and cables carry host fabric addresses for ``HOSTS``."""
    shutil.copytree(build, dest)
    inv = dest / "ansible" / "inventory.yml"
    text = inv.read_text()
    for host in HOSTS:
        block = "".join(f'            eth{r}: "{_address(host, r)}"\n' for r in range(8))
        text, n = re.subn(
            rf"^(        {host}:\n)", rf"\1          cb_fabric_addresses:\n{block}", text, flags=re.M
        )
        assert n == 1, host
    inv.write_text(text)
    path = dest / "cabling" / "cables.csv"
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    for row in rows:
        if row["fabric"] == "compute" and row["a_device"] in HOSTS:
            row["a_netdev"] = f"eth{row['rail']}"
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    path.write_text(out.getvalue())
    return dest


def test_the_shipped_build_has_no_host_addresses_and_says_so(shipped: Path) -> None:
    assert host_addresses(shipped) == {}
    build = read_build(shipped)
    verdict = FabricVerdict("compute", "ethernet", "")
    check_hosts(build, "compute", build.switches["compute"], verdict)
    assert verdict.checks == []
    assert any("no host fabric addresses" in n for n in verdict.notes)


def test_generated_leaves_do_not_route_host_subnets(shipped: Path, tmp_path: Path) -> None:
    build = read_build(with_addresses(shipped, tmp_path / "b"))
    ports = host_ports(build, "compute", build.switches["compute"], host_addresses(build.root))
    assert len(ports) == 3 * 8
    first = next(p for p in ports if p.host == "gpu001" and p.rail == "0")
    assert (first.leaf, first.leaf_if, first.address) == ("c-leaf-su1-r0", "swp1s0", "10.100.0.10/24")
    verdict = FabricVerdict("compute", "ethernet", "")
    check_hosts(build, "compute", build.switches["compute"], verdict)
    (check,) = verdict.checks
    assert not check.ok and len(check.reasons) == 24
    assert (
        "gpu001 eth0 (10.100.0.10/24, rail 0) on c-leaf-su1-r0 swp1s0 (C-NL-000001): c-leaf-su1-r0 announces "
        "only 10.254.0.1/32" in check.reasons[0]
    ), check.reasons[0]


def test_a_leaf_announcing_the_host_subnet_passes(shipped: Path, tmp_path: Path) -> None:
    root = with_addresses(shipped, tmp_path / "b")
    for leaf in (p for p in (root / "switches" / "compute").iterdir() if "-leaf-" in p.name):
        rail = int(leaf.name.rsplit("-r", 1)[1])
        conf = leaf / "startup.yaml"
        text, n = re.subn(
            r"^( +)network:\n", rf"\g<0>\g<1>  10.100.{rail}.0/24: {{}}\n", conf.read_text(), flags=re.M
        )
        assert n == 1
        conf.write_text(text)
    build = read_build(root)
    verdict = FabricVerdict("compute", "ethernet", "")
    check_hosts(build, "compute", build.switches["compute"], verdict)
    (check,) = verdict.checks
    assert check.ok, check.reasons


def test_sample_keeps_two_leaves_per_rail() -> None:
    ports = [
        HostPort(f"h{i}", "eth0", f"10.0.0.{i}/24", "0", f"leaf{i % 3}", "swp1", f"C{i}") for i in range(6)
    ]
    ports += [HostPort("x", "eth1", "10.0.1.1/24", "1", "leafA", "swp1", "CX")]
    kept, note = sampled(ports)
    assert {p.leaf for p in kept} == {"leaf0", "leaf1", "leafA"} and len(kept) == 5
    assert "5 of 7 host ports" in note
    assert sampled(kept)[1] == ""


def test_rehearse_reports_the_finding(shipped: Path, tmp_path: Path) -> None:
    """The command: switches converge, then the host check fails with the leaf port, exit 1."""
    need_tools(tools.ETHERNET_TOOLS)
    code, report, err = rehearse(str(with_addresses(shipped, tmp_path / "b")), timeout_s=300)
    assert code == 1, err[-2000:]
    checks = {c["check"]: c for c in report["fabrics"][0]["checks"]}
    assert [c for c in checks if not checks[c]["ok"]] == ["host subnets routed"], failed(report)
    assert any("c-leaf-su1-r0 swp1s0" in r for r in checks["host subnets routed"]["reasons"])
