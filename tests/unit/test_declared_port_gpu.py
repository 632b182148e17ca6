"""A declared port's `gpu` is one of the server's GPUs: compute ports are put in rail order by it."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli

BLUEPRINT = """apiVersion: cluster-blueprint/v1
name: ports
site: {name: dc1, rows: 1, racks_per_row: 4, rack: {units: 48, power_kw: 44}}
pools:
  - name: gpu
    role: gpu
    count: 2
    server: pcie-h100-8
    ports:
      - {role: compute, rdma: mlx5_0, netdev: ibs1f0, gpu: 0}
      - {role: compute, rdma: mlx5_1, netdev: ibs2f0, gpu: GPU1}
      - {role: compute, rdma: mlx5_2, netdev: ibs3f0, gpu: 2}
      - {role: compute, rdma: mlx5_3, netdev: ibs4f0, gpu: 3}
  - {name: mgmt, role: management, count: 1, server: cpu-1u}
fabrics:
  compute:
    technology: infiniband-ndr
    topology: {kind: fat-tree, tiers: 2, switch: qm9700, rail_optimized: true}
    subnet_manager: {kind: opensm}
"""


def _write(tmp_path: Path, gpu: str) -> Path:
    bp = tmp_path / "ports.yaml"
    bp.write_text(BLUEPRINT.replace("GPU1", gpu))
    return bp


@pytest.mark.parametrize("gpu", ["8", "9"])
def test_a_gpu_the_server_does_not_have_is_a_located_error(tmp_path: Path, gpu: str) -> None:
    """gpu 9 on an 8-GPU server sorted its port last: rail 1 became rail 3, silently."""
    bp = _write(tmp_path, gpu)
    for command in ("validate", "generate"):
        args = (command, str(bp)) if command == "validate" else (command, str(bp), "-o", str(tmp_path / "b"))
        code, out, err = run_cli(*args)
        text = out + err
        line = next(i for i, ln in enumerate(bp.read_text().splitlines(), 1) if f"gpu: {gpu}}}" in ln)
        assert code in (1, 2) and f"{bp}:{line}:55: error SCHEMA pool `gpu`: ports[1]" in text, text
        assert f"paired with gpu {gpu}, and its server has GPUs 0-7" in text and "Traceback" not in text
    assert not (tmp_path / "b").exists()


@pytest.mark.parametrize("gpu", ["7", "0"])
def test_gpus_of_the_server_are_accepted_several_ports_on_one_too(tmp_path: Path, gpu: str) -> None:
    code, out, err = run_cli("validate", str(_write(tmp_path, gpu)))
    assert code == 0 and "SCHEMA" not in out + err, out + err
