"""NCCL_ALGO steers collectives, not point-to-point work: nccl-tests' alltoall is grouped ncclSend/ncclRecv, which
NCCL plans without its collective tuner. So a transport profile that names algorithms (GKE's TCPXO profile:
Ring,Tree) or a run's own NCCL_ALGO leaves alltoall running; the model used to refuse it (exit 2, "no algorithm
can run alltoall") on every A3 Mega and A3 High blueprint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli
from perf_blueprints import reproduced


def _alltoall(path: Path, *extra: str) -> tuple[int, dict, str]:
    code, out, err = run_cli(
        "estimate", str(path), "--collective", "alltoall", "--sizes", "128M", "--nodes", "2",
        "--format", "json", "-q", *extra,
    )  # fmt: skip
    rows = json.loads(out)["blueprints"][0]["collectives"]["alltoall"] if code == 0 else {}
    return code, rows, err


@pytest.mark.parametrize(
    "entry", ["a3mega-fork-tcpxo-allreduce-128m", "skypilot-gcp-a3high-tcpx-allreduce-2g"]
)
def test_a_transport_profile_that_names_algorithms_leaves_alltoall_running(
    entry: str, tmp_path: Path
) -> None:
    code, rows, err = _alltoall(reproduced(entry, tmp_path))
    assert code == 0, err
    (row,) = rows
    assert row["algorithm"] == "p2p" and row["busbw_gbytes"] > 0


def test_a_runs_nccl_algo_does_not_change_alltoall(tmp_path: Path) -> None:
    path = reproduced("xxrjun-c00-h100-2node-alltoall-128m", tmp_path)
    code, free, err = _alltoall(path)
    assert code == 0, err
    code, ring, err = _alltoall(path, "--algo", "ring")
    assert code == 0, err
    assert ring == free
