"""NCCL's PAT all_gather / reduce_scatter at one rank per node (perf.yaml nccl.pat*).

The oracle is NCCL's own formula, typed here from the source rather than read from the catalogue:
src/graph/tuning.cc 2.25.1 (commit 80f6bda4) and src/tuning/pat.cc 2.31.2 (commit 889806836) give PAT a latency
of 8 + log2i(nNodes) * (interLat / 3.5) + nRanks * 2.8 µs, where interLat is the network's Tree/Simple step (14 µs;
PAT/Simple in 2.31.2, also 14) plus the transport's latency twice (2.25.1: once more for Simple's flush) or once
(2.31.2), and a bus bandwidth of 0.75 × the tree graph's channels × bandwidth, which NCCL uses as it is.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli
from perf_blueprints import reproduced

from generator.perf.collectives import candidates
from generator.perf.predict import job_for
from generator.perf.system import system_for
from generator.pipeline import load_and_resolve
from generator.plan.build import plan_or_raise

SUPERPOD = EXAMPLES / "superpod-h100-4su.yaml"  # DGX H100, 8 x NDR InfiniBand a node


def _pat_job(version: str, nodes: int = 16, ranks_per_node: int = 1):
    loaded, cluster = load_and_resolve(str(SUPERPOD))
    system = system_for(cluster, plan_or_raise(cluster, loaded.locate), nccl_version=version)
    return job_for(system, nodes, ranks_per_node=ranks_per_node)


@pytest.mark.parametrize(("version", "latency_inter_count"), [("2.25.1", 2), ("2.31.2", 1)])
def test_pat_latency_and_bandwidth_are_nccls_formula(version: str, latency_inter_count: int) -> None:
    job = _pat_job(version)
    (pat,) = [c for c in candidates("all_gather", job) if c.algorithm == "pat"]
    inter = 14.0 + latency_inter_count * job.net_latency_us
    assert job.net_latency_us > 0  # the fabric's traversal latency takes latencyInter's place in the time
    assert pat.protocol == "simple"
    assert pat.latency_us == pytest.approx(8 + math.log2(16) * inter / 3.5 + 16 * 2.8)
    # one NDR NIC a rank: 400 Gb/s at the 94 % protocol efficiency the example's network line prints, below
    # NCCL's one 48 GB/s channel of the ring (and tree) graph
    assert pat.algbw.gbytes == pytest.approx(0.75 * 400 / 8 * 0.94)


def _estimate(*args: str) -> list[dict]:
    code, out, err = run_cli("estimate", str(SUPERPOD), "--format", "json", "-q", *args)
    assert code == 0, err
    doc = json.loads(out)["blueprints"][0]
    return next(iter(doc["collectives"].values()))


@pytest.mark.parametrize("collective", ["all_gather", "reduce_scatter"])
def test_nccl_runs_pat_for_small_messages_at_one_rank_per_node(collective: str) -> None:
    args = ("--collective", collective, "--sizes", "64K,8G", "--nodes", "16")
    small, large = _estimate(*args, "--ranks-per-node", "1", "--nccl-version", "2.25.1")
    assert small["algorithm"] == "pat"
    assert large["algorithm"] == "ring"  # PAT's 0.75 of the graph loses to the ring's full bandwidth
    # before PAT (2.22.3), with more than one rank per node, or for all_reduce: never PAT
    (older, _) = _estimate(*args, "--ranks-per-node", "1", "--nccl-version", "2.22.3")
    (packed, _) = _estimate(*args, "--nccl-version", "2.25.1")
    assert older["algorithm"] != "pat" and packed["algorithm"] != "pat"
    (reduce,) = _estimate(
        "--collective", "all_reduce", "--sizes", "64K", "--nodes", "16", "--ranks-per-node", "1",
        "--nccl-version", "2.25.1",
    )  # fmt: skip
    assert reduce["algorithm"] != "pat"


def test_pat_forced_where_nccl_cannot_run_it_is_refused() -> None:
    code, out, err = run_cli(
        "estimate", str(SUPERPOD), "--collective", "all_gather", "--sizes", "64K", "--nodes", "16",
        "--algo", "pat", "--nccl-version", "2.25.1",
    )  # fmt: skip
    assert code == 2 and "Traceback" not in out + err
    assert "no algorithm can run all_gather on 128 ranks with pat" in err
    assert "at one rank per node" in err


def test_no_pat_over_a_plugin_that_offloads_to_the_gpu(tmp_path: Path) -> None:
    """GPUDirect-TCPX's plugin has NCCL's kernels unpack what it receives (netDeviceType UNPACK): NCCL's
    ncclPatEnable refuses PAT there, even forced."""
    path = reproduced("skypilot-gcp-a3high-tcpx-allreduce-2g", tmp_path)
    base = ("estimate", str(path), "--collective", "all_gather", "--sizes", "64K", "--nodes", "2")
    args = (*base, "--ranks-per-node", "1", "--nccl-version", "2.25.1")
    code, _, err = run_cli(*args, "--algo", "pat")
    assert code == 2 and "with pat" in err
    code, out, err = run_cli(*args, "--algo", "ring,pat", "--format", "json", "-q")
    assert code == 0, err
    (row,) = json.loads(out)["blueprints"][0]["collectives"]["all_gather"]
    assert row["algorithm"] == "ring"


def test_rccl_runs_no_pat_unless_asked(tmp_path: Path) -> None:
    """AMD's RCCL keeps NCCL's PAT code with NCCL_PAT_ENABLE defaulting to 0 (ROCm/rccl tuning.cc): two MI300X
    nodes at one rank each run a ring, and a forced PAT is refused, as NCCL_ALGO=PAT would find none."""
    path = reproduced("mi300x-hisohara-aac10-2node-allreduce-1m", tmp_path)
    args = ("estimate", str(path), "--collective", "all_gather", "--sizes", "64K", "--nodes", "2")
    args = (*args, "--ranks-per-node", "1", "--nccl-version", "2.25.1")
    code, out, err = run_cli(*args, "--format", "json", "-q")
    assert code == 0, err
    (row,) = json.loads(out)["blueprints"][0]["collectives"]["all_gather"]
    assert row["algorithm"] == "ring"
    code, _, err = run_cli(*args, "--algo", "pat")
    assert code == 2 and "with pat" in err
