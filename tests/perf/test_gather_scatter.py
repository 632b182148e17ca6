"""all_gather and reduce_scatter per algorithm (issue 28). NCCL's tuner lists Ring and NVLS (and CollNet) for
both. Per GPU, NVLS all_gather sends S/N and receives S, reduce_scatter sends S and receives S/N, where a ring
moves (N−1)/N·S each way (sjeaugey, NVIDIA/nccl #1083), so NVLS is the slower on one node (#1047). The
expected figures are worked by hand from the H100 NVLS fact perf.yaml is fitted to (480 GB/s all_reduce busbw
on 8 GPUs, i.e. algbw 480 / (2·7/8), moving S·9/8 each way), not from the model's code."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from perf_blueprints import build, server_nodes

from generator.perf.collectives import estimate
from generator.perf.predict import job_for
from generator.perf.system import PerfError, system_for

GIB = 1 << 30
IB = {"technology": "infiniband-ndr", "topology": {"kind": "fat-tree", "switch": "qm9700"}}


def _job(tmp_path: Path, nodes: int = 1):  # type: ignore[no-untyped-def]
    cluster, plan, _ = build(server_nodes("dgx-h100", nodes, IB if nodes > 1 else None), tmp_path)
    return job_for(system_for(cluster, plan))


@pytest.mark.parametrize("collective", ["all_gather", "reduce_scatter"])
def test_nvls_moves_s_through_the_busier_direction(tmp_path: Path, collective: str) -> None:
    job = _job(tmp_path)
    nvls_algbw = 480 / (2 * 7 / 8) * 9 / 8  # S each way where all_reduce moves S·9/8: 308.6 GB/s
    est = estimate(collective, 8 * GIB, job, algorithms=("nvls",))
    assert est.algorithm == "nvls"
    assert est.busbw_gbytes == pytest.approx(nvls_algbw * 7 / 8, rel=0.01)  # ~270 GB/s


@pytest.mark.parametrize("collective", ["all_gather", "reduce_scatter"])
def test_ring_stays_the_faster_on_one_node(tmp_path: Path, collective: str) -> None:
    """#1047: one H100 server, reduce_scatter Ring 362 GB/s at 8 GiB, NVLS below it; NCCL's choice is Ring."""
    job = _job(tmp_path)
    default = estimate(collective, 8 * GIB, job)
    forced = estimate(collective, 8 * GIB, job, algorithms=("nvls",))
    assert default.algorithm == "ring"
    assert default.busbw_gbytes > forced.busbw_gbytes * 1.25


def test_no_nvls_gather_across_nodes_without_a_figure(tmp_path: Path) -> None:
    """No NVLS all_gather across nodes: NCCL up to 2.22 runs the ring for NCCL_ALGO=NVLS then (tuning.cc "at
    least set ring algo available"), 2.25 on fails the call."""
    job = _job(tmp_path, nodes=2)
    assert estimate("all_gather", GIB, job, algorithms=("nvls",)).algorithm == "ring"
    with pytest.raises(PerfError, match="no algorithm can run all_gather"):
        estimate("all_gather", GIB, replace(job, nccl_release=225), algorithms=("nvls",))
