"""NET021 warns where the subnet manager's host has no published RDMA device on the fabric: `validate` passed
examples/maas-onprem-h100.yaml, whose storage SM runs on head nodes of unpublished port names, and the
generated opensm play then stopped on them (the inventory's rdma_device null)."""

from __future__ import annotations

from pathlib import Path

import yaml
from conftest import EXAMPLES

from generator.findings import Severity
from generator.pipeline import check


def _net021(path: Path) -> list[str]:
    return [f.message for f in check(path).findings if f.rule == "NET021" and f.severity == Severity.WARNING]


def test_an_sm_host_without_a_published_rdma_device_is_warned_and_a_declared_one_is_not(
    tmp_path: Path,
) -> None:
    example = EXAMPLES / "maas-onprem-h100.yaml"
    warned = _net021(example)
    assert len(warned) == 2 and all("storage subnet manager runs on `head00" in m for m in warned), warned
    doc = yaml.safe_load(example.read_text())
    head = next(p for p in doc["pools"] if p["name"] == "head")
    # the site's own names for the head nodes' storage port (what `ibv_devices` and `ip link` print there)
    head["ports"] = [{"role": "storage", "rdma": "mlx5_0", "netdev": "ibp65s0"}]
    declared = tmp_path / "declared.yaml"
    declared.write_text(yaml.safe_dump(doc, sort_keys=False))
    assert _net021(declared) == []


def test_a_one_port_sm_pool_on_a_rail_optimised_fabric_is_named_with_its_ways_out(tmp_path: Path) -> None:
    """A dedicated OpenSM head node (one HCA) beside 8-rail DGXs on a rail-optimised fat-tree: the builder
    said only "rail-optimised fabrics need the same number of ports on every node". The error names the
    pool, its port count and the rails, at the setting, with what a site can do instead."""
    from conftest import run_cli

    doc = yaml.safe_load((EXAMPLES / "hdr-fat-tree-a100.yaml").read_text())
    doc["pools"].append(
        {
            "name": "sm",
            "role": "management",
            "count": 2,
            "spec": {
                "gpu": None, "gpus": 0, "gpu_interconnect": "none", "power_kw": 0.8, "rack_units": 1,
                "nics": [{"purpose": "compute", "model": "cx6", "count": 1, "ports": 1, "speed_gbps": 200}],
            },
        }
    )  # fmt: skip
    path = tmp_path / "sm-pool.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    code, out, err = run_cli("validate", str(path))
    assert code == 1 and "PLN001" in out, out + err
    assert (
        "pool(s) `sm` (1) have fewer ports on it" in out
        and "(8 rails" in out
        and "rail_optimized: false" in out
    )
