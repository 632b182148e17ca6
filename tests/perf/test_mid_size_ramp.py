"""Issue 28, model v4: NCCL's per-channel LL128 maxima (tuning.cc) and the fitted mid-size ramp.

Expected values are computed here from the published tables and formulas, not read back from the model."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from perf_blueprints import build, nccl_with, server_nodes
from ruamel.yaml import YAML

from blueprints.catalog.perf import perf_data
from generator.perf.collectives import bus_factor, candidates, estimate, mid_size_ramp_s
from generator.perf.predict import job_for
from generator.perf.sizes import parse_size
from generator.perf.system import system_for

ROOT = Path(__file__).resolve().parents[2]
SWEEPS = YAML(typ="safe", pure=True).load(
    (Path(__file__).parent / "data" / "mid_size_ramp_sweeps.yaml").read_text()
)
NDR = {
    "technology": "infiniband-ndr",
    "topology": {"kind": "fat-tree", "switch": "qm9700", "rail_optimized": True},
}


def _job(tmp_path: Path, server: str, nodes: int, fabric: dict | None = None, nccl: str | None = None):  # type: ignore[no-untyped-def]
    cluster, plan, _ = build(server_nodes(server, nodes, fabric), tmp_path, f"{server}-{nodes}.yaml")
    return job_for(system_for(cluster, plan, nccl_version=nccl), nodes)


def _bus(cand, collective: str, ranks: int) -> float:  # type: ignore[no-untyped-def]
    return cand.algbw.gbytes * bus_factor(collective, ranks)


def test_ring_and_tree_ll128_are_held_to_nccls_per_channel_maximum(tmp_path: Path) -> None:
    """Two DGX H100 on 8 x NDR: NCCL's graph has 8 channels (45 GB/s fits 8 on 18 x 20.6 GB/s of NVLink, 48
    only 7), no duplication on sm90 under 50 GB/s; tuning.cc 2.20.3: ring LL128 ≤ 8 × 36.7, tree LL128 (two
    nodes) ≤ 8 × 36.7 GB/s of bus bandwidth."""
    job = _job(tmp_path, "dgx-h100", 2, NDR)
    cands = {(c.algorithm, c.protocol): c for c in candidates("all_reduce", job)}
    cap = 8 * 36.7
    ring = cands[("ring", "ll128")]
    assert _bus(ring, "all_reduce", 16) == pytest.approx(min(cap, 0.92 * 8 * 45.0), rel=1e-9)
    assert ring.algbw.name == "LL128 per-channel maximum"
    tree = cands[("tree", "ll128")]
    # tree .92, LL128 120/128, the lesser of the NVLink chain (NIC per GPU) and the 16 channels NCCL runs
    # between the nodes (8 searched, twice over) at what the catalogue says one Hopper channel carries
    channel = perf_data().nccl.net_channel_gbytes[90].value
    uncapped = 0.92 * (120 / 128) * min(18 * 20.6, 16 * channel)
    assert tree.algbw.gbytes == pytest.approx(min(cap, uncapped) / 2, rel=1e-9)  # NCCL: algbw = bus bw / 2


def test_ll128_cap_leaves_simple_and_fewer_channel_ampere_alone(tmp_path: Path) -> None:
    """Ampere rows of the table are 20 GB/s a channel: 4 HDR NICs give 4 channels of 24 GB/s (under 25, not
    duplicated) → ring LL128 ≤ 80 GB/s bus; Simple is not capped (its bound stays the NICs / NCCL's graph)."""
    fabric = {
        "technology": "infiniband-hdr",
        "topology": {"kind": "fat-tree", "switch": "qm8700", "rail_optimized": True},
    }
    bp = server_nodes("dgx-a100", 2, fabric)
    bp["pools"][0].pop("server")
    from blueprints.catalog import default_catalog

    srv = default_catalog().servers["dgx-a100"]
    bp["pools"][0]["spec"] = {
        "gpu": srv.gpu,
        "gpus": srv.gpus,
        "gpu_interconnect": srv.gpu_interconnect,
        "nvlink_domain_gpus": srv.nvlink_domain_gpus,
        "nvswitches": srv.nvswitches,
        "pcie_gen": srv.pcie_gen,
        "power_kw": srv.power_kw,
        "rack_units": srv.rack_units,
        "nics": [{"purpose": "compute", "model": "cx6", "count": 4, "speed_gbps": 200}],
    }
    cluster, plan, _ = build(bp, tmp_path, "a100-4hdr.yaml")
    job = job_for(system_for(cluster, plan), 2)
    cands = {(c.algorithm, c.protocol): c for c in candidates("all_reduce", job)}
    assert _bus(cands[("ring", "ll128")], "all_reduce", 16) == pytest.approx(4 * 20.0, rel=1e-9)
    assert cands[("ring", "simple")].algbw.name != "LL128 per-channel maximum"


def test_ramp_closed_form_and_it_never_changes_the_algorithm(tmp_path: Path) -> None:
    job = _job(tmp_path, "dgx-h100", 1)
    perf = perf_data()
    nc = perf.nccl
    # a ramp 50 times the fitted one still leaves NCCL's choice as it is without any ramp
    huge = nccl_with(perf, mid_size_ramp_factor=50 * nc.mid_size_ramp_factor.value)
    bare = nccl_with(perf, mid_size_ramp_factor=0.0)
    for size in (1 << 20, 16 << 20, 1 << 30, 8 << 30):
        est = estimate("all_reduce", size, job)
        choices = {
            (e.algorithm, e.protocol)
            for e in (est, *(estimate("all_reduce", size, job, perf=p) for p in (huge, bare)))
        }
        assert len(choices) == 1
        chosen = choices.pop()
        best = next(c for c in candidates("all_reduce", job) if (c.algorithm, c.protocol) == chosen)
        lat = best.latency_at(size)
        ramp_us = nc.mid_size_ramp_factor.value * min(lat, nc.mid_size_ramp_latency_cap_us.value)
        ramp_us *= math.sqrt(min(1.0, size / nc.mid_size_ramp_bytes.value))
        overhead_us = nc.launch_overhead_us.value
        assert est.time_s == pytest.approx(best.time_s(size) + (ramp_us + overhead_us) * 1e-6, rel=1e-12)
    # saturated beyond the ramp size; a many-rank ring pays at most factor × cap
    assert mid_size_ramp_s(10_000.0, 4 << 30, perf) == pytest.approx(
        nc.mid_size_ramp_factor.value * nc.mid_size_ramp_latency_cap_us.value * 1e-6
    )


def test_only_all_reduce_pays_the_ramp(tmp_path: Path) -> None:
    """The ramp is fitted to all_reduce sweeps: an all_gather or alltoall of two DGX H100 on NDR takes its
    candidate's latency + S/bandwidth and the per-call overhead, nothing more."""
    job = _job(tmp_path, "dgx-h100", 2, NDR)
    overhead = perf_data().nccl.launch_overhead_us.value * 1e-6
    for collective in ("all_gather", "alltoall"):
        for size in (1 << 20, 16 << 20, 128 << 20):
            est = estimate(collective, size, job)
            best = min(candidates(collective, job), key=lambda c: c.tuner_time_s(size))
            assert est.time_s == pytest.approx(best.time_s(size) + overhead, rel=1e-12)
    reduce = estimate("all_reduce", 16 << 20, job)
    best = min(candidates("all_reduce", job), key=lambda c: c.tuner_time_s(16 << 20))
    assert reduce.time_s > best.time_s(16 << 20) + overhead * 1.01


def _sweep_jobs(tmp_path: Path) -> list:  # type: ignore[type-arg]
    return [(_job(tmp_path, sw["server"], 1, nccl=sw["nccl"]), sw["busbw"]) for sw in SWEEPS["sweeps"]]


# The ramp's factor and size are fitted together with the per-call overhead: test_launch_overhead.py re-runs
# that grid.


def test_ramp_cap_is_the_largest_latency_of_the_fitted_sweeps(tmp_path: Path) -> None:
    jobs = _sweep_jobs(tmp_path)
    overhead = (
        perf_data().nccl.launch_overhead_us.value
    )  # the estimate's fixed part holds NCCL's latency + it
    latencies = [
        estimate("all_reduce", parse_size(size), job).latency_us - overhead
        for job, sweep in jobs
        for size in sweep
    ]
    assert max(latencies) == pytest.approx(perf_data().nccl.mid_size_ramp_latency_cap_us.value, abs=0.05)


def test_ramp_sweeps_stay_out_of_the_evaluation_set() -> None:
    doc = YAML(typ="safe", pure=True).load((ROOT / "benchmarks" / "evaluation.yaml").read_text())
    evaluated = {e["source"] for e in doc["measurements"]}
    fitted = {sw["source"] for sw in SWEEPS["sweeps"]}
    assert fitted and not fitted & evaluated
    # nor the same results page at another commit or in a fork of the guide (its GB200 page was not fitted)
    pages = {s.rsplit("/", 1)[-1] for s in fitted}
    assert pages == {"ND_H100_v5_results.md", "ND_H200_v5_results.md", "ND_A100_v4_results.md"}
    assert not any(s.rsplit("/", 1)[-1] in pages for s in evaluated)
