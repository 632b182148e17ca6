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
