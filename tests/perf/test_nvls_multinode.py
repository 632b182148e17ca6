"""Multi-node NVLS (NVLink SHARP + IB SHARP) and NVLS-tree against NCCL's own tuner.

NVIDIA/nccl src/graph/tuning.cc (2.19 series), per algorithm's bandwidth:

    if (a == NCCL_ALGO_NVLS) bw = std::min(graphs[a]->bwIntra, graphs[a]->bwInter);
    if (a == NCCL_ALGO_NVLS_TREE) bw = std::min(graphs[a]->bwIntra, nNodes <= 2 ? graphs[a]->bwInter
                                                                                : graphs[a]->bwInter/2);

and multi-node NVLS is disabled without CollNet (IB SHARP) support (``if (comm->nNodes > 1 ...)
algoEnable[NCCL_ALGO_NVLS] = 0``). So across nodes NVLS is bounded by the NVLink SHARP figure of one node
and by the network as IB SHARP sees it (CollNet ×0.9); NVLS-tree by the node's network, halved beyond two
nodes. No published multi-node NVLS+IB SHARP nccl-tests result was found to check the numbers against
(README, Performance model), so these tests pin the mechanism to NCCL's formulas, and the bus bandwidth to
what that mechanism allows: never more than 2 × the single-node NVLS algbw.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from perf_blueprints import build, server_nodes

from blueprints.catalog.perf import perf_data
from generator.perf import predict_busbw
from generator.perf.collectives import Job, bus_factor, estimate
from generator.perf.system import Limit, PerfError, system_for

HUGE = 1 << 44
NVLS_ALGBW = 274.3  # 8 × H100: 480 GB/s busbw / (2·7/8), NVIDIA in nccl-tests #212
COLLNET = 0.9  # perf.yaml nccl.collnet_factor, NCCL's CollNet busBw *= .9


def _job(units: int, node_net: float, sharp: bool, sharp_share: float = 1.0) -> Job:
    net = Limit(node_net, "nic")
    return Job(
        units=units,
        ranks_per_unit=8,
        intra=Limit(370.8, "nvl"),
        intra_class="nvlink",
        net=net,
        spread_net=net,
        net_latency_us=1.0,
        nvls=Limit(NVLS_ALGBW, "NVLS"),
        sharp=sharp,
        ll128=True,
        sm_arch=90,
        sharp_share=sharp_share,
    )


@pytest.mark.parametrize("units", [2, 16, 512])
def test_nvls_sharp_on_ndr_is_bound_by_nvlink_sharp(units: int) -> None:
    """8 × NDR (376 GB/s per node): 0.9 × 376 = 338 > 274, so the node's NVLS figure binds; busbw tends to
    2 × 274 = 549 GB/s as the rank count grows and never exceeds it."""
    est = estimate("all_reduce", HUGE, _job(units, 376.0, sharp=True), algorithms=("nvls",))
    n = 8 * units
    assert est.algbw_gbytes == pytest.approx(min(NVLS_ALGBW, COLLNET * 376.0), rel=1e-5)
    assert est.busbw_gbytes == pytest.approx(NVLS_ALGBW * bus_factor("all_reduce", n), rel=1e-5)
    assert est.busbw_gbytes < 2 * NVLS_ALGBW


def test_nvls_sharp_on_fewer_nics_is_bound_by_the_network() -> None:
    """4 × HDR per node (94 GB/s): IB SHARP moves the node's data once each way, algbw = 0.9 × 94."""
    est = estimate("all_reduce", HUGE, _job(8, 94.0, sharp=True), algorithms=("nvls",))
    assert est.algbw_gbytes == pytest.approx(COLLNET * 94.0, rel=1e-5)


def test_sharp_on_two_of_eight_rails_aggregates_a_quarter() -> None:
    """Leaves that carry every rail hold two SHARP streaming flows (perf.yaml [HPCX-SHARP]): a quarter."""
    est = estimate("all_reduce", HUGE, _job(8, 376.0, sharp=True, sharp_share=0.25), algorithms=("nvls",))
    assert est.algbw_gbytes == pytest.approx(COLLNET * 376.0 * 0.25, rel=1e-5)


def test_collnet_direct_on_hopper_takes_085_of_the_network() -> None:
    """NCCL's CollNetDirect all_reduce (tuning.cc 2.20.3 and 2.28.7: `if (minCompCap >= 90) busBw *= .85`),
    a NIC per GPU (8 NICs, 8 ranks: GPU/NIC ratio 1). The NVLink chain allows 370.8 × 8/14 = 211.9 GB/s of
    algbw, so a network of 200 GB/s shows the factor: algbw = 0.85 × 200 (2.8's ×0.9 gave 180)."""
    job = replace(_job(4, 200.0, sharp=True), nics_per_unit=8)
    est = estimate("all_reduce", HUGE, job, algorithms=("collnet",))
    assert est.algbw_gbytes == pytest.approx(0.85 * 200.0, rel=1e-5)


def test_collnet_direct_with_half_a_nic_per_gpu_loses_a_third() -> None:
    """GPU/NIC ratio 2 (8 ranks, 4 NICs): factor = 2 − (2 − 1)/2 = 1.5, busBw / 1.5; on Ampere no .85. Four HDR
    NICs (94 GB/s): algbw = 94 / 1.5 = 62.7 (ABCI's two A100 nodes with SHARP: 105.5 GB/s busbw at 2 GiB,
    62.7 × 2 × 15/16 = 117.5 at the plateau, +11 %; 2.8's ×0.9 alone gave 157)."""
    job = replace(_job(2, 94.0, sharp=True), nics_per_unit=4, sm_arch=80)
    est = estimate("all_reduce", HUGE, job, algorithms=("collnet",))
    assert est.algbw_gbytes == pytest.approx(94.0 / 1.5, rel=1e-5)


def test_no_multi_node_nvls_without_sharp() -> None:
    """NCCL_ALGO=NVLS across nodes without IB SHARP: NCCL up to 2.22 runs the ring (tuning.cc "at least set
    ring algo available"), 2.25 on fails the call."""
    job = _job(4, 376.0, sharp=False)
    assert estimate("all_reduce", HUGE, job, algorithms=("nvls",)).algorithm == "ring"
    with pytest.raises(PerfError, match="no algorithm"):
        estimate("all_reduce", HUGE, replace(job, nccl_release=225), algorithms=("nvls",))


@pytest.mark.parametrize(("units", "inter"), [(2, 376.0), (4, 188.0), (64, 188.0)])
def test_nvls_tree_takes_the_network_halved_beyond_two_nodes(units: int, inter: float) -> None:
    """NVLS-tree: the network (×2 on two nodes, /2 beyond) or the domain's NVLS at the fitted NVLS-tree
    share (perf.yaml nvls_tree_multi_unit_efficiency), whichever is tighter."""
    est = estimate("all_reduce", HUGE, _job(units, 376.0, sharp=False), algorithms=("nvls_tree",))
    share = perf_data().nccl.nvls_tree_multi_unit_efficiency.value
    assert est.algbw_gbytes == pytest.approx(min(NVLS_ALGBW * share, inter), rel=1e-5)


@pytest.mark.parametrize(
    ("nccl", "expected"), [("2.17.1", "ring"), ("2.18.1", "nvls_tree"), ("2.21.5", "nvls_tree")]
)
def test_nvls_across_nodes_needs_nccl_2_18(tmp_path, nccl: str, expected: str) -> None:
    """NCCL 2.18.1 release notes: "Add inter-node algorithms for NVLink SHARP: NVLink SHARP + IB SHARP
    (NVLS), NVLink SHARP + Tree (NVLSTREE)". Two DGX H100 on NDR pinned to an older NCCL get no NVLS-tree;
    one node keeps NVLS whatever the pin."""
    fabric = {"technology": "infiniband-ndr", "topology": {"kind": "fat-tree", "switch": "qm9700"}}
    bp = server_nodes("dgx-h100", 2, fabric)
    bp["software"] = {"nccl": nccl}
    cluster, plan, _ = build(bp, tmp_path)
    two = predict_busbw(cluster, plan, "all_reduce", 8 << 30)
    one = predict_busbw(cluster, plan, "all_reduce", 8 << 30, nodes=1)
    assert (two.algorithm, one.algorithm) == (expected, "nvls")
    assert any("predates NVLS across nodes (NCCL 2.18)" in n for n in system_for(cluster, plan).notes) == (
        nccl == "2.17.1"
    )
