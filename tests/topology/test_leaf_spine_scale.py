"""Storage and management leaf-spines grow with the cluster: right-sized uplinks, 3 tiers when one spine
layer is full, small pools sharing leaves. Expectations counted by hand from the example's shape
(DGX H100: 4 storage ports at NDR200 on 128-port QM9700 leaves; 1 x 1G management port on SN2201 with
4 x 100G uplinks, SN4600C spines of 64 x 100G)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from generator.topology.base import LeafSpineParams, Terminal
from generator.topology.leaf_spine import leaf_spine
from generator.topology.metrics import exact_spofs

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "superpod-h100-4su.yaml"


def nodes(prefix: str, n: int, ports: int) -> list[list[Terminal]]:
    return [[Terminal(f"{prefix}{i:04d}", f"mlx5_{r}/1", 1, r) for r in range(ports)] for i in range(n)]


def test_uplinks_follow_the_most_loaded_leaf_not_the_switch() -> None:
    f = leaf_spine([("oss", nodes("o", 2, 1)), ("su1", nodes("g", 32, 1))], radix=128)
    ls = Counter(link.a.device for link in f.links if link.layer == "leaf_spine")
    pairs = Counter((link.a.device, link.b.device) for link in f.links if link.layer == "leaf_spine")
    assert Counter(s.tier for s in f.switches)["spine"] >= 2
    # 32 nodes at 1:1: 32 uplinks, not the 64 the 128-port switch has left; every leaf the same, and the
    # same count to every spine (OpenSM ftree: "ERR AB0B: Different number of ports in an upward port group")
    assert ls == {"s-leaf-su1-01": 32, "s-leaf-oss-01": 32}
    assert len(set(pairs.values())) == 1


def test_small_pools_share_leaves() -> None:
    f = leaf_spine(
        [("oss", nodes("o", 8, 2)), ("mgmt", nodes("m", 3, 2)), ("su1", nodes("g", 32, 2))],
        radix=128,
        small_units=["oss", "mgmt"],
    )
    leaves = sorted(s.name for s in f.switches if s.tier == "leaf")
    assert leaves == ["s-leaf-oss-01", "s-leaf-oss-02", "s-leaf-su1-01", "s-leaf-su1-02"]
    assert exact_spofs(f) == []  # dual-homed nodes on a leaf set, two spines


def test_one_full_spine_layer_becomes_three_tiers() -> None:
    # 40 leaves of 8 nodes each on 16-port switches at 1:1: 8 up per leaf, spines of 16 ports
    f = leaf_spine([(f"u{i}", nodes(f"u{i}-", 8, 1)) for i in range(40)], radix=16)
    tiers = Counter(s.tier for s in f.switches)
    assert isinstance(f.params, LeafSpineParams)
    assert tiers["core"] > 0 and f.params.tiers == 3 and f.params.core is not None
    used: Counter[tuple[str, int]] = Counter()
    for link in f.links:
        for end in (link.a, link.b):
            if not isinstance(end.port, Terminal):
                used[(end.device, end.port)] += 1
    assert max(used.values()) == 1  # no switch port used twice
    ports = {s.name: s.ports for s in f.switches}
    assert all(port <= ports[dev] for dev, port in used)
    # single-homed nodes depend on their leaf; no spine or core is a single point of failure
    assert all(name.startswith("s-leaf-") for name in exact_spofs(f))


def _scaled(tmp_path: Path, sus: int) -> Path:
    data = yaml.safe_load(EXAMPLE.read_text())
    data["pools"][0]["count"] = 32 * sus - 1  # one node slot for the UFM appliances, as the example
    data["site"]["rows"] = 3 * sus + 8
    data["fabrics"]["compute"]["topology"]["tiers"] = 3
    out = tmp_path / f"superpod-{sus}su.yaml"
    out.write_text(yaml.safe_dump(data, sort_keys=False))
    return out


@pytest.mark.parametrize("sus", [32, 64])
def test_example_scaled_plans_without_errors(tmp_path: Path, sus: int) -> None:
    from conftest import run_cli

    from generator.pipeline import load_and_resolve
    from generator.plan.build import build_plan

    path = _scaled(tmp_path, sus)
    code, out, err = run_cli("validate", str(path))
    assert code == 0 and " 0 error(s)" in out, out + err
    plan = build_plan(load_and_resolve(path)[1])
    storage = Counter(link.layer for link in plan.links_of("storage"))
    assert storage["node_leaf"] == (32 * sus - 1) * 4 + 8 * 2 + 3
    # right-sized: every leaf gets the uplinks of a full SU leaf (32 DGX storage ports at 1:1), no more
    leaves = plan.metrics["storage"].switches["leaf"]
    assert storage["leaf_spine"] == leaves * 32
    assert plan.metrics["storage"].switches.get("core", 0) > 0  # 4 x 32 SU leaves exceed one spine layer
    mgmt = Counter(link.layer for link in plan.links_of("management"))
    assert mgmt["node_leaf"] == 32 * sus - 1 + 8 + 3
    assert plan.metrics["management"].switches["spine"] >= 2
