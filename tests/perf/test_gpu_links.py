"""GPU-GPU links other than NVLink, each from its catalogue entries.

AMD Infinity Fabric (MI300X): each GPU's seven xGMI links at what AMD measures one carries (perf.yaml
nvlink.xgmi_gbytes_per_link, 48 of 64 GB/s), checked against what the same AMD article says RCCL reaches.
PCIe: the GPU's host width (gpus.yaml pcie_lanes)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from perf_blueprints import build, server_nodes

import generator.perf.system as system_module
from blueprints.catalog.perf import perf_data
from generator.cli import main
from generator.perf import predict_busbw
from generator.perf.collectives import stage_send_s
from generator.perf.predict import job_for
from generator.perf.system import PerfError, system_for

EIGHT_G = 8 << 30
IB_NDR = {"technology": "infiniband-ndr", "topology": {"kind": "fat-tree", "switch": "qm9700"}}


def _with_xgmi(monkeypatch, gbytes: float) -> None:  # type: ignore[no-untyped-def]
    shipped = perf_data()
    per_link = shipped.nvlink.xgmi_gbytes_per_link.model_copy(update={"value": gbytes})
    nvlink = shipped.nvlink.model_copy(update={"xgmi_gbytes_per_link": per_link})
    monkeypatch.setattr(system_module, "perf_data", lambda: shipped.model_copy(update={"nvlink": nvlink}))


def test_infinity_fabric_is_seven_links_at_amds_usable_rate(tmp_path) -> None:
    """AMD (rocm-blogs mi300x-rccl-xgmi): 'Aggregated unidirectional bandwidth per GPU | 448 GB/s (7×64 GB/s)
    | 315 - 336 GB/s (7× 45-48 GB/s)': the limit is the realised aggregate's upper end, 7 × 48."""
    cluster, plan, _ = build(server_nodes("mi300x-8"), tmp_path)
    system = system_for(cluster, plan)
    assert system.intra is not None and system.intra.name == "Infinity Fabric"
    assert system.intra.gbytes == pytest.approx(7 * 48.0)
    assert "7 xGMI links × 48 GB/s" in system.intra.detail and "of its 64 GB/s" in system.intra.detail


def test_a_plateau_all_reduce_is_where_amd_says_rccl_lands(tmp_path) -> None:
    """The same article: 'Why Does RCCL Bandwidth shuffle between 310-330 GB/s for the best-case scenario?'
    An 8 GiB all_reduce on one MI300X node is predicted in that band, 3 % either side (the model gives 334,
    1 % above: its limit is the 7 × 48 = 336 of the article's upper end)."""
    cluster, plan, _ = build(server_nodes("mi300x-8"), tmp_path)
    p = predict_busbw(cluster, plan, "all_reduce", EIGHT_G)
    assert p.bottleneck == "Infinity Fabric"
    assert 310 * 0.97 <= p.busbw_gbytes <= 330 * 1.03, p


def test_the_limit_follows_the_catalogue_and_stops_at_the_rated_rate(tmp_path, monkeypatch) -> None:
    cluster, plan, _ = build(server_nodes("mi300x-8"), tmp_path)
    _with_xgmi(monkeypatch, 40.0)
    lower = system_for(cluster, plan)
    assert lower.intra is not None and lower.intra.gbytes == pytest.approx(7 * 40.0)
    _with_xgmi(monkeypatch, 80.0)  # above the rated 64 GB/s a direction: the rate bounds it
    rated = system_for(cluster, plan)
    assert rated.intra is not None and rated.intra.gbytes == pytest.approx(896 / 2)


def test_a_gpu_without_a_link_count_is_refused(tmp_path) -> None:
    cluster, plan, _ = build(server_nodes("mi300x-8"), tmp_path)
    pool = cluster.pools[0]
    assert pool.gpu is not None
    unknown = replace(pool, gpu=pool.gpu.model_copy(update={"infinity_fabric_links": None}))
    with pytest.raises(PerfError, match="no xGMI link count"):
        system_for(replace(cluster, pools=(unknown,)), plan)


# ---- PCIe between GPUs: the GPU's host width (gpus.yaml pcie_lanes) -----------------------------------


def test_pcie_limit_follows_the_gpus_host_width(tmp_path) -> None:
    """L40S (no NVLink) exchanges over PCIe Gen4 at its x16 width; the same card at x8 gets half the limit:
    the width is read from the catalogue, not assumed."""
    cluster, plan, _ = build(server_nodes("pcie-l40s-8"), tmp_path)
    system = system_for(cluster, plan)
    assert system.intra is not None and system.intra.name == "PCIe Gen4 GPU-GPU"
    assert "x16 per GPU" in system.intra.detail
    pool = cluster.pools[0]
    assert pool.gpu is not None
    x8 = replace(pool, gpu=pool.gpu.model_copy(update={"pcie_lanes": 8}))
    narrow = system_for(replace(cluster, pools=(x8, *cluster.pools[1:])), plan)
    assert narrow.intra is not None and "x8 per GPU" in narrow.intra.detail
    assert narrow.intra.gbytes == pytest.approx(system.intra.gbytes / 2)


@pytest.mark.parametrize(
    ("server", "missing"),
    [("dgx-1-v100", ("width", "pcie_lanes")), ("gb200-nvl72-tray", ("generation", "pcie_gen"))],
)
def test_an_unknown_pcie_link_is_refused_not_assumed(tmp_path, capsys, server: str, missing) -> None:
    """V100 SXM2 has no vendor text for a host PCIe width in the catalogue, GB200 none for a PCIe generation
    (NVIDIA gives its host link as NVLink-C2C): with NVLink off their GPUs would exchange over PCIe, so
    `estimate --no-nvlink` says what is missing and exits 2."""
    _, _, path = build(server_nodes(server, 2 if server == "dgx-1-v100" else 18, IB_NDR), tmp_path)
    assert main(["estimate", str(path), "--no-nvlink"]) == 2
    err = capsys.readouterr().err.replace("\n", " ")
    assert "Traceback" not in err
    what, field = missing
    assert f"no host PCIe {what}" in err and field in err
    assert main(["estimate", str(path)]) == 0  # with NVLink the width is not needed


# ---- one peer of a node (pipeline stage sends) ------------------------------------------------------------


def _send_gbytes(system, ranks: int) -> float:  # type: ignore[no-untyped-def]
    """The bandwidth a stage send reaches inside one node: the slope of its time in the message size."""
    job = job_for(system, 1, ranks_per_node=ranks)
    size = float(1 << 30)
    return size / (stage_send_s(2 * size, job) - stage_send_s(size, job)) / 1e9


def test_a_send_to_one_peer_on_a_mesh_uses_the_pairs_link(tmp_path) -> None:
    """MI300X's seven xGMI links join it to its seven peers, one each (AMD: "connected to its seven peer
    GPUs"): a send to one peer moves at one link's 48 GB/s, not the GPU's 336."""
    cluster, plan, _ = build(server_nodes("mi300x-8"), tmp_path)
    system = system_for(cluster, plan)
    assert system.intra_peer_share == pytest.approx(1 / 7)
    assert _send_gbytes(system, 4) == pytest.approx(48.0, rel=1e-6)


def test_through_an_nvswitch_one_peer_gets_every_link(tmp_path) -> None:
    """DGX H100: the NVSwitches give one peer all 18 links (at NCCL's point-to-point share)."""
    cluster, plan, _ = build(server_nodes("dgx-h100"), tmp_path)
    system = system_for(cluster, plan)
    assert system.intra_peer_share == 1.0
    share = perf_data().nccl.p2p_nvlink_efficiency.value
    assert _send_gbytes(system, 4) == pytest.approx(18 * 20.6 * share, rel=1e-6)


def test_a_mesh_that_joins_not_every_pair_says_what_it_assumes(tmp_path) -> None:
    """DGX-1: 6 NVLinks for 7 peers, no switch; which pairs they join is not in the catalogue, so one link
    (NCCL's 20 GB/s on sm70 at the point-to-point share) is given, and the estimate says so."""
    cluster, plan, _ = build(server_nodes("dgx-1-v100"), tmp_path)
    system = system_for(cluster, plan)
    assert any("which pairs they join is not in the catalogue" in n for n in system.notes)
    share = perf_data().nccl.p2p_nvlink_efficiency.value
    assert _send_gbytes(system, 4) == pytest.approx(20.0 * share, rel=1e-6)
