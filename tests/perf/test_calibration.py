"""The calibration facts (NVIDIA maintainers, nccl-tests #212 and #290) reproduced within ±10 %, and the
model's generalisation to hardware it was not calibrated on (NCCL's own per-link figures)."""

from __future__ import annotations

import pytest
from perf_blueprints import build, server_nodes, single_gpu_nodes

from blueprints.catalog.perf import perf_data
from generator.perf import predict_busbw
from generator.perf.system import nvls_efficiency, transport_efficiency

EIGHT_G = 8 << 30
CAL = perf_data().calibration


def within(value: float, target: float, tol: float = 0.10) -> bool:
    return abs(value - target) <= tol * target


def test_h100_node_ring_busbw(tmp_path) -> None:
    cluster, plan, _ = build(server_nodes("dgx-h100"), tmp_path)
    p = predict_busbw(cluster, plan, "all_reduce", EIGHT_G, algorithms=("ring",))
    assert p.algorithm == "ring"
    assert within(p.busbw_gbytes, CAL.h100_ring_busbw.value), p
    assert p.bottleneck.startswith("NVLink 4")


def test_h100_node_nvls_busbw(tmp_path) -> None:
    cluster, plan, _ = build(server_nodes("dgx-h100"), tmp_path)
    p = predict_busbw(cluster, plan, "all_reduce", EIGHT_G)
    assert p.algorithm == "nvls"  # NCCL picks NVLS on NVSwitch Hopper for large all_reduce
    assert within(p.busbw_gbytes, CAL.h100_nvls_busbw.value), p


@pytest.mark.parametrize(
    ("tech", "speed", "switch", "fact"),
    [
        ("infiniband-ndr", 400, "qm9700", "ndr_nic_busbw"),
        ("infiniband-hdr", 200, "qm8700", "hdr_nic_busbw"),
    ],
)
def test_one_nic_busbw(tmp_path, tech: str, speed: float, switch: str, fact: str) -> None:
    sm = {"kind": "opensm", "ha": False}
    cluster, plan, _ = build(single_gpu_nodes(2, tech, "cx7", speed, switch, sm), tmp_path)
    p = predict_busbw(cluster, plan, "all_reduce", EIGHT_G)
    target = getattr(CAL, fact).value
    assert within(p.busbw_gbytes, target), p
    assert p.bottleneck.startswith("NIC line rate")


def test_ndr_fact_lies_in_the_stated_range(tmp_path) -> None:
    cluster, plan, _ = build(
        single_gpu_nodes(2, "infiniband-ndr", "cx7", 400, "qm9700", {"kind": "opensm"}), tmp_path
    )
    p = predict_busbw(cluster, plan, "all_reduce", EIGHT_G)
    assert 46.0 * 0.98 <= p.busbw_gbytes <= 48.0  # "46–48 GB/s", latency costs a little at 8G


def test_derived_efficiencies_are_plausible() -> None:
    assert 0.9 < transport_efficiency() < 1.0
    assert 0.5 < nvls_efficiency() < 0.9


@pytest.mark.parametrize(
    ("server", "expected"),
    [
        ("dgx-a100", 12 * 20.0),  # NCCL SM80: 20 GB/s per NVLink
        ("dgx-1-v100", 6 * 20.0),  # SM70, cube mesh without NVSwitch
        ("dgx-b200", 18 * 40.1),  # SM100
        ("pcie-l40s-8", 16 * 12 / 8),  # PCIe Gen4 x16 as NCCL counts it
        ("pcie-h100-8", 16 * 24 / 8),  # bridged pairs only: rings cross PCIe Gen5
    ],
)
def test_generalises_to_other_nodes(tmp_path, server: str, expected: float) -> None:
    cluster, plan, _ = build(server_nodes(server), tmp_path)
    p = predict_busbw(cluster, plan, "all_reduce", 1 << 36, algorithms=("ring",))
    assert p.busbw_gbytes == pytest.approx(expected, rel=0.01)


def test_b200_nvls_scales_with_nvlink(tmp_path) -> None:
    cluster, plan, _ = build(server_nodes("dgx-b200"), tmp_path)
    p = predict_busbw(cluster, plan, "all_reduce", EIGHT_G)
    assert p.algorithm == "nvls"
    assert p.busbw_gbytes == pytest.approx(
        2 * CAL.h100_nvls_busbw.value, rel=0.02
    )  # NVLink 5 doubles NVLink 4


def test_roce_is_below_infiniband_at_the_same_rate(tmp_path) -> None:
    ib, ib_plan, _ = build(
        single_gpu_nodes(2, "infiniband-ndr", "cx7", 400, "qm9700", {"kind": "opensm"}), tmp_path, "ib.yaml"
    )
    bp = single_gpu_nodes(2, "roce-v2-400", "cx7", 400, "sn5400", None)
    bp["fabrics"]["compute"]["lossless"] = {}
    roce, roce_plan, _ = build(bp, tmp_path, "roce.yaml")
    a = predict_busbw(ib, ib_plan, "all_reduce", EIGHT_G).busbw_gbytes
    b = predict_busbw(roce, roce_plan, "all_reduce", EIGHT_G).busbw_gbytes
    assert b < a
    assert b == pytest.approx(a * (4096 / 4178) / (4096 / 4122), rel=0.01)


def test_gen4_slot_caps_an_ndr_nic(tmp_path) -> None:
    bp = single_gpu_nodes(2, "infiniband-ndr", "cx7", 400, "qm9700", {"kind": "opensm"})
    bp["pools"][0]["spec"]["nics"][0]["pcie"] = {"gen": 4, "lanes": 16}
    cluster, plan, _ = build(bp, tmp_path)
    p = predict_busbw(cluster, plan, "all_reduce", EIGHT_G)
    assert p.busbw_gbytes == pytest.approx(24.0, rel=0.01)
    assert p.bottleneck.startswith("PCIe GPU-NIC")
