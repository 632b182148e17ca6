"""NVLS inside one NVLink domain that spans trays (issue 28: GB200 NVL72). NCCL 2.20's tuner turns NVLS off on
any multi-node NVLink domain ("MNNVL: NVLS not yet supported"); from 2.25 a domain counts as one node and only
NVLS across nodes without IB SHARP is off (tuning.cc 2.25.1), so a job inside one domain runs NVLS. Checked
against published runs outside the evaluation set (tests/perf/data/mnnvl_nvls_runs.yaml), with the NVLS figure
worked by hand from catalogue facts: 900 GB/s of NVLink 5 a GPU, the H100 NVLS fact (480 GB/s busbw on 8 GPUs
over 450 GB/s of NVLink 4) and NCCL's Blackwell/Hopper nvlsEfficiency ratio (0.74 / 0.85)."""

from __future__ import annotations

from pathlib import Path

import pytest
from perf_blueprints import build, server_nodes
from ruamel.yaml import YAML

from generator.perf.collectives import estimate
from generator.perf.predict import job_for
from generator.perf.sizes import parse_size
from generator.perf.system import system_for

NDR = {
    "technology": "infiniband-ndr",
    "topology": {"kind": "fat-tree", "switch": "qm9700", "rail_optimized": True},
}
DATA = YAML(typ="safe", pure=True).load((Path(__file__).parent / "data" / "mnnvl_nvls_runs.yaml").read_text())
EVALUATION = Path(__file__).parents[2] / "benchmarks" / "evaluation.yaml"
GIB = 1 << 30


def _nvls_busbw_by_hand(ranks: int) -> float:
    """NVLS all_reduce busbw: the algbw of the 8-GPU H100 fact (480 · 8/14 of 450 GB/s) as a share of NVLink,
    times 0.74/0.85 for Blackwell, on 900 GB/s, times 2(k−1)/k."""
    hopper = 480.0 * 8 / 14 / 450.0
    blackwell = hopper * 0.74 / 0.85
    return 900.0 * blackwell * 2 * (ranks - 1) / ranks


def _system(tmp_path: Path, trays: int, nccl: str):  # type: ignore[no-untyped-def]
    cluster, plan, _ = build(server_nodes("gb200-nvl72-tray", trays, NDR), tmp_path)
    return system_for(cluster, plan, nccl_version=nccl)


def test_the_runs_stay_out_of_the_evaluation_set() -> None:
    sources = [ln for ln in EVALUATION.read_text().splitlines() if ln.strip().startswith("source:")]
    assert sources
    for run in DATA["runs"]:
        assert not [ln for ln in sources if run["source"] in ln]


def test_two_trays_run_nvls_from_nccl_2_25(tmp_path: Path) -> None:
    system = _system(tmp_path, 2, "2.27.7")
    est = estimate("all_reduce", 16 * GIB, job_for(system, 2))
    assert est.algorithm == "nvls"
    assert est.busbw_gbytes == pytest.approx(_nvls_busbw_by_hand(8), rel=0.01)  # ~836 GB/s
    sixteen = estimate("all_reduce", 16 * GIB, job_for(_system(tmp_path, 16, "2.27.7"), 16))
    assert sixteen.busbw_gbytes == pytest.approx(
        _nvls_busbw_by_hand(64), rel=0.01
    )  # ~940, not the link law's 1,041
    assert any("runs NVLS inside one NVLink domain" in n for n in system.notes)


def test_before_2_25_the_trays_run_rings(tmp_path: Path) -> None:
    system = _system(tmp_path, 2, "2.21.5")
    est = estimate("all_reduce", 16 * GIB, job_for(system, 2))
    assert est.algorithm == "ring"
    assert est.busbw_gbytes <= 18 * 40.1 + 1e-6  # NCCL's NVLink 5 count bounds the ring
    assert any("MNNVL: NVLS not yet supported" in n for n in system.notes)


def test_across_domains_nvls_tree_stays_off(tmp_path: Path) -> None:
    system = _system(tmp_path, 36, "2.27.7")  # two racks of 18 trays
    job = job_for(system, 36)
    assert job.units == 2 and job.nvls is None
    assert estimate("all_reduce", 16 * GIB, job).algorithm in ("ring", "tree")


@pytest.mark.parametrize(
    ("run", "size"), [(i, s) for i, r in enumerate(DATA["runs"]) for s in r["busbw"]], ids=str
)
def test_published_runs_inside_one_domain(tmp_path: Path, run: int, size: str) -> None:
    entry = DATA["runs"][run]
    system = _system(tmp_path, entry["trays"], entry["nccl"])
    est = estimate("all_reduce", parse_size(size), job_for(system, entry["trays"]))
    measured = entry["busbw"][size]
    assert est.algorithm == "nvls"
    if size in entry.get("beyond_model", ()):
        # the data file's note: no ramp for NVLS over a large domain, so these stay high (kept true here)
        assert est.busbw_gbytes > 1.15 * measured
    else:
        assert est.busbw_gbytes == pytest.approx(measured, rel=0.15)  # the band
