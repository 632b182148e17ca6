"""alltoall against the closed forms NCCL's authors state.

NCCL runs alltoall as point-to-point send/recv: every rank sends S/n to each of the n ranks (1/n stays
local). nccl-tests reports busbw = algbw·(n−1)/n (src/alltoall.cu, AlltoAllGetBw). On a system with
NVLink and NICs, the network part sets the time: "On 2 nodes, 50% of the traffic is inter-node so you
should see BusBW = 2x network bandwidth per GPU. As the number of nodes increases, it will go down to 1x
the network bandwidth per GPU (general formula is N/(N-1)x the bandwidth per GPU, N being the number of
nodes)" and "If you have one GPU per node the BusBw should be the NIC BW" (sjeaugey, NVIDIA/nccl-tests
#130). These tests write those statements out and check the model against them. Over NVLink point-to-point
transfers reach a share of the bandwidth NCCL counts (perf.yaml p2p_nvlink_efficiency, fitted in
tests/perf/test_p2p_nvlink.py): the NVLink figures below are taken at that share.
"""

from __future__ import annotations

import pytest

from blueprints.catalog.perf import perf_data
from generator.perf.collectives import Job, estimate
from generator.perf.system import Limit

HUGE = 1 << 44  # latency is negligible: busbw is the bandwidth bound
P2P = perf_data().nccl.p2p_nvlink_efficiency.value  # share of NCCL's NVLink count send/recv reaches


def _job(units: int, k: int, nvlink: float, node_net: float | None) -> Job:
    net = Limit(node_net, "nic") if node_net is not None else None
    return Job(
        units=units,
        ranks_per_unit=k,
        intra=Limit(nvlink, "nvl") if k > 1 else None,
        intra_class="nvlink",
        net=net,
        spread_net=net,
        net_latency_us=1.0,
        nvls=None,
        sharp=False,
        ll128=True,
        sm_arch=90,
    )


@pytest.mark.parametrize("k", [2, 4, 8])
def test_one_node_busbw_is_the_nvlink_bandwidth(k: int) -> None:
    """Each rank sends (k−1)/k·S over its own NVLink: t = S(k−1)/(k·B), busbw = S/t·(k−1)/k = B, with B the
    point-to-point share of the NVLink count."""
    est = estimate("alltoall", HUGE, _job(1, k, 370.0, None))
    assert est.algorithm == "p2p"
    assert est.algbw_gbytes == pytest.approx(370.0 * P2P * k / (k - 1), rel=1e-5)
    assert est.busbw_gbytes == pytest.approx(370.0 * P2P, rel=1e-5)


@pytest.mark.parametrize("nodes", [2, 3, 4, 16, 128])
def test_multi_node_busbw_is_n_over_n_minus_1_times_the_network_per_gpu(nodes: int) -> None:
    """8 GPUs and 8 × 48 GB/s per node, NVLink far faster: algbw = 48·N/(N−1) (sjeaugey's formula),
    busbw = algbw·(n−1)/n for n = 8N ranks — 2× the per-GPU network on 2 nodes, → 1× on many."""
    per_gpu = 48.0
    est = estimate("alltoall", HUGE, _job(nodes, 8, 10_000.0, 8 * per_gpu))
    n = 8 * nodes
    assert est.algbw_gbytes == pytest.approx(per_gpu * nodes / (nodes - 1), rel=1e-5)
    assert est.busbw_gbytes == pytest.approx(per_gpu * nodes / (nodes - 1) * (n - 1) / n, rel=1e-5)
    assert est.limit == "nic"


@pytest.mark.parametrize("nodes", [2, 8, 64])
def test_one_gpu_per_node_busbw_is_the_nic_bandwidth(nodes: int) -> None:
    est = estimate("alltoall", HUGE, _job(nodes, 1, 0.0, 48.0))
    assert est.busbw_gbytes == pytest.approx(48.0, rel=1e-5)


def test_fewer_nics_than_gpus_share_the_node_network() -> None:
    """4 NICs for 8 GPUs (NVIDIA/nccl #1138's nodes): the per-GPU network is half a NIC, so on 2 nodes
    busbw = 2 × B_node/8 × 15/16."""
    node = 4 * 23.5
    est = estimate("alltoall", HUGE, _job(2, 8, 10_000.0, node))
    assert est.busbw_gbytes == pytest.approx(2 * node / 8 * 15 / 16, rel=1e-5)


def test_slow_nvlink_bounds_the_local_share() -> None:
    """When NVLink is the tighter bound, the (k−1)/n·S each rank moves locally sets the time."""
    nodes, k, nvlink = 2, 8, 10.0
    est = estimate("alltoall", HUGE, _job(nodes, k, nvlink, 8 * 1_000.0))
    n = nodes * k
    assert est.algbw_gbytes == pytest.approx(nvlink * P2P * n / (k - 1), rel=1e-5)
    assert est.limit.startswith("nvl")
