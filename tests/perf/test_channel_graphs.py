"""NCCL's channel graphs (generator/perf/channels.py) and the run settings `estimate` takes (issue 28).

Oracles: the numbers below are worked by hand from NCCL 2.20.3's search.cc speed arrays and tuning.cc tables
(perf.yaml [NCCL-SEARCH], [NCCL-TUNE]) and from published runs (NVIDIA/nccl-tests #100)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from perf_blueprints import build, server_nodes

from blueprints.catalog.perf import perf_data
from generator.perf.channels import Graph, duplicated, search, tree_channel_cap
from generator.perf.collectives import algorithm_list, estimate, protocol_list
from generator.perf.predict import RunSettings, job_for, sweep
from generator.perf.system import PerfError, system_for

GIB = 1 << 30
HDR = {
    "technology": "infiniband-hdr",
    "topology": {"kind": "fat-tree", "switch": "qm8700", "rail_optimized": True},
}
NDR = {
    "technology": "infiniband-ndr",
    "topology": {"kind": "fat-tree", "switch": "qm9700", "rail_optimized": True},
}


def test_h100_ring_graph_is_eight_channels_at_45() -> None:
    """48 GB/s fits 7 channels in 370.8 GB/s of NVLink (336), 45 fits 8 (360): NCCL keeps 8 × 45."""
    g = search(90, 48.0, 8, 18 * 20.6, perf_data())
    assert g == Graph(8, 45.0)


def test_a100_hdr_ring_graph_is_one_channel_per_nic_at_24() -> None:
    g = search(80, 24.0, 4, 12 * 20.0, perf_data())
    assert g == Graph(4, 24.0)
    assert duplicated(g, 80, perf_data()) == g  # 24 < 25: no duplication


def test_duplication_rules() -> None:
    perf = perf_data()
    assert duplicated(Graph(4, 48.0), 100, perf) == Graph(8, 24.0)  # 4 channels: doubled
    assert duplicated(Graph(8, 45.0), 90, perf) == Graph(8, 45.0)  # sm90, < 50 GB/s, > 4 channels


def test_tree_cap_per_channel_and_node_count() -> None:
    perf = perf_data()
    assert tree_channel_cap(Graph(4, 24.0), 80, 2, perf) == pytest.approx(4 * 23.6)
    assert tree_channel_cap(Graph(8, 45.0), 90, 4, perf) == pytest.approx(8 * 36.0)
    assert tree_channel_cap(Graph(8, 45.0), 90, 2, perf, "ll128") == pytest.approx(8 * 36.7)


def _a100_four_hdr(tmp_path: Path):  # type: ignore[no-untyped-def]
    data = server_nodes("dgx-a100", 2, HDR)
    pool = data["pools"][0]
    pool.pop("server")
    pool["spec"] = {
        "gpu": "a100-80",
        "gpus": 8,
        "gpu_interconnect": "nvlink3",
        "nvlink_domain_gpus": 8,
        "nvswitches": 6,
        "pcie_gen": 4,
        "power_kw": 6.5,
        "rack_units": 6,
        "nics": [{"purpose": "compute", "model": "cx6", "count": 4, "speed_gbps": 200}],
    }
    cluster, plan, _ = build(data, tmp_path)
    return system_for(cluster, plan)


def test_fewer_nics_than_gpus_two_node_tree_stays_near_the_network(tmp_path: Path) -> None:
    """Two A100 nodes with 4 HDR NICs: published 91 GB/s (NVIDIA/nccl-tests #100); model v3 gave 161 (the
    2-node tree at twice the network). Now the tree is held to 4 channels × 23.6 and the ring wins."""
    system = _a100_four_hdr(tmp_path)
    job = job_for(system, 2)
    assert job.tree_channel_cap == pytest.approx(4 * 23.6)
    best = estimate("all_reduce", 8 * GIB, job)
    assert best.algorithm == "ring" and 80 < best.busbw_gbytes < 100
    # forced, the tree still runs at what the links allow (the cap steers NCCL's choice only)
    assert estimate("all_reduce", 8 * GIB, job, algorithms=("tree",)).busbw_gbytes > 1.5 * best.busbw_gbytes


def test_per_collective_lists_as_nccl_reads_them() -> None:
    """The examples of NCCL's own parser (tuning.cc 2.25.1 parseList): "ring,collnetdirect;allreduce:tree,
    collnetdirect;broadcast:ring" enables Ring and CollNetDirect for every function, then Tree and
    CollNetDirect for AllReduce and Ring for Broadcast; "LL,Simple;allreduce:^LL" LL and Simple for all but
    AllReduce, which gets every protocol but LL; "^LL128;allreduce:LL128" all but LL128, only LL128 for
    AllReduce. A collective no entry names runs everything."""
    algos = "ring,collnetdirect;allreduce:tree,collnetdirect;broadcast:ring"
    assert algorithm_list(algos, "all_reduce") == ("tree", "collnet")
    assert algorithm_list(algos, "all_gather") == ("ring", "collnet")
    assert algorithm_list(algos, "broadcast") == ("ring",)
    assert protocol_list("LL,Simple;allreduce:^LL", "all_reduce") == ("ll128", "simple")
    assert protocol_list("LL,Simple;allreduce:^LL", "reduce_scatter") == ("ll", "simple")
    assert protocol_list("^LL128;AllReduce:LL128", "all_reduce") == ("ll128",)
    assert protocol_list("^LL128;AllReduce:LL128", "all_gather") == ("ll", "simple")
    assert algorithm_list("allreduce:tree", "all_gather") == ()
    assert algorithm_list("allreduce:tree:ring", "all_reduce") == ("tree",)  # strtok: up to the next colon
    assert algorithm_list("allreduce::tree", "all_reduce") == ("tree",)  # strtok skips the empty token
    assert algorithm_list("ring:", "all_gather") == ("ring",)  # one token: the list, for every function
    assert algorithm_list(";;", "all_reduce") == ()  # no entry: nothing restricted
    refused = (
        (algorithm_list, "allreduce:tree;ring", "All entries except the first must have a prefix"),
        # strtok's first token of ";ring" does not start the string, so NCCL reads it as a later entry
        (algorithm_list, ";ring", "All entries except the first must have a prefix"),
        (algorithm_list, "ring;allreduce:", "All entries except the first must have a prefix"),
        # a function with no list: its name is read as the list, and NCCL refuses it (Unrecognized element)
        (algorithm_list, "allreduce:", "reads `allreduce` as the list"),
        (protocol_list, ":", "names neither a collective nor protocols"),
        (algorithm_list, "alltoall:ring", "unknown collective `alltoall`"),
        (
            algorithm_list,
            "ring;allreduce:trie",
            "unknown algorithm `trie`",
        ),  # checked whatever the collective
    )
    for parse, text, words in refused:
        with pytest.raises(PerfError, match=words):
            parse(text, "all_gather")


def test_estimate_takes_per_collective_lists_from_nccl_2_25(tmp_path: Path) -> None:
    _, _, path = build(server_nodes("dgx-h100", 2, NDR), tmp_path)
    args = [
        "estimate",
        str(path),
        "--collective",
        "all_reduce,all_gather",
        "--sizes",
        "1G",
        "--format",
        "json",
    ]
    algo = ["--algo", "ring;allreduce:tree"]
    run = subprocess.run(
        [sys.executable, "-m", "generator.cli", *args, *algo, "--nccl-version", "2.25.1"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)["blueprints"][0]
    assert doc["settings"].startswith("NCCL_ALGO=ring;allreduce:tree")
    picked = {c: rows[0]["algorithm"] for c, rows in doc["collectives"].items()}
    assert picked == {"all_reduce": "tree", "all_gather": "ring"}
    old = subprocess.run(
        [sys.executable, "-m", "generator.cli", *args, *algo, "--nccl-version", "2.22.3"],
        capture_output=True,
        text=True,
    )
    assert old.returncode == 2 and "which NCCL reads from 2.25" in old.stderr


def test_protocol_and_algorithm_spellings() -> None:
    assert algorithm_list("Ring,NVLSTree,CollNetDirect") == ("ring", "nvls_tree", "collnet")
    # CoreWeave's SHARP manifests set NCCL_ALGO=COLLNETCHAIN: the one CollNet the model has
    assert algorithm_list("COLLNETCHAIN") == ("collnet",)
    assert protocol_list("LL128,Simple") == ("ll128", "simple")
    with pytest.raises(PerfError):
        protocol_list("LL256")


def test_nccl_exclusion_lists() -> None:
    """NCCL's `^` keeps every algorithm or protocol but those named (tuning.cc parseList), as `NCCL_PROTO=^LL128`
    in NCCL 2.18.1's release notes."""
    assert algorithm_list("^NVLS,nvlstree") == ("ring", "tree", "collnet", "pat", "p2p")
    assert protocol_list("^LL128") == ("ll", "simple")
    assert protocol_list("^ll,LL128") == ("simple",)  # any case
    with pytest.raises(PerfError, match="without spaces"):  # NCCL compares whole tokens: no trimming
        protocol_list(" ^ll ,LL128")
    with pytest.raises(PerfError, match="excludes every protocol"):
        protocol_list("^LL,LL128,Simple")
    with pytest.raises(PerfError, match="unknown algorithm `CollNetSplit`"):
        algorithm_list("^CollNetSplit")
    # NCCL_ALGO=^CollNetChain leaves CollNetDirect, the model's one CollNet
    assert algorithm_list("^CollNetChain,NVLS") == ("ring", "tree", "nvls_tree", "collnet", "pat", "p2p")


def test_run_settings_change_the_prediction(tmp_path: Path) -> None:
    cluster, plan, _ = build(server_nodes("dgx-h100", 2, NDR), tmp_path)
    system = system_for(cluster, plan)
    base = sweep(system, "all_reduce", [8 * GIB], 2)[0]
    ring = sweep(system, "all_reduce", [8 * GIB], 2, settings=RunSettings(algorithms=("ring",)))[0]
    few = sweep(system, "all_reduce", [8 * GIB], 2, settings=RunSettings(algorithms=("ring",), channels=2))[0]
    assert base.algorithm == "nvls_tree" and ring.algorithm == "ring"
    assert few.busbw_gbytes < 0.3 * ring.busbw_gbytes  # 2 channels × 45 GB/s
    ll = sweep(system, "all_reduce", [1 << 20], 2, settings=RunSettings(protocols=("ll",)))[0]
    assert ll.protocol == "ll"
    # NVLS runs Simple only: NCCL up to 2.22 runs the ring with LL then (tuning.cc "at least set ring algo
    # available"); from 2.25 the call fails
    nvls_ll = RunSettings(algorithms=("nvls",), protocols=("ll",))
    backup = sweep(system, "all_reduce", [1 << 20], 2, settings=nvls_ll)[0]
    assert (backup.algorithm, backup.protocol) == ("ring", "ll")
    with pytest.raises(PerfError, match="Simple only"):
        sweep(system_for(cluster, plan, nccl_version="2.25.1"), "all_reduce", [1 << 20], 2, settings=nvls_ll)
    with pytest.raises(PerfError, match="--channels"):
        sweep(system, "all_reduce", [GIB], 1, settings=RunSettings(channels=4))


def test_nvlink_off_and_old_nccl(tmp_path: Path) -> None:
    cluster, plan, _ = build(server_nodes("dgx-h100", 2, NDR), tmp_path)
    off = system_for(cluster, plan, nvlink=False)
    assert off.intra is not None and off.intra_class == "pci" and not off.nvls and not off.ll128
    assert any("NVLink off" in n for n in off.notes)
    old = system_for(cluster, plan, nccl_version="2.17.1")
    assert not old.multi_node_nvls
    with pytest.raises(PerfError):
        system_for(cluster, plan, nccl_version="two")


def test_nvl72_rack_runs_the_ring_before_nccl_2_21(tmp_path: Path) -> None:
    """NCCL before 2.21 turns NVLS off on a multi-node NVLink domain without IB SHARP ("MNNVL: NVLS not yet
    supported"): one NVL72 rack runs a ring, whose 142 NVLink steps of latency shape the mid sizes (2.21 and
    later: tests/perf/test_mnnvl_nvls.py)."""
    cluster, plan, _ = build(server_nodes("gb200-nvl72-tray", 18, NDR), tmp_path)
    system = system_for(cluster, plan, nccl_version="2.20.5")
    rows = sweep(system, "all_reduce", [512 << 20, 8 * GIB], 18)
    assert {r.algorithm for r in rows} == {"ring"}
    assert rows[0].busbw_gbytes < 0.85 * rows[1].busbw_gbytes


def test_estimate_cli_options(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    bp = root / "examples" / "azure-ndh100v5.yaml"
    cmd = [sys.executable, "-m", "generator.cli", "estimate", str(bp), "--sizes", "8G", "--nodes", "2"]
    out = subprocess.run(
        [*cmd, "--algo", "Ring", "--proto", "Simple", "--channels", "4", "--format", "json"],
        capture_output=True,
        text=True,
        cwd=root,
    )
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)["blueprints"][0]
    assert "NCCL_ALGO=ring" in doc["settings"] and "4 inter-node channels" in doc["settings"]
    row = doc["collectives"]["all_reduce"][0]
    assert row["algorithm"] == "ring" and row["busbw_gbytes"] < 200
    bad = subprocess.run([*cmd, "--nccl-version", "latest"], capture_output=True, text=True, cwd=root)
    assert bad.returncode == 2 and "not a release" in bad.stderr


def test_acceptance_report_follows_the_runs_nccl_algo(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """A text output echoing NCCL_ALGO (NCCL_DEBUG=INFO) and a -J output with NCCL_PROTO in its env are
    predicted with the same settings; a setting the model cannot honour is an error row, not a traceback."""
    from generator.cli import main
    from generator.perf.acceptance import run_settings
    from generator.perf.nccl_results import read_runs

    root = Path(__file__).resolve().parents[2]
    data = root / "tests" / "perf" / "data" / "nccl_tests" / "oci-bm-gpu4.8-2node-all_reduce.txt"
    text = data.read_text()
    lines = text.split("\n")
    lines.insert(3, "inst-1:123:123 [0] NCCL INFO NCCL_ALGO set by environment to Tree")
    results = tmp_path / "results"
    results.mkdir()
    (results / "tree.txt").write_text("\n".join(lines))
    (run,) = read_runs(results / "tree.txt")
    assert run.settings.algo == "Tree" and run.settings.proto is None
    assert (run_settings(run).algorithms, run_settings(run).protocols) == (("tree",), None)
    # NVLS on A100 nodes: no algorithm is left; the run's NCCL 2.26.2 fails the call (2.22 and earlier ran
    # the ring), so the run is an error row
    lines.insert(3, "inst-1:123:123 [0] NCCL INFO NCCL version 2.26.2+cuda12.4")
    (results / "nvls.txt").write_text("\n".join(lines).replace("to Tree", "to NVLS"))
    bp = server_nodes(
        "dgx-a100",
        2,
        {"technology": "roce-v2-100", "topology": {"kind": "fat-tree", "switch": "sn4600c"}, "lossless": {}},
    )
    bp["pools"][0] = {
        "name": "gpu",
        "count": 2,
        "spec": {
            "gpu": "a100-40",
            "gpus": 8,
            "gpu_interconnect": "nvlink3",
            "nvlink_domain_gpus": 8,
            "nvswitches": 6,
            "pcie_gen": 4,
            "power_kw": 6.5,
            "rack_units": 4,
            "nics": [{"purpose": "compute", "model": "cx6-dx", "count": 16, "ports": 1, "speed_gbps": 100}],
        },
    }
    from ruamel.yaml import YAML

    path = tmp_path / "oci.yaml"
    with path.open("w") as fh:
        YAML().dump(bp, fh)
    main(["acceptance-report", str(path), "--results", str(results), "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    runs = {Path(r["file"]).name: r for r in out["runs"]}
    assert runs["tree.txt"]["nccl_algo"] == "Tree"
    assert {s["algorithm"] for s in runs["tree.txt"]["sizes"]} == {"tree"}
    assert "NCCL_ALGO=NVLS" in runs["nvls.txt"]["error"]


def _b200_nodes(tmp_path: Path, nodes: int):  # type: ignore[no-untyped-def]
    tmp_path.mkdir(parents=True, exist_ok=True)
    cluster, plan, _ = build(server_nodes("dgx-b200", nodes, NDR if nodes > 1 else None), tmp_path)
    return system_for(cluster, plan, nccl_version="2.28.9")


def test_tree_beyond_two_nodes_runs_at_nccls_per_channel_maximum(tmp_path: Path) -> None:
    """Forced trees between B200 nodes (Together's report, NCCL 2.28.9, 8 × NDR a node) run 192-196 GB/s
    on 4 to 64 nodes: NCCL 2.28.7's perChMaxTreeBws for Blackwell beyond two nodes, 24 GB/s, over the 8
    channels its graph has (one a NIC, not duplicated: 45 GB/s > 25 but < 50 on sm90+ with 8 channels).
    Closed form: tree algbw = 8 × 24 / 2 = 96 GB/s, busbw = 96 × 2 × 31/32 on 4 nodes. On two nodes the
    table does not hold the run (the tree effect: forced trees beat it), only NCCL's choice."""
    system = _b200_nodes(tmp_path / "b", 4)
    four = job_for(system, 4)
    assert four.tree_channel_cap == pytest.approx(8 * 24.0)
    tree = estimate("all_reduce", 32 * GIB, four, algorithms=("tree",), protocols=("simple",))
    assert tree.bottleneck == "Simple per-channel maximum"
    assert tree.algbw_gbytes == pytest.approx(96.0, rel=0.01)  # the latency is 0.1 % of 32 GiB's time
    assert tree.busbw_gbytes == pytest.approx(96.0 * 2 * 31 / 32, rel=0.01)
    two = job_for(system, 2)
    assert two.tree_channel_cap == pytest.approx(8 * 42.8)
    forced = estimate("all_reduce", 32 * GIB, two, algorithms=("tree",), protocols=("simple",))
    assert forced.bottleneck != "Simple per-channel maximum"


def test_tree_on_one_node_is_the_chain_of_its_gpus(tmp_path: Path) -> None:
    """NCCL runs NCCL_ALGO=Tree on one node (Together's B200 node: 555.81 GB/s, the ring 698.39): the chain
    of the 8 GPUs, each sending S up and S down its NVLink, so algbw = 0.92 (tuning.cc Tree busBw × .92)
    × NVLink / 2 and busbw = that × 2 × 7/8; LL128 at 7/9 of it (tuning.cc: nNodes == 1 ? 7.0/9.0). NCCL's
    own choice on one node stays NVLS / the ring."""
    job = job_for(_b200_nodes(tmp_path, 1))
    nvlink = job.intra.gbytes
    simple = estimate("all_reduce", 32 * GIB, job, algorithms=("tree",), protocols=("simple",))
    assert simple.algbw_gbytes == pytest.approx(0.92 * nvlink / 2, rel=0.01)
    assert 0.92 * nvlink * 7 / 8 * 0.99 < simple.busbw_gbytes < 555.81 * 1.15
    ll128 = estimate("all_reduce", 32 * GIB, job, algorithms=("tree",), protocols=("ll128",))
    assert ll128.algbw_gbytes == pytest.approx(0.92 * 7 / 9 * nvlink / 2, rel=0.01)
    assert estimate("all_reduce", 32 * GIB, job).algorithm != "tree"
