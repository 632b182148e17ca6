"""A routed storage fabric beside the routed compute fabric (issue 26): the full roce-rail-2tier plus a
leaf-spine RoCE storage fabric of SN5600 (tests/rehearse/data/roce-rail-2tier-storage.yaml: 4 storage
servers, the GPU servers' two storage ports, both pools' ports declared so the build has host addresses),
every fabric brought up in Debian's FRR by ``blueprint rehearse``.

Oracles independent of the rehearsal: the cable counts of ``cabling/cables.csv``, the ASN/loopback plan of
``switches/asn-plan.csv`` read here with ``csv``, the kernel's neighbour thresholds read from /proc before
and after, and the namespaces/processes left (``rehearse_fixtures.rehearse``)."""

from __future__ import annotations

import csv
import ipaddress
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
from rehearse_fixtures import REPO, failed, generate, need_tools, rehearse

from generator.rehearse import sample, tools
from generator.rehearse.hosts import PING_PACKAGE, HostPort, sampled

pytestmark = [pytest.mark.realtools]

BLUEPRINT = REPO / "tests" / "rehearse" / "data" / "roce-rail-2tier-storage.yaml"
HOST_TOOLS = {**tools.ETHERNET_TOOLS, "ping": PING_PACKAGE}
THRESHOLDS = [f"net.{f}.neigh.default.gc_thresh{n}" for f in ("ipv6", "ipv4") for n in (2, 3)]
SWITCH_CHECKS = ["configuration", "bgp sessions", "reachability", "ecmp"]
HOST_CHECKS = ["host subnets routed", "host reachability"]


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    need_tools(HOST_TOOLS)
    return generate(BLUEPRINT, tmp_path_factory.mktemp("storage") / "build")


def _plan(build: Path) -> list[dict[str, str]]:
    with (build / "switches" / "asn-plan.csv").open(newline="") as f:
        return list(csv.DictReader(f))


def _cables(build: Path, fabric: str, layer: str) -> int:
    with (build / "cabling" / "cables.csv").open(newline="") as f:
        return sum(1 for r in csv.DictReader(f) if r["fabric"] == fabric and r["layer"] == layer)


def _sysctl(key: str) -> str:
    return Path("/proc/sys", *key.split(".")).read_text().strip()


def test_loopbacks_and_asns_are_one_plan_for_both_fabrics(build: Path) -> None:
    """One site plan (docs/switches.md): no loopback twice, no ASN shared between compute and storage;
    within a fabric every leaf its own ASN, the spines of a 2-tier fabric one."""
    plan = _plan(build)
    by_fabric: dict[str, list[dict[str, str]]] = {}
    for row in plan:
        by_fabric.setdefault(row["fabric"], []).append(row)
    assert {"compute", "storage"} <= set(by_fabric)
    assert len(by_fabric["storage"]) == 8 and len(by_fabric["compute"]) == 20
    loopbacks = Counter(ipaddress.ip_address(r["loopback"]) for r in plan)
    assert [ip for ip, n in loopbacks.items() if n > 1] == []
    asns = {f: {int(r["asn"]) for r in rows} for f, rows in by_fabric.items()}
    assert asns["compute"].isdisjoint(asns["storage"])
    for rows in by_fabric.values():
        leaves = [int(r["asn"]) for r in rows if r["role"] == "leaf"]
        assert len(leaves) == len(set(leaves))
        assert len({r["asn"] for r in rows if r["role"] == "spine"}) == 1
    # every storage switch's configuration carries its planned ASN and router id (what rehearse compares)
    for row in by_fabric["storage"]:
        text = (build / "switches" / "storage" / row["switch"] / "startup.yaml").read_text()
        assert re.findall(r"autonomous-system: (\d+)", text) == [row["asn"]]
        assert re.findall(r"router-id: (\S+)", text) == [row["loopback"]]


def test_compute_and_storage_pass_also_with_a_storage_spine_down(build: Path) -> None:
    """Both routed fabrics (and management) in one run: every session Established, every leaf reaches every
    switch's networks with the planned ECMP, hosts ping across leaves; with s-spine-001 down the storage
    leaves still reach everything through s-spine-002. Thresholds back, nothing left behind."""
    before = {k: _sysctl(k) for k in THRESHOLDS}
    code, report, err = rehearse(str(build), "--fail", "s-spine-001")
    assert code == 0, (failed(report), err[-2000:])
    assert {k: _sysctl(k) for k in THRESHOLDS} == before
    assert report["kernel_limits_restored"] is True
    fabrics = {f["fabric"]: f for f in report["fabrics"]}
    assert set(fabrics) == {"compute", "storage", "management"}
    compute, storage = fabrics["compute"], fabrics["storage"]
    n_compute, n_storage = _cables(build, "compute", "leaf_spine"), _cables(build, "storage", "leaf_spine")
    assert (n_compute, n_storage) == (512, 192)
    assert compute["size"] == f"20 switches, {n_compute} switch-to-switch cables"
    assert storage["size"] == f"8 switches, {n_storage} switch-to-switch cables"
    assert [c["check"] for c in compute["checks"]] == SWITCH_CHECKS + HOST_CHECKS
    assert [c["check"] for c in storage["checks"]] == SWITCH_CHECKS + HOST_CHECKS + [
        f"{n} (after --fail s-spine-001)" for n in [*SWITCH_CHECKS[1:], "host reachability"]
    ]
    assert all(c["ok"] for f in fabrics.values() for c in f["checks"])
    # the raised thresholds cover the larger fabric (fabrics run one after another): 2 x 512 ends
    keys = {c["key"]: c for c in report["kernel_limits"]}
    assert keys["net.ipv6.neigh.default.gc_thresh3"]["during"] >= 2 * 2 * n_compute
    assert keys["net.ipv6.neigh.default.gc_thresh2"]["during"] >= 2 * n_compute
    assert {k: str(keys[k]["before"]) for k in keys} == {k: before[k] for k in keys}
    # hosts of the storage fabric: storage servers on s-leaf-stor-0N, GPU storage ports on s-leaf-su1-0N
    pings = {f: next(c["detail"] for c in fabrics[f]["checks"] if c["check"] == "host reachability")
             for f in ("compute", "storage")}  # fmt: skip
    assert pings["compute"].startswith("64 pings ") and pings["storage"].startswith("16 pings "), pings
    assert any("of each of 2 rails (8 of 136 host ports)" in n for n in storage["notes"]), storage["notes"]
    print(f"\nmeasured: {report['seconds']:.1f} s; converge compute {compute['converge_seconds']}, "
          f"storage {storage['converge_seconds']}")  # fmt: skip


def test_wrong_asn_in_a_storage_switch_is_named(build: Path, tmp_path: Path) -> None:
    """A storage leaf edited to a compute leaf's ASN (a cross-fabric collision): the configuration check
    names the switch, file and both values; BGP (remote-as external) still converges, so nothing else fails."""
    plan = {r["switch"]: r for r in _plan(build)}
    edited = tmp_path / "edited"
    shutil.copytree(build, edited)
    conf = edited / "switches" / "storage" / "s-leaf-su1-01" / "startup.yaml"
    planned, taken = plan["s-leaf-su1-01"]["asn"], plan["c-leaf-su1-r0"]["asn"]
    text = conf.read_text()
    assert text.count(f"autonomous-system: {planned}") == 1
    conf.write_text(text.replace(f"autonomous-system: {planned}", f"autonomous-system: {taken}"))
    before = {k: _sysctl(k) for k in THRESHOLDS}
    code, report, err = rehearse(str(edited), "--fabric", "storage", "--timeout", "120")  # converged: no wait
    assert code == 1, err[-2000:]
    assert failed(report) == {
        "configuration": [f"s-leaf-su1-01: startup.yaml has ASN {taken}, switches/asn-plan.csv {planned}"]
    }
    assert {k: _sysctl(k) for k in THRESHOLDS} == before


def test_sampled_storage_fabric_keeps_the_storage_servers_leaves(build: Path) -> None:
    """Sampled (--sample always), the storage fabric keeps su1's leaves and the storage servers' leaves
    (outside every unit) with both spines, and the host pings cross from GPU nodes to storage servers."""
    code, report, err = rehearse(str(build), "--fabric", "storage", "--sample", "always")
    assert code == 0, (failed(report), err[-2000:])
    (fab,) = report["fabrics"]
    assert fab["notes"][0] == (
        "sampled: scalable unit su1 of 2 (2 leaves) and the 2 leaves outside scalable units "
        "(s-leaf-stor-01, s-leaf-stor-02) with the 2 spines they are cabled to"
    )
    checks = {c["check"]: c for c in fab["checks"]}
    assert list(checks) == SWITCH_CHECKS + HOST_CHECKS and all(c["ok"] for c in checks.values())
    assert checks["reachability"]["detail"].startswith("4 source switches ")
    assert checks["host reachability"]["detail"].startswith("16 pings "), checks["host reachability"]


def test_sample_and_host_sample_take_storage_leaves_whatever_their_name() -> None:
    """No tool needed: a storage pool named so that its leaves sort after the units' (s-leaf-vast-NN) is
    still in the fabric sample and first in each rail's host sample."""
    leaves = ["s-leaf-su1-01", "s-leaf-su2-01", "s-leaf-vast-01"]
    edges = [(leaf, spine) for leaf in leaves for spine in ("s-spine-001", "s-spine-002")]
    keep, _ = sample.scalable_unit([*leaves, "s-spine-001", "s-spine-002"], edges) or (set(), "")
    assert keep == {"s-leaf-su1-01", "s-leaf-vast-01", "s-spine-001", "s-spine-002"}
    ports = [HostPort(f"{leaf[7:11]}{n}", "eth0", f"10.0.{i}.{2 * n}/31", "0", leaf, f"swp{n}", "")
             for i, leaf in enumerate(leaves) for n in (1, 2, 3)]  # fmt: skip
    out, _ = sampled(ports)
    assert {p.leaf for p in out} == {"s-leaf-su1-01", "s-leaf-vast-01"} and len(out) == 4
