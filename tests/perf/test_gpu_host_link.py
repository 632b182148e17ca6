"""A GPU's own host PCIe link carries everything it sends to NICs and, without NVLink, to its peers: a node's
network cannot move more than its GPUs' links together, and an alltoall on PCIe-only GPUs no more than one link
per rank. Found by a sweep of `estimate` inputs: one H100 behind eight 400G NICs was predicted a 322 GB/s
all_gather, and eight L40S across two nodes an alltoall twice their PCIe link."""

from __future__ import annotations

from pathlib import Path

import pytest
from perf_blueprints import build, server_nodes

from generator.perf.collectives import estimate
from generator.perf.predict import job_for
from generator.perf.system import pcie_gbytes, system_for

NDR = {
    "technology": "infiniband-ndr",
    "topology": {"kind": "fat-tree", "switch": "qm9700", "rail_optimized": True},
}
GIB = 1 << 30


def _spec(gpu: str, gpus: int, interconnect: str, domain: int, pcie_gen: int) -> dict:
    bp = server_nodes("dgx-h100", 2, NDR)
    bp["pools"][0].pop("server")
    bp["pools"][0]["spec"] = {
        "gpu": gpu, "gpus": gpus, "gpu_interconnect": interconnect, "nvlink_domain_gpus": domain,
        "nvswitches": 4 if interconnect.startswith("nvlink") else 0, "pcie_gen": pcie_gen, "power_kw": 10.2,
        "rack_units": 8, "nics": [{"purpose": "compute", "model": "cx7", "count": 8, "speed_gbps": 400}],
    }  # fmt: skip
    return bp


def test_one_gpu_behind_eight_nics_is_held_to_its_own_link(tmp_path: Path) -> None:
    cluster, plan, _ = build(_spec("h100-sxm", 1, "nvlink4", 1, 5), tmp_path)
    system = system_for(cluster, plan)
    link = pcie_gbytes(5, 16)  # gpus.yaml h100-sxm: PCIe Gen5 x16
    assert system.net is not None and system.net.gbytes == pytest.approx(link)
    assert "own PCIe" in system.net.name
    two = job_for(system, 2)
    assert estimate("all_gather", 8 * GIB, two).busbw_gbytes <= link


def test_an_alltoall_on_pcie_gpus_moves_at_most_one_link_per_rank(tmp_path: Path) -> None:
    cluster, plan, _ = build(_spec("l40s", 8, "pcie4", 1, 4), tmp_path)
    system = system_for(cluster, plan)
    link = pcie_gbytes(4, 16)  # gpus.yaml l40s: PCIe Gen4 x16
    one = estimate("alltoall", 8 * GIB, job_for(system, 1)).busbw_gbytes
    two = estimate("alltoall", 8 * GIB, job_for(system, 2)).busbw_gbytes
    assert one <= link + 1e-6 and two <= link + 1e-6
    # a second node adds NICs, not PCIe: the rank's link binds both
    assert two == pytest.approx(one, rel=0.1)


def test_nvlink_nodes_with_a_nic_per_gpu_are_not_held_by_it(tmp_path: Path) -> None:
    """Eight H100 behind eight 400G NICs: their eight links together (8 × 48) exceed the NICs (8 × 47)."""
    cluster, plan, _ = build(_spec("h100-sxm", 8, "nvlink4", 8, 5), tmp_path)
    system = system_for(cluster, plan)
    assert system.net is not None and system.net.name == "NIC line rate"
