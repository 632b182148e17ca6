"""NCCL's tuner as the release a run uses has it (issue 28: "src/graph/tuning.cc of the NCCL release the
blueprint pins"). perf.yaml holds 2.20.3's tables and, under nccl.releases, what 2.21.5, 2.25.1, 2.28.7,
2.29.2 and 2.31.2 changed. The numbers expected below are transcribed from NVIDIA/nccl at the commits perf.yaml cites
(src/graph/tuning.cc: 2.20.3 b6475625fbcaa2c3c0e50eed2fa1255d7514d4a2, 2.21.5
ab2b89c4c339bd7f816fbc114a4b05d386b66290, 2.25.1
80f6bda4378b99d99e82b4d76a633791cc45fef0, 2.28.7 ae7aed194dc63c65d1bf5c0385ba3d68d3b64c8c, 2.29.2
ebd1e929285881cb4df02c3459588a2e12b2d8c0; src/tuning/cost_model.cc 2.31.2
889806836097808572f87a2019eefd01f27aae68), and the latencies are worked by hand from its formulas, not taken
from the model's code."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest
from perf_blueprints import build, server_nodes
from pydantic import ValidationError

from blueprints.catalog.perf import Algorithm, HwLatencyChange, Link, Protocol, perf_data
from generator.cli import main
from generator.perf.collectives import Candidate, candidates, estimate
from generator.perf.predict import job_for
from generator.perf.system import PerfError, System, system_for

IB = {"technology": "infiniband-ndr", "topology": {"kind": "fat-tree", "switch": "qm9700"}}


def _system(tmp_path: Path, server: str, nodes: int, version: str) -> System:
    tmp_path.mkdir(parents=True, exist_ok=True)
    cluster, plan, _ = build(server_nodes(server, nodes, IB if nodes > 1 else None), tmp_path)
    return system_for(cluster, plan, nccl_version=version)


def _candidate(system: System, algorithm: str, protocol: str, ranks_per_node: int | None = None) -> Candidate:
    job = job_for(system, ranks_per_node=ranks_per_node)
    return next(
        c for c in candidates("all_reduce", job) if (c.algorithm, c.protocol) == (algorithm, protocol)
    )


def test_releases_before_the_first_later_table_keep_2_20_3() -> None:
    perf = perf_data()
    assert perf.for_release(None) is perf and perf.for_release(220) is perf
    assert perf.nccl.hw_latency_us.get("nvlink", "tree", "simple") == 28.0
    assert perf.nccl.hw_latency_us.get("nvlink", "nvls", "simple") == 23.0
    assert perf.nccl.base_latency_us.get("tree", "simple") == 0.0
    assert perf.nccl.ring_ll_factor_multi.value == 0.25
    assert [int(a) for a in perf.nccl.ll128_sm_archs.values] == [70, 80, 90]


@pytest.mark.parametrize("release", [221, 222, 223, 224])
def test_2_21_5_tables_apply_from_2_21_to_2_24(release: int) -> None:
    """2.21.5 (and 2.22.3, the same constants) change Ring/LL to busBw * .5, llMaxBws Hopper-N1 to 141 and
    NVLS / NVLSTree over NVLink to 25; Tree/Simple keeps 28, baseLat Tree/Simple 0 and LL128 stops at sm90."""
    nc = perf_data().for_release(release).nccl
    assert nc.ring_ll_factor_multi.value == nc.ring_ll_factor_single.value == 0.5
    assert nc.ll_max_gbytes_single[90].value == 141.0 and nc.ll_max_gbytes_single[80].value == 87.7
    assert nc.hw_latency_us.get("nvlink", "nvls", "simple") == nc.hw_latency_us.get(
        "nvlink", "nvls_tree", "simple"
    )
    assert nc.hw_latency_us.get("nvlink", "nvls", "simple") == 25.0
    assert [nc.hw_latency_us.get(link, "tree", "simple") for link in ("nvlink", "pci", "net")] == [28.0] * 3
    assert nc.base_latency_us.get("tree", "simple") == 0.0
    assert [int(a) for a in nc.ll128_sm_archs.values] == [70, 80, 90]
    assert "ab2b89c4c339bd7f816fbc114a4b05d386b66290" in nc.releases_up_to(release)[-1].source


def test_one_node_ll_ring_reaches_the_2_21_ceiling(tmp_path: Path) -> None:
    """8 x H100 in one node, all_reduce ring LL: NVLink 18 x 20.6 GB/s = 370.8 a GPU; 2.20.3 gives LL bus
    bandwidth min(87.7, 370.8 / 4) = 87.7 GB/s, 2.21.5 min(141, 370.8 x .5) = 141 (llMaxBws N1 rows)."""
    for version, bus in (("2.20.5", 87.7), ("2.21.5", 141.0), ("2.22.3", 141.0)):
        ll = _candidate(_system(tmp_path / version, "dgx-h100", 1, version), "ring", "ll")
        assert ll.algbw.gbytes * 2 * 7 / 8 == pytest.approx(bus)


@pytest.mark.parametrize("release", [225, 226, 227])
def test_2_25_1_tables_apply_from_2_25_on(release: int) -> None:
    nc = perf_data().for_release(release).nccl
    # hwLat Tree/Simple { NVLink 4.0, PCI 4.0, NET 14 }, NVLS over NVLink 25; baseLat Tree/Simple 8.4
    assert [nc.hw_latency_us.get(link, "tree", "simple") for link in ("nvlink", "pci", "net")] == [
        4.0,
        4.0,
        14.0,
    ]
    assert nc.hw_latency_us.get("nvlink", "nvls", "simple") == 25.0
    assert nc.base_latency_us.get("tree", "simple") == 8.4
    # llMaxBws Hopper-N1 141.0, Blackwell 2*141.0; Volta and Ampere rows unchanged (keyed tables merge)
    assert {k: v.value for k, v in nc.ll_max_gbytes_single.items()} == {
        70: 39.0,
        80: 87.7,
        90: 141.0,
        100: 282.0,
    }
    assert nc.ring_ll_factor_multi.value == nc.ring_ll_factor_single.value == 0.5
    assert nc.tree_per_channel_max_gbytes[100].values == (2 * 38.7, 2 * 41.4, 2 * 36.0)
    assert nc.tree_per_channel_max_gbytes[90].values == (38.7, 41.4, 36.0)
    assert 100 in [int(a) for a in nc.ll128_sm_archs.values]
    assert "80f6bda4378b99d99e82b4d76a633791cc45fef0" in perf_data().nccl.releases_up_to(release)[-1].source


def test_maxchannels_doubles_from_2_25(tmp_path: Path) -> None:
    """device.h MAXCHANNELS is 32 in 2.22.3 and 64 in 2.25.1; init.cc searches MAXCHANNELS/2 rings. A node of
    32 NICs of 100G (NCCL's own RoCE transport: a device a NIC) feeds its rings through 16 NICs before 2.25
    and all 32 from 2.25; acceptance-report takes NCCL_MAX_NCHANNELS up to the newest MAXCHANNELS."""
    from test_net_plugins import ROCE400, _h100_nodes_with_nics

    assert (perf_data().for_release(222).nccl.max_channels.value, perf_data().nccl.most_channels()) == (
        32,
        64,
    )
    assert perf_data().for_release(225).nccl.ring_graph_max_channels() == 32
    fabric = {**ROCE400, "technology": "roce-v2-100"}
    fabric["topology"] = {"kind": "fat-tree", "switch": "sn4600c", "rail_optimized": True}
    cluster, plan, _ = build(_h100_nodes_with_nics(32, 100, "cx6-dx", fabric), tmp_path, "nics32.yaml")
    nets = {}
    for version in ("2.22.3", "2.25.1"):
        system = system_for(cluster, plan, nccl_version=version)
        assert system.net is not None
        job = job_for(system, 2)
        assert job.net is not None
        nets[version] = job.net.gbytes / system.net.gbytes
    assert nets == pytest.approx({"2.22.3": 16 / 32, "2.25.1": 1.0})


# Blackwell (sm100) rows (N1, N2, N4+) of each release, as its source prints them; Hopper's never change
BLACKWELL = {
    # release: (perChMaxRingLL128Bws, perChMaxTreeLL128Bws, perChMaxTreeBws, hwLat NET NVLSTree Simple)
    227: ((73.4, 73.4, 73.4), (73.4, 73.4, 58.0), (77.4, 82.8, 72.0), 14.0),  # 2.25.1's, kept by 2.26/2.27
    228: ((73.4, 34.6, 73.4), (55.6, 31.67, 20.0), (70.0, 42.8, 24.0), 14.0),  # 2.28.7
    229: ((34.5, 34.6, 34.5), (55.6, 31.67, 20.0), (70.0, 42.8, 24.0), 20.9),  # 2.29.2
    230: ((34.5, 34.6, 34.5), (55.6, 31.67, 20.0), (70.0, 42.8, 24.0), 20.9),  # no 2.30 file pinned: 2.29.2's
    231: ((40.0, 40.0, 40.0), (55.6, 31.67, 20.0), (70.0, 42.8, 24.0), 20.9),  # 2.31.2
}


@pytest.mark.parametrize("release", sorted(BLACKWELL))
def test_blackwell_rows_follow_each_release(release: int) -> None:
    nc = perf_data().for_release(release).nccl
    ring_ll128, tree_ll128, tree, nvls_tree_net = BLACKWELL[release]
    assert nc.ring_ll128_per_channel_max_gbytes[100].values == pytest.approx(ring_ll128)
    assert nc.tree_ll128_per_channel_max_gbytes[100].values == pytest.approx(tree_ll128)
    assert nc.tree_per_channel_max_gbytes[100].values == pytest.approx(tree)
    assert nc.hw_latency_us.get("net", "nvls_tree", "simple") == nvls_tree_net
    # Hopper's rows are the same in every one of these releases
    assert nc.ring_ll128_per_channel_max_gbytes[90].values == (36.7, 36.7, 36.7)
    assert nc.tree_ll128_per_channel_max_gbytes[90].values == (36.7, 36.7, 29.0)
    assert nc.tree_per_channel_max_gbytes[90].values == (38.7, 41.4, 36.0)
    # and the rest of 2.25.1's latencies stay
    assert nc.hw_latency_us.get("net", "tree", "simple") == 14.0
    assert nc.hw_latency_us.get("nvlink", "nvls_tree", "simple") == 25.0


def test_a_release_changing_one_latency_names_only_that_one() -> None:
    """2.29.2 changes the NVLS-tree network hop alone: its entry names that latency, every other one stays as
    2.25.1 has it, and a misspelt protocol is refused when the catalogue loads."""
    before, after = (perf_data().for_release(r).nccl.hw_latency_us for r in (228, 229))
    changed = [
        (link, algorithm, protocol)
        for link in get_args(Link)
        for algorithm in get_args(Algorithm)
        for protocol in get_args(Protocol)
        if before.get(link, algorithm, protocol) != after.get(link, algorithm, protocol)
    ]
    assert changed == [("net", "nvls_tree", "simple")]
    with pytest.raises(ValidationError):
        HwLatencyChange.model_validate({"source": "x", "values": {"net": {"nvls_tree": {"simpel": 1.0}}}})


def test_two_b200_nodes_ll128_ring_follows_the_release(tmp_path: Path) -> None:
    """Two DGX B200 nodes: the ring's LL128 bus bandwidth is at most its graph's channels × the release's
    per-channel figure for two nodes (2.25.1: 2 × 36.7; 2.28.7: 34.6), so 2.28 predicts a slower LL128 ring."""
    old = _candidate(_system(tmp_path / "a", "dgx-b200", 2, "2.26.2"), "ring", "ll128")
    new = _candidate(_system(tmp_path / "b", "dgx-b200", 2, "2.28.7"), "ring", "ll128")
    assert new.algbw.gbytes < old.algbw.gbytes
    assert new.algbw.name == "LL128 per-channel maximum"


def test_ring_and_tree_latency_follow_each_release(tmp_path: Path) -> None:
    """Two DGX H100 over NDR, 16 ranks: ring all_reduce counts 2·nNodes network steps in 2.20.3 and 2.21.5
    and 2·(nNodes−1) in 2.25.1 (nsteps = 30, intra steps at max(hwLat, 1 µs net overhead)); the Simple tree
    pays 28 µs hops in 2.20.3 and 2.21.5 and 4 (NVLink) / 14 (net) plus an 8.4 µs base in 2.25.1."""
    old = _system(tmp_path / "a", "dgx-h100", 2, "2.21.5")
    new = _system(tmp_path / "b", "dgx-h100", 2, "2.25.1")
    hop = old.net_latency_us
    assert hop == new.net_latency_us and hop > 0
    ring_ll = {"2.21.5": 6.6 + 26 * 1.0 + 4 * (2.7 + hop), "2.25.1": 6.6 + 28 * 1.0 + 2 * (2.7 + hop)}
    tree_simple = {
        "2.21.5": 0.0 + 2 * (7 * 28.0 + 1 * (28.0 + 2 * hop)),
        "2.25.1": 8.4 + 2 * (7 * 4.0 + 1 * (14.0 + 2 * hop)),
    }
    for system in (old, new):
        assert _candidate(system, "ring", "ll").latency_us == pytest.approx(ring_ll[system.nccl_version])
        assert _candidate(system, "tree", "simple").latency_us == pytest.approx(
            tree_simple[system.nccl_version]
        )


def test_one_rank_per_node_uses_the_tree_network_latency_from_2_25(tmp_path: Path) -> None:
    """2.25.1: "With ppn=1 latencies are fully exposed, use the Tree network latency" (LL: 5.0, not 2.7)."""
    old = _system(tmp_path / "a", "dgx-h100", 2, "2.21.5")
    new = _system(tmp_path / "b", "dgx-h100", 2, "2.25.1")
    hop = old.net_latency_us
    # 2 ranks: nsteps 2; 2.20.3 and 2.21.5 count 4 network steps (all of them, capped at nsteps), 2.25.1 two
    assert _candidate(old, "ring", "ll", 1).latency_us == pytest.approx(6.6 + 2 * (2.7 + hop))
    assert _candidate(new, "ring", "ll", 1).latency_us == pytest.approx(6.6 + 2 * (5.0 + hop))


def test_ll128_on_blackwell_from_the_release_that_enables_it(tmp_path: Path) -> None:
    """2.20.3 and 2.21.5 turn LL128 on by default for sm70/80/90 only; 2.25.1 adds sm100."""
    assert not _system(tmp_path / "a", "dgx-b200", 1, "2.21.5").ll128
    assert _system(tmp_path / "b", "dgx-b200", 1, "2.25.1").ll128
    assert _system(tmp_path / "c", "dgx-h100", 1, "2.21.5").ll128


def test_estimate_says_which_tuner_it_used(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, _, path = build(server_nodes("dgx-h100", 2, IB), tmp_path)
    assert main(["estimate", str(path), "--nccl-version", "2.26.2"]) == 0
    out = capsys.readouterr().out.replace("\n", " ")
    assert "NCCL 2.26.2: predicted with the tuner tables of NVIDIA/nccl src/graph/tuning.cc 2.25.1" in out
    assert main(["estimate", str(path), "--nccl-version", "2.22.3"]) == 0
    out = capsys.readouterr().out.replace("\n", " ")
    assert "NCCL 2.22.3: predicted with the tuner tables of NVIDIA/nccl src/graph/tuning.cc 2.21.5" in out
    assert main(["estimate", str(path), "--nccl-version", "2.20.5"]) == 0
    assert "tuner tables of" not in capsys.readouterr().out


@pytest.mark.parametrize(("version", "falls_back"), [("2.21.5", True), ("2.22.3", True), ("2.25.1", False)])
def test_an_algorithm_list_that_leaves_a_collective_nothing(
    tmp_path: Path, version: str, falls_back: bool
) -> None:
    """NCCL_ALGO=Tree for all_gather (NCCL runs no tree for it): tuning.cc 2.20.3-2.22.3 set the ring available
    ("at least set ring algo available"), 2.25.1 has no such backup and the call fails."""
    job = job_for(_system(tmp_path, "dgx-h100", 1, version))
    if falls_back:
        assert estimate("all_gather", 1 << 30, job, algorithms=("tree",)).algorithm == "ring"
        assert estimate("all_gather", 1 << 30, job, algorithms=("tree",), protocols=("ll",)).protocol == "ll"
    else:
        with pytest.raises(
            PerfError, match=r"from NCCL 2\.25 a collective NCCL_ALGO leaves no algorithm fails"
        ):
            estimate("all_gather", 1 << 30, job, algorithms=("tree",))


@pytest.mark.parametrize(("version", "falls_back"), [("2.21.5", True), ("2.25.1", False)])
def test_collnet_only_without_sharp(tmp_path: Path, version: str, falls_back: bool) -> None:
    """NCCL_ALGO=CollNet on two nodes without IB SHARP: up to 2.22 "If user has hard set NCCL_ALGO=COLLNET,
    ignore it" (Ring and Tree enabled, the tuner picks); from 2.25 the call fails."""
    job = job_for(_system(tmp_path, "dgx-h100", 2, version))
    if falls_back:
        picked = {
            estimate("all_reduce", size, job, algorithms=("collnet",)).algorithm
            for size in (1 << 20, 1 << 33)
        }
        assert picked <= {"ring", "tree"} and picked
    else:
        with pytest.raises(PerfError, match="no algorithm can run all_reduce"):
            estimate("all_reduce", 1 << 30, job, algorithms=("collnet",))


def test_estimate_notes_the_ring_it_falls_back_to(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, _, path = build(server_nodes("dgx-h100", 2, IB), tmp_path)
    args = ["estimate", str(path), "--collective", "all_gather,all_reduce", "--algo", "tree", "--sizes", "1G"]
    assert main([*args, "--nccl-version", "2.21.5"]) == 0
    out = capsys.readouterr().out
    assert "NCCL_ALGO=tree leaves all_gather no algorithm: NCCL 2.21.5 runs them" in " ".join(out.split())
