"""NCCL_MIN_NCHANNELS (`estimate --min-channels`, and read from a run's output by `acceptance-report`).

NCCL runs each searched channel twice between nodes, twice again on sm90+ while the ring graph's per-channel
speed is above 45 GB/s and fewer than 16 run (NVIDIA/nccl src/graph/connect.cc ncclTopoPostset), and copies
channels up to NCCL_MIN_NCHANNELS. The per-channel LL128 maxima of tuning.cc then hold for that many channels
in what the run reaches, while NCCL's tuner keeps counting its graph's. Oracles: the figures are worked by hand
from the search.cc / tuning.cc numbers of perf.yaml (8 × H100 with 8 NDR NICs: ring graph 8 channels × 45
GB/s, Hopper perChMaxRingLL128Bw 36.7 GB/s, LL128 × 0.92) and, for the report, from the estimate path."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from nccl_text import nccl_text
from perf_blueprints import build, server_nodes
from ruamel.yaml import YAML

from blueprints.catalog.perf import perf_data
from generator.cli import main
from generator.foreign import ForeignInputError
from generator.perf.channels import Graph, run_channels
from generator.perf.collectives import candidates, estimate
from generator.perf.nccl_results import read_runs
from generator.perf.predict import RunSettings, job_for, sweep
from generator.perf.system import PerfError, system_for
from generator.pipeline import load_and_resolve
from generator.plan.build import build_plan

GIB = 1 << 30
NDR = {
    "technology": "infiniband-ndr",
    "topology": {"kind": "fat-tree", "switch": "qm9700", "rail_optimized": True},
    "subnet_manager": {"kind": "opensm"},
}
HOSTS = ["dgx01", "dgx02"]
ROWS = [(1 << 28, 300.0), (GIB, 330.0)]


def test_the_channels_nccl_runs_by_default() -> None:
    perf = perf_data()
    # 8 × H100: the graph (8 × 45) is not duplicated (sm90, < 50 GB/s, > 4 channels); it runs twice: 16;
    # 45 GB/s is not above 45, so no second doubling
    assert run_channels(Graph(8, 45.0), 90, perf) == 16
    # five channels of 48 GB/s on sm90: not duplicated, twice = 10, and 48 > 45 with fewer than 16: 20
    assert run_channels(Graph(5, 48.0), 90, perf) == 20
    # the same graph before sm90 is duplicated (10 × 24) and runs twice: 20, with no sm90 doubling
    assert run_channels(Graph(5, 48.0), 80, perf) == 20
    # 16 channels of 24 GB/s (not duplicated: < 25 GB/s) would run 32: MAXCHANNELS (32 in 2.20)
    assert run_channels(Graph(16, 24.0), 90, perf) == 32


def _ring_ll128_bus(job, collective: str = "all_reduce") -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """(bus GB/s the ring LL128 candidate reaches, the bus GB/s NCCL's tuner believes it has)."""
    cand = next(c for c in candidates(collective, job) if c.algorithm == "ring" and c.protocol == "ll128")
    factor = 2 * (job.ranks - 1) / job.ranks
    return cand.algbw.gbytes * factor, min(cand.algbw.gbytes, cand.tuner_cap_gbytes) * factor


def test_more_channels_lift_the_ll128_maximum_not_the_links(tmp_path: Path) -> None:
    cluster, plan, _ = build(server_nodes("dgx-h100", 2, NDR), tmp_path)
    system = system_for(cluster, plan)
    default = job_for(system, 2)
    # NCCL's default: 8 graph channels × 36.7 = 293.6 GB/s, under LL128's 0.92 × 360 (the ring graph)
    reached, believed = _ring_ll128_bus(default)
    assert reached == pytest.approx(8 * 36.7) and believed == pytest.approx(8 * 36.7)
    # 32 channels, twice the 16 NCCL runs: the maximum is 587.2, so the links bind: 0.92 × 8 × 45
    more = job_for(system, 2, min_channels=32)
    reached, believed = _ring_ll128_bus(more)
    assert reached == pytest.approx(0.92 * 8 * 45.0)
    assert believed == pytest.approx(8 * 36.7)  # NCCL's tuner still counts its graph's 8 channels
    # the tree's LL128 maximum is lifted the same way
    tree = {
        j: next(c for c in candidates("all_reduce", j) if (c.algorithm, c.protocol) == ("tree", "ll128"))
        for j in (default, more)
    }
    assert tree[more].algbw.gbytes > tree[default].algbw.gbytes
    # asking for no more than NCCL runs, or beyond MAXCHANNELS, changes nothing / as much as 32
    assert job_for(system, 2, min_channels=16) == default
    assert job_for(system, 2, min_channels=64).channel_cap_scale == more.channel_cap_scale == 2.0
    forced = estimate("all_reduce", 8 * GIB, more, algorithms=("ring",), protocols=("ll128",))
    plain = estimate("all_reduce", 8 * GIB, default, algorithms=("ring",), protocols=("ll128",))
    assert forced.busbw_gbytes > 1.1 * plain.busbw_gbytes


def test_min_channels_within_one_domain_or_below_one_is_refused(tmp_path: Path) -> None:
    cluster, plan, _ = build(server_nodes("dgx-h100", 2, NDR), tmp_path)
    system = system_for(cluster, plan)
    with pytest.raises(PerfError, match="--min-channels"):
        sweep(system, "all_reduce", [GIB], 1, settings=RunSettings(min_channels=32))
    with pytest.raises(PerfError, match="--min-channels must be at least 1"):
        job_for(system, 2, min_channels=0)


def test_estimate_cli_min_channels(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    bp = root / "examples" / "azure-ndh100v5.yaml"
    cmd = [sys.executable, "-m", "generator.cli", "estimate", str(bp), "--sizes", "8G", "--nodes", "2"]
    cmd += ["--algo", "Ring", "--proto", "LL128", "--format", "json"]

    def busbw(*extra: str) -> tuple[float, str]:
        out = subprocess.run([*cmd, *extra], capture_output=True, text=True, cwd=root)
        assert out.returncode == 0, out.stderr
        doc = json.loads(out.stdout)["blueprints"][0]
        return doc["collectives"]["all_reduce"][0]["busbw_gbytes"], doc.get("settings", "")

    plain, _ = busbw()
    more, settings = busbw("--min-channels", "32")
    assert "NCCL_MIN_NCHANNELS=32" in settings and more > 1.1 * plain
    bad = subprocess.run([*cmd, "--min-channels", "0"], capture_output=True, text=True, cwd=root)
    assert bad.returncode == 2 and "--min-channels: `0`: give a whole number of channels from 1" in bad.stderr


def _with_info(text: str, *info: str) -> str:
    lines = text.split("\n")
    return "\n".join([lines[0], *(f"dgx01:4242:4242 [0] NCCL INFO {i}" for i in info), *lines[1:]])


def test_acceptance_report_follows_the_runs_min_channels(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    bp = tmp_path / "dgx.yaml"
    with bp.open("w") as fh:
        YAML().dump(server_nodes("dgx-h100", 2, NDR), fh)
    results = tmp_path / "results"
    results.mkdir()
    base = nccl_text(HOSTS, 8, ROWS)
    forced = ("NCCL_ALGO set by environment to Ring", "NCCL_PROTO set by environment to LL128")
    (results / "plain.txt").write_text(_with_info(base, *forced))
    more = _with_info(base, *forced, "NCCL_MIN_NCHANNELS set by environment to 32.")
    (results / "more.txt").write_text(more)
    (run,) = read_runs(results / "more.txt")
    assert run.settings.min_channels == 32
    assert "NCCL_MIN_NCHANNELS=32" in run.settings.text()
    assert main(["acceptance-report", str(bp), "--results", str(results), "--format", "json"]) in (0, 1)
    runs = {Path(r["file"]).stem: r for r in json.loads(capsys.readouterr().out)["runs"]}
    assert runs["more"]["nccl_min_nchannels"] == 32 and "nccl_min_nchannels" not in runs["plain"]
    got = {k: next(s for s in r["sizes"] if s["size_bytes"] == GIB) for k, r in runs.items()}
    # the same prediction as the estimate path with the same options
    cluster = load_and_resolve(str(bp))[1]
    system = system_for(cluster, build_plan(cluster), nccl_version="2.26.2")
    for name, least in (("plain", None), ("more", 32)):
        job = job_for(system, 2, ranks_per_node=8, min_channels=least)
        est = estimate("all_reduce", GIB, job, algorithms=("ring",), protocols=("ll128",))
        assert got[name]["predicted_busbw_gbytes"] == round(est.busbw_gbytes, 3), name
    assert got["more"]["predicted_busbw_gbytes"] > got["plain"]["predicted_busbw_gbytes"]


def test_a_min_channels_the_model_cannot_follow_is_refused_where_it_stands(tmp_path: Path) -> None:
    line = "NCCL_MIN_NCHANNELS set by environment to many."
    (tmp_path / "run.txt").write_text(_with_info(nccl_text(HOSTS, 8, ROWS), line))
    with pytest.raises(ForeignInputError) as err:
        read_runs(tmp_path / "run.txt")
    assert f"{tmp_path / 'run.txt'}:2" in str(err.value) and "NCCL_MIN_NCHANNELS `many`" in str(err.value)
    # a number NCCL takes is clamped as connect.cc clamps it (ncclMinNchannels: at most MAXCHANNELS)
    (tmp_path / "run.txt").write_text(_with_info(nccl_text(HOSTS, 8, ROWS), line.replace("many", "999")))
    (run,) = read_runs(tmp_path / "run.txt")
    assert run.settings.min_channels == 64


def test_a_json_output_records_min_channels(tmp_path: Path) -> None:
    doc = {
        "version": 2,
        "args": ["/opt/nccl-tests/build/all_reduce_perf"],
        "env": ["NCCL_MIN_NCHANNELS=32", "NCCL_PROTO=LL128"],
        "nccl_version": 22602,
        "config": {"devices": [{"rank": r, "hostname": HOSTS[r // 8]} for r in range(16)]},
        "results": [{"size": GIB, "out_of_place": {"time": 5000.0, "alg_bw": 200.0, "bus_bw": 400.0}}],
    }
    (tmp_path / "run.json").write_text(json.dumps(doc))
    (run,) = read_runs(tmp_path / "run.json")
    assert run.settings.min_channels == 32 and run.settings.proto == "LL128"
    doc["env"] = ["NCCL_MIN_NCHANNELS=0"]  # NCCL's default: no minimum
    (tmp_path / "zero.json").write_text(json.dumps(doc))
    assert read_runs(tmp_path / "zero.json")[0].settings.min_channels is None
    doc["env"] = ["NCCL_MIN_NCHANNELS=0.5"]
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    with pytest.raises(ForeignInputError, match=r"\$\.env.*NCCL_MIN_NCHANNELS `0\.5`"):
        read_runs(tmp_path / "bad.json")
