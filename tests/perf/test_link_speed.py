"""A port links at the lower of its own and the fabric's speed: rule NET007 says so ("the link runs at 100
Gb/s"), and the model now computes the same, where it used the NIC's own speed (eight 400G NICs on an EDR fabric
were predicted a 321 GB/s all_gather on two nodes; found by a sweep of `estimate` inputs)."""

from __future__ import annotations

from pathlib import Path

from perf_blueprints import build, server_nodes

from generator.findings import Severity
from generator.perf.system import system_for
from generator.rules.base import RuleContext
from generator.rules.registry import run_rules

EDR = {
    "technology": "infiniband-edr",
    "topology": {"kind": "fat-tree", "switch": "qm8700", "rail_optimized": True},
}


def _h100_with_nics(speed_gbps: int) -> dict:
    bp = server_nodes("dgx-h100", 2, EDR)
    bp["pools"][0].pop("server")
    bp["pools"][0]["spec"] = {
        "gpu": "h100-sxm", "gpus": 8, "gpu_interconnect": "nvlink4", "nvlink_domain_gpus": 8,
        "nvswitches": 4, "pcie_gen": 5, "power_kw": 10.2, "rack_units": 8,
        "nics": [{"purpose": "compute", "model": "cx7", "count": 8, "speed_gbps": speed_gbps}],
    }  # fmt: skip
    return bp


def test_fast_nics_on_a_slower_fabric_run_at_the_fabrics_speed(tmp_path: Path) -> None:
    fast, fast_plan, _ = build(_h100_with_nics(400), tmp_path, "fast.yaml")
    slow, slow_plan, _ = build(_h100_with_nics(100), tmp_path, "slow.yaml")
    on_edr = system_for(fast, fast_plan)
    native = system_for(slow, slow_plan)
    assert on_edr.net is not None and native.net is not None
    assert on_edr.net.gbytes == native.net.gbytes
    assert on_edr.net_line_gbps == 8 * 100
    # the rule that warns of it names the same speed
    (warning,) = [f for f in run_rules(RuleContext(fast)) if f.rule == "NET007"]
    assert warning.severity == Severity.WARNING and "the link runs at 100 Gb/s" in warning.message
