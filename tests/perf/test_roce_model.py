"""RoCE-specific losses: ECMP hash collisions (closed form), adaptive routing, lossless settings."""

from __future__ import annotations

import pytest
from perf_blueprints import build, server_nodes

from generator.perf import predict_busbw
from generator.perf.ecmp import ecmp_efficiency, expected_max_load
from generator.perf.system import system_for


@pytest.mark.parametrize(
    ("flows", "bins", "expected"),
    [
        (2, 2, 1.5),  # (1,1) half the time, (2,0)/(0,2) the other half
        (3, 3, 17 / 9),  # P(max=1) = 3!/27, P(max=3) = 3/27
        (4, 2, 44 / 16),  # loads 4/0 (2/16), 3/1 (8/16), 2/2 (6/16)
        (5, 1, 5.0),
        (0, 4, 0.0),
    ],
)
def test_expected_max_load_closed_forms(flows: int, bins: int, expected: float) -> None:
    assert expected_max_load(flows, bins) == pytest.approx(expected, rel=1e-9)


def test_ecmp_efficiency_falls_with_paths_and_rises_with_flows() -> None:
    assert ecmp_efficiency(1) == 1.0
    assert ecmp_efficiency(2) == pytest.approx(1 / 1.5)
    assert ecmp_efficiency(64) < ecmp_efficiency(16) < ecmp_efficiency(4)
    assert ecmp_efficiency(16, 4) > ecmp_efficiency(16, 1)  # more QPs per connection hash better


def _roce(adaptive: bool | None = None, technology: str = "roce-v2-400", switch: str = "sn5600") -> dict:
    fabric: dict = {
        "technology": technology,
        "topology": {"kind": "fat-tree", "switch": switch, "rail_optimized": True, "scalable_unit": 16},
        "lossless": {},
    }
    if adaptive is not None:
        fabric["adaptive_routing"] = adaptive
    return server_nodes("dgx-h100", 48, fabric)


def test_scattered_roce_pays_for_hashing_and_adaptive_routing_removes_it(tmp_path) -> None:
    hashed, plan_h, _ = build(_roce(), tmp_path, "hashed.yaml")
    sprayed, plan_s, _ = build(_roce(adaptive=True), tmp_path, "ar.yaml")
    sh = system_for(hashed, plan_h)
    ss = system_for(sprayed, plan_s)
    assert sh.fabric is not None and ss.fabric is not None
    assert sh.fabric.limit.name == "ECMP hash collisions"
    m = plan_h.metrics["compute"]
    paths = min(m.ecmp_paths, 64)  # SN5600: 128 × 400G ports, half of them uplinks
    cross = (48 - 16) / 47  # peers outside a 16-node scalable unit
    eff = ecmp_efficiency(paths)
    assert sh.fabric.limit.gbytes == pytest.approx(sh.net.gbytes / (cross / eff + 1 - cross), rel=1e-9)
    assert ss.fabric.limit.name == sh.net.name  # non-blocking, sprayed: the NICs are the limit
    a = predict_busbw(hashed, plan_h, "alltoall", 1 << 30).busbw_gbytes
    b = predict_busbw(sprayed, plan_s, "alltoall", 1 << 30).busbw_gbytes
    assert a < b


def test_infiniband_is_not_hashed(tmp_path) -> None:
    fabric = {
        "technology": "infiniband-ndr",
        "topology": {"kind": "fat-tree", "switch": "qm9700", "rail_optimized": True, "scalable_unit": 16},
    }
    cluster, plan, _ = build(server_nodes("dgx-h100", 48, fabric), tmp_path)
    s = system_for(cluster, plan)
    assert s.fabric is not None and s.fabric.limit.name != "ECMP hash collisions"


def test_roce_without_lossless_is_noted(tmp_path) -> None:
    bp = _roce()
    bp["fabrics"]["compute"]["lossless"] = {"pfc": False, "ecn": False}
    cluster, plan, _ = build(bp, tmp_path)
    assert any("go-back-N" in n for n in system_for(cluster, plan).notes)


def test_sharp_needs_rail_optimised_leaves(tmp_path) -> None:
    """HPC-X: a switch holds at most 2 SHARP streaming flows and NCCL opens one per HCA rail; leaves that see
    all 8 rails aggregate 2 of them, so NVLS+SHARP over 8 NICs gets 2/8 of the network."""
    sm = {"kind": "opensm", "ha": False, "sharp": True}

    def sharp_net(rail_optimized: bool, name: str) -> float:
        fabric = {
            "technology": "infiniband-ndr",
            "topology": {"kind": "fat-tree", "switch": "qm9700", "rail_optimized": rail_optimized},
            "subnet_manager": sm,
        }
        cluster, plan, _ = build(server_nodes("dgx-h100", 4, fabric), tmp_path, name)
        s = system_for(cluster, plan)
        assert s.sharp
        return s.sharp_share

    assert sharp_net(True, "rails.yaml") == 1.0
    assert sharp_net(False, "mixed.yaml") == pytest.approx(2 / 8)
