"""GPU-GPU links other than NVLink, each from its catalogue entries.

AMD Infinity Fabric (MI300X): RCCL publishes no per-link figure, so the model applies the share NCCL counts of
a named NVLink GPU's links (perf.yaml nvlink.xgmi_share_like_gpu), computed from that GPU's entries: these
tests move the entries and watch the limit follow. PCIe: the GPU's host width (gpus.yaml pcie_lanes)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from perf_blueprints import build, server_nodes

import generator.perf.system as system_module
from blueprints.catalog.perf import perf_data
from generator.cli import main
from generator.perf import predict_busbw
from generator.perf.system import PerfError, system_for

EIGHT_G = 8 << 30
IB_NDR = {"technology": "infiniband-ndr", "topology": {"kind": "fat-tree", "switch": "qm9700"}}


def _with_nvlink(monkeypatch, **update) -> None:  # type: ignore[no-untyped-def]
    shipped = perf_data()
    changed = shipped.model_copy(update={"nvlink": shipped.nvlink.model_copy(update=update)})
    monkeypatch.setattr(system_module, "perf_data", lambda: changed)


def test_infinity_fabric_is_bound_by_the_xgmi_rate(tmp_path) -> None:
    cluster, plan, _ = build(server_nodes("mi300x-8"), tmp_path)
    p = predict_busbw(cluster, plan, "all_reduce", EIGHT_G)
    assert p.bottleneck == "Infinity Fabric"
    gpu = cluster.catalog.gpus["mi300x"]
    assert gpu.infinity_fabric_gbps is not None
    # below the xGMI rate a direction (896 / 2 GB/s), above half of it: an efficiency, not another bound
    assert gpu.infinity_fabric_gbps / 4 < p.busbw_gbytes < gpu.infinity_fabric_gbps / 2


def test_the_share_follows_the_named_gpus_nccl_figure(tmp_path, monkeypatch) -> None:
    """Raising NCCL's sm90 per-link figure from 20.6 to 25 GB/s (all of NVLink 4's 25 a direction) raises
    MI300X by 25 / 20.6: the borrowed share is read from those entries at run time."""
    cluster, plan, _ = build(server_nodes("mi300x-8"), tmp_path)
    before = predict_busbw(cluster, plan, "all_reduce", EIGHT_G).busbw_gbytes
    table = dict(perf_data().nvlink.gbytes_per_link)
    assert table[90].value == 20.6
    table[90] = table[90].model_copy(update={"value": 25.0})
    _with_nvlink(monkeypatch, gbytes_per_link=table)
    after = predict_busbw(cluster, plan, "all_reduce", EIGHT_G).busbw_gbytes
    assert after / before == pytest.approx(25.0 / 20.6, rel=0.02)


def test_naming_another_gpu_changes_the_share(tmp_path, monkeypatch) -> None:
    """A100 (NVLink 3: NCCL counts 20 of 25 GB/s) in place of H100 (20.6 of 25)."""
    cluster, plan, _ = build(server_nodes("mi300x-8"), tmp_path)
    before = predict_busbw(cluster, plan, "all_reduce", EIGHT_G).busbw_gbytes
    _with_nvlink(monkeypatch, xgmi_share_like_gpu="a100-80")
    after = predict_busbw(cluster, plan, "all_reduce", EIGHT_G).busbw_gbytes
    assert after / before == pytest.approx(20.0 / 20.6, rel=0.02)


def test_a_gpu_without_nvlink_is_refused(tmp_path, monkeypatch) -> None:
    cluster, plan, _ = build(server_nodes("mi300x-8"), tmp_path)
    _with_nvlink(monkeypatch, xgmi_share_like_gpu="l40s")
    with pytest.raises(PerfError, match="xgmi_share_like_gpu `l40s`"):
        predict_busbw(cluster, plan, "all_reduce", EIGHT_G)


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


@pytest.mark.parametrize("server", ["dgx-1-v100", "gb200-nvl72-tray"])
def test_an_unknown_pcie_width_is_refused_not_assumed(tmp_path, capsys, server: str) -> None:
    """V100 SXM2 and GB200 have no vendor text for a host PCIe width in the catalogue: with NVLink off their
    GPUs would exchange over PCIe, so `estimate --no-nvlink` says what is missing and exits 2."""
    _, _, path = build(server_nodes(server, 2 if server == "dgx-1-v100" else 18, IB_NDR), tmp_path)
    assert main(["estimate", str(path), "--no-nvlink"]) == 2
    err = capsys.readouterr().err.replace("\n", " ")
    assert "Traceback" not in err
    assert "no host PCIe width" in err and "pcie_lanes" in err
    assert main(["estimate", str(path)]) == 0  # with NVLink the width is not needed
