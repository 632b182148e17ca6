"""Point-to-point traffic over NVLink (issue 28: alltoall per algorithm). NCCL's alltoall is send/recv to every
peer; over NVLink it reaches a share of the per-link figure NCCL counts (perf.yaml p2p_nvlink_efficiency,
[FITTED]) where rings reach the figure itself. The fit is re-run here from its sweeps, which stay out of the
evaluation set, and the expected busbw is worked by hand from catalogue facts (18 NVLinks × NCCL's 20.6 GB/s on
H100), not from the model's code."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest
from perf_blueprints import build, server_nodes
from ruamel.yaml import YAML

from blueprints.catalog.perf import by_capability, perf_data
from generator.perf.collectives import estimate
from generator.perf.predict import job_for
from generator.perf.system import system_for

DATA = YAML(typ="safe", pure=True).load(
    (Path(__file__).parent / "data" / "p2p_nvlink_sweeps.yaml").read_text()
)
EVALUATION = Path(__file__).parents[2] / "benchmarks" / "evaluation.yaml"
GIB = 1 << 30


def _job(tmp_path: Path, server: str):  # type: ignore[no-untyped-def]
    cluster, plan, _ = build(server_nodes(server, 1), tmp_path)
    return job_for(system_for(cluster, plan))


def test_fit_reproduces_the_constant() -> None:
    perf = perf_data()
    per_link = by_capability(perf.nvlink.gbytes_per_link, 100)  # GB300 is compute capability 10.x
    assert per_link is not None and per_link.value == DATA["nccl_gbytes_per_link"]
    counted = DATA["nvlink_links"] * per_link.value  # 721.8 GB/s a GPU
    share = statistics.median(sw["busbw"] / counted for sw in DATA["sweeps"])
    assert share == pytest.approx(0.924, abs=0.001)
    assert perf.nccl.p2p_nvlink_efficiency.value == round(share, 2)


def test_fit_sweeps_stay_out_of_the_evaluation_set() -> None:
    sources = [ln for ln in EVALUATION.read_text().splitlines() if ln.strip().startswith("source:")]
    assert sources  # the set is read
    assert not [ln for ln in sources if "README-GB300" in ln or DATA["source"] in ln]


def test_alltoall_over_nvlink_reaches_the_share(tmp_path: Path) -> None:
    job = _job(tmp_path, "dgx-h100")
    est = estimate("alltoall", 16 * GIB, job)
    assert est.algorithm == "p2p"
    assert est.busbw_gbytes == pytest.approx(18 * 20.6 * 0.92, rel=0.01)  # 341.1 GB/s (#2169: 334.9 on 4)
    assert "point-to-point share" in est.limit


def test_rings_keep_the_full_count(tmp_path: Path) -> None:
    job = _job(tmp_path, "dgx-h100")
    est = estimate("all_gather", 16 * GIB, job, algorithms=("ring",))
    assert est.busbw_gbytes == pytest.approx(18 * 20.6, rel=0.01)  # 370.8 GB/s (#1047: 362 reduce_scatter)


def test_pcie_point_to_point_is_not_scaled(tmp_path: Path) -> None:
    job = _job(tmp_path, "pcie-l40s-8")
    assert job.intra_class == "pci"
    est = estimate("alltoall", 16 * GIB, job)
    assert "point-to-point share" not in est.limit
