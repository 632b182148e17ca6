"""`blueprint rehearse` on an InfiniBand build: ibsim from the net file, ibnetdiscover against the cabling
plan, the generated OpenSM configuration as master. hdr-fat-tree-a100 fits whole; it is also rehearsed as
a sample (one scalable unit with its spines), which the report states."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from conftest import run_cli
from rehearse_fixtures import REPO, failed, generate, need_tools, rehearse

from generator.rehearse import tools

pytestmark = [pytest.mark.realtools]
# `--fabric compute` throughout: the example's Ethernet management fabric is rehearsed in FRR too since it
# gets switch configuration (tests/rehearse/test_rehearse_ethernet.py checks that one)


@pytest.fixture(scope="module")
def hdr(tmp_path_factory: pytest.TempPathFactory) -> Path:
    need_tools(tools.INFINIBAND_TOOLS)
    return generate(REPO / "examples" / "hdr-fat-tree-a100.yaml", tmp_path_factory.mktemp("hdr") / "build")


def _single_sm(hdr: Path, tmp_path: Path) -> Path:
    """A copy of the build without the standby's configuration (a fabric with one subnet manager)."""
    build = tmp_path / "single-sm"
    shutil.copytree(hdr, build)
    shutil.rmtree(build / "subnet_manager" / "compute" / "dgx002")
    return build


def test_hdr_fat_tree_passes_whole_and_sampled_with_a_spine_down(hdr: Path, tmp_path: Path) -> None:
    code, report, err = rehearse(str(hdr), "--fabric", "compute", "--fail", "c-spine-001")
    assert code == 0, (failed(report), err[-2000:])
    (fab,) = report["fabrics"]
    assert fab["size"] == "26 switches, 320 HCAs" and fab["notes"] == []
    assert [c["check"] for c in fab["checks"]] == [
        "discovery", "subnet manager", "partitions", "standby and takeover",
        "discovery (after --fail c-spine-001)", "subnet manager (after --fail c-spine-001)",
        "partitions (after --fail c-spine-001)", "standby and takeover (after --fail c-spine-001)",
    ]  # fmt: skip
    assert "MASTER, SUBNET UP, ftree (10 roots, 320 compute ports)" in fab["checks"][1]["detail"]
    assert "(9 roots, 320 compute ports)" in fab["checks"][5]["detail"]
    assert fab["checks"][2]["detail"] == (
        "P_Key tables of 64 of 319 HCA ports (smpquery pkeys) hold the plan's 1 partitions, as planned"
    )
    assert fab["checks"][3]["detail"].startswith("dgx002 STANDBY, MASTER after dgx001's OpenSM was killed")
    assert 0 < fab["converge_seconds"]["standby takeover"] < 90  # 10 s polls x (4 retries + 2) + 30 s
    assert "(bound 90 s)" in fab["checks"][3]["detail"]
    # issue 27: partitions per port and the takeover again on the fabric without the spine
    assert fab["checks"][6]["detail"] == fab["checks"][2]["detail"]
    assert 0 < fab["converge_seconds"]["standby takeover (after --fail c-spine-001)"] < 90

    single = _single_sm(hdr, tmp_path)  # the takeover is rehearsed above: 60 s it need not take twice
    code, report, err = rehearse(str(single), "--fabric", "compute", "--sample", "always")
    assert code == 0, (failed(report), err[-2000:])
    (fab,) = report["fabrics"]
    assert fab["notes"] == ["sampled: scalable unit su1 of 2 (8 leaves) with the 10 spines it is cabled to"]
    assert "(10 roots, 160 compute ports)" in fab["checks"][1]["detail"]


def test_a_client_not_done_in_its_time_fails_its_check(hdr: Path) -> None:
    """ibnetdiscover given less time than it needs is a failed discovery (exit 1, said), not an internal error
    (subprocess's TimeoutExpired reached the command before); no OpenSM time is reported for it."""
    code, report, err = rehearse(str(hdr), "--fabric", "compute", "--timeout", "0.001")
    assert code == 1, err[-2000:]
    (fab,) = report["fabrics"]
    assert [(c["check"], c["ok"], c["reasons"]) for c in fab["checks"]] == [
        ("discovery", False, ["ibnetdiscover was not done within 0.001 s"])
    ]
    assert fab["converge_seconds"] == {}


def test_a_cable_missing_from_the_net_file_is_named(hdr: Path, tmp_path: Path) -> None:
    build = _single_sm(hdr, tmp_path)
    net = build / "cabling" / "ibnetdiscover" / "compute.net"
    lines = net.read_text().splitlines()
    # the leaf's end of dgx001 mlx5_0's cable, and the HCA's end: the cable was never pulled
    cut = [
        ln
        for ln in lines
        if '"H-dgx001-mlx5_0"[1]' in ln or ('"S-c-leaf-su1-r0"[1]' in ln and ln.startswith("[1]"))
    ]
    assert len(cut) == 2, cut
    net.write_text("\n".join(ln for ln in lines if ln not in cut) + "\n")
    code, report, err = rehearse(str(build), "--fabric", "compute")
    assert code == 1, err[-2000:]
    assert failed(report) == {
        "discovery": [
            "not in the net file: c-leaf-su1-r0 port 1 - dgx001 mlx5_0 port 1 (cabling/cables.csv has it)"
        ]
    }


def test_a_partition_membership_change_names_the_ports(hdr: Path, tmp_path: Path) -> None:
    """Default made limited for every port by a hand edit (the plan: one tenant, every port full); the
    standby is removed from the copy so that only the partitions are rehearsed (no 60 s takeover)."""
    build = _single_sm(hdr, tmp_path)
    conf = build / "subnet_manager" / "compute" / "partitions.conf"
    text = conf.read_text()
    assert "Default=0x7fff, ipoib : ALL=full, SELF=full ;" in text
    conf.write_text(text.replace("ALL=full, SELF=full", "ALL=limited, SELF=full"))
    code, report, err = rehearse(str(build), "--fabric", "compute")
    assert code == 1, err[-2000:]
    problems = failed(report)
    assert list(problems) == ["partitions"]
    assert len(problems["partitions"]) == 64
    assert all(re.fullmatch(r"dgx\d{3} mlx5_\d/1 \(0x[0-9a-f]{16}\): Default 0x7fff limited, the plan full", p)
               for p in problems["partitions"]), problems["partitions"][:3]  # fmt: skip


@pytest.mark.parametrize("name", ["hdr-one-switch", "hdr-one-leaf-one-spine"])
def test_a_fabric_ftree_cannot_take_is_routed_by_minhop_and_an_explicit_ftree_refused(
    name: str, tmp_path: Path
) -> None:
    """A two-DGX fat-tree (one switch; or one leaf under one spine) got the default ftree, which real OpenSM
    abandoned ("topology is not fat-tree") for minhop: rehearse failed a blueprint validate had passed. The
    default is minhop there and the rehearsal passes; an explicit ftree is NET028's error."""
    need_tools(tools.INFINIBAND_TOOLS)
    blueprint = REPO / "tests" / "rehearse" / "data" / f"{name}.yaml"
    build = generate(blueprint, tmp_path / "build")
    confs = list((build / "subnet_manager" / "compute").glob("*/opensm.conf"))
    assert confs and all("\nrouting_engine minhop\n" in c.read_text() for c in confs)
    code, report, err = rehearse(str(build), "--fabric", "compute")
    assert code == 0, (failed(report), err[-2000:])
    explicit = tmp_path / "ftree.yaml"
    text = blueprint.read_text().replace("{kind: opensm", "{kind: opensm, routing_engine: ftree")
    explicit.write_text(text)
    code, out, err = run_cli("validate", str(explicit))
    assert code == 1 and "NET028" in out and "topology is not fat-tree" in out, out + err


@pytest.mark.parametrize(
    ("edit", "line"),
    [
        (("tenant-a=0x0010, defmember=full", "tenant-a=0x0020, defmember=full"), "tenant-a=0x0020"),
        (("tenant-a=0x0010, defmember=full", "tenant-a=0x0010, defmember=limited"), "defmember=limited"),
    ],
)
def test_an_edited_partition_statement_is_judged_by_its_plan_line(
    edit: tuple[str, str], line: str, tmp_path: Path
) -> None:
    """tenant-a's P_Key typed over tenant-b's merged the two tenants, and `full` made `limited` cut every
    training host off the others: the rehearsal passed both, since it took the plan from the edited
    statement itself. Each statement is held to the `# plan:` line generate writes above it."""
    need_tools(tools.INFINIBAND_TOOLS)
    build = generate(REPO / "tests" / "rehearse" / "data" / "hdr-two-tenants.yaml", tmp_path / "build")
    conf = build / "subnet_manager" / "compute" / "partitions.conf"
    text = conf.read_text()
    assert f"# plan: {edit[0]}\n" in text and f"\n{edit[0]} : ;" in text
    conf.write_text(text.replace(f"\n{edit[0]} : ;", f"\n{edit[1]} : ;"))
    code, report, err = rehearse(str(build), "--fabric", "compute")
    assert code == 1, err[-2000:]
    problems = failed(report)
    assert list(problems) == ["partitions"], problems
    first = problems["partitions"][0]
    assert line in first and "the plan `tenant-a=0x0010, defmember=full` (the statement was edited)" in first
    assert any(
        re.match(r"train\d{3} mlx5_\d/1 \(0x[0-9a-f]{16}\): tenant-a 0x0010 ", p)
        for p in problems["partitions"]
    )
