"""`blueprint rehearse` on Ethernet/RoCE builds: Debian's FRR in namespaces from the generated NVUE
configuration. The shipped example passes (also with a spine down); faults edited into a build fail with
the switch, interface and cable they are about; nothing is left behind (rehearse_fixtures.rehearse)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from rehearse_fixtures import REPO, failed, generate, need_tools, rehearse, small_build

from generator.rehearse import tools

pytestmark = [pytest.mark.realtools]


@pytest.fixture(scope="module")
def roce_example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    need_tools(tools.ETHERNET_TOOLS)
    return generate(REPO / "examples" / "roce-rail-2tier.yaml", tmp_path_factory.mktemp("roce") / "build")


@pytest.fixture
def small() -> Path:
    need_tools(tools.ETHERNET_TOOLS)
    return small_build()


def test_roce_rail_2tier_example_passes_also_with_a_spine_down(roce_example: Path) -> None:
    code, report, err = rehearse(str(roce_example), "--fail", "c-spine-001")
    assert code == 0, (failed(report), err[-2000:])
    fab, mgmt = sorted(report["fabrics"], key=lambda f: f["fabric"] != "compute")
    assert fab["fabric"] == "compute" and fab["size"] == "20 switches, 512 switch-to-switch cables"
    # the management fabric's routed uplinks (build/switches/management/, docs/switches.md) pass too
    assert mgmt["fabric"] == "management" and mgmt["size"] == "5 switches, 6 switch-to-switch cables"
    assert [c["check"] for c in mgmt["checks"]] == ["configuration", "bgp sessions", "reachability", "ecmp"]
    names = [c["check"] for c in fab["checks"]]
    assert names == ["configuration", "bgp sessions", "reachability", "ecmp"] + [
        f"{n} (after --fail c-spine-001)" for n in ("bgp sessions", "reachability", "ecmp")
    ]
    assert set(fab["converge_seconds"]) == {"all up", "after --fail c-spine-001"}
    # 1,024 port ends pass the kernel's default neighbour-table limit (1024): raised, then restored
    keys = {c["key"]: c for c in report["kernel_limits"]}
    assert keys["net.ipv6.neigh.default.gc_thresh3"]["during"] > 2048 and report["kernel_limits_restored"]
    before = keys["net.ipv6.neigh.default.gc_thresh3"]["before"]
    assert Path("/proc/sys/net/ipv6/neigh/default/gc_thresh3").read_text().split() == [str(before)]


def _edit(build: Path, tmp: Path) -> Path:
    copy = tmp / "edited"
    shutil.copytree(build, copy)
    return copy


def test_wrong_asn_and_missing_cable_are_named(small: Path, tmp_path: Path) -> None:
    build = _edit(small, tmp_path)
    conf = build / "switches" / "compute" / "c-leaf-su1-r0" / "startup.yaml"
    text = conf.read_text()
    asn = re.search(r"autonomous-system: (\d+)", text)
    assert asn
    wrong = int(asn.group(1)) + 1  # the next leaf's ASN: its routes look like loops to this leaf
    conf.write_text(text.replace(f"autonomous-system: {asn.group(1)}", f"autonomous-system: {wrong}"))
    cables = build / "cabling" / "cables.csv"
    rows = cables.read_text().splitlines(keepends=True)
    gone = next(r for r in rows if ",leaf_spine," in r and ",c-leaf-su1-r1," in r)
    cables.write_text("".join(r for r in rows if r is not gone))
    cable_id = gone.split(",")[1]
    code, report, err = rehearse(str(build), "--timeout", "15")
    assert code == 1, err[-2000:]
    bad = failed(report)
    assert (
        f"c-leaf-su1-r0: startup.yaml has ASN {wrong}, switches/asn-plan.csv {asn.group(1)}"
        in bad["configuration"]
    )
    assert any(f"(configured for {cable_id} to c-spine-" in r and "no cable in cabling/cables.csv" in r
               for r in bad["configuration"])  # fmt: skip
    assert any(
        r.startswith("c-leaf-su1-r0 -> c-leaf-su1-r1 ") or "-> c-leaf-su1-r0 " in r
        for r in bad["reachability"]
    )


def test_failing_every_spine_partitions_the_fabric(small: Path) -> None:
    """Each step must converge (every step but the last) or settle on the plan's own partition (the last: no
    more waiting changes it, so it returns then, not at the timeout)."""
    spines = [f"c-spine-00{i}" for i in range(1, 5)]
    code, report, err = rehearse(str(small), "--timeout", "90", *(a for s in spines for a in ("--fail", s)))
    assert code == 1, err[-2000:]
    bad = failed(report)
    assert list(bad) == ["reachability (after --fail c-spine-004)"], bad
    assert all("no installed BGP route; the plan has no path either (partitioned)" in r
               for r in bad["reachability (after --fail c-spine-004)"])  # fmt: skip
