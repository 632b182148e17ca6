"""Every switch port the plan cables exists on the switch's faceplate.

A switch of C physical cages carries C x (logical ports per cage at the fabric's speed) ports: an SN5600's 64
OSFP cages give 128 ports at 400G only split two ways (swp1s0, swp1s1, ...). A plan that numbers a spine's,
dragonfly router's or torus switch's ports 1..radix without the split asks for cages the switch does not
have (swp65..swp80 of a 64-cage SN5600) and emits them unsplit, each 400G link on an 800G port. The oracle is
the catalogue's cages and logical ports at the cable's speed, not the builders' own arithmetic.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
import yaml
from conftest import EXAMPLES

from generator.plan.model import Plan
from generator.resolve import ResolvedCluster


@functools.cache
def _built(path: str) -> tuple[ResolvedCluster, Plan]:
    from generator.pipeline import load_and_resolve
    from generator.plan.build import build_plan

    cluster = load_and_resolve(path)[1]
    return cluster, build_plan(cluster)


def _storage_leaf_spine_sn5600(tmp: Path) -> str:
    """The RoCE example with a 400G RoCE storage leaf-spine on SN5600s: its spines split every cage."""
    doc = yaml.safe_load((EXAMPLES / "roce-rail-2tier.yaml").read_text())
    doc["fabrics"]["storage"] = {
        "technology": "roce-v2-400",
        "topology": {"kind": "leaf-spine", "switch": "sn5600"},
        "mtu": 9000,
    }
    path = tmp / "roce-storage-sn5600.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return str(path)


def _blueprints(tmp: Path) -> list[str]:
    return [*sorted(str(p) for p in EXAMPLES.glob("*.yaml")), _storage_leaf_spine_sn5600(tmp)]


def _overbooked(cluster: ResolvedCluster, plan: Plan) -> list[str]:
    """``device port`` for each cabled switch port the model's faceplate does not have at the cable's speed:
    the catalogue's logical ports at that speed over its cages give the ports a cage carries (an SN5600 at
    400G: 128 / 64 = 2), which the plan's device must split to, and cages x that bounds the port numbers."""
    devices = plan.device_by_name
    bad = []
    for link in plan.links:
        for end in (link.a, link.b):
            d = devices[end.device]
            if d.kind != "switch":
                continue
            model = cluster.catalog.switches[d.model]
            at_speed = model.ports_at(link.speed_gbps)
            if at_speed == 0:  # a dedicated uplink at its own speed (SN2201's 100G): numbered after the cages
                uplinks = model.uplinks.count if model.uplinks else 0
                if end.port_number > model.ports + uplinks:
                    bad.append(f"{d.name} ({d.role}, {d.model}) uplink port {end.port}")
                continue
            per_cage = max(1, at_speed // model.cages)
            if d.ports_per_cage != per_cage or end.port_number > model.cages * per_cage:
                bad.append(
                    f"{d.name} ({d.role}, {d.model}: {model.cages} cages of {per_cage} at "
                    f"{link.speed_gbps:g}G) port {end.port} of a plan splitting cages {d.ports_per_cage} ways"
                )
    return bad


def test_every_cabled_switch_port_is_on_the_faceplate(tmp_path_factory: pytest.TempPathFactory) -> None:
    tmp = tmp_path_factory.mktemp("faceplate")
    failures = {}
    for path in _blueprints(tmp):
        cluster, plan = _built(path)
        bad = _overbooked(cluster, plan)
        if bad:
            failures[Path(path).stem] = f"{len(bad)} ports, e.g. {bad[0]}"
    assert not failures, failures


def test_split_spines_and_routers_are_split(tmp_path: Path) -> None:
    """The storage spines of the SN5600 variant and the dragonfly example's routers run 400G on 800G cages:
    two logical ports a cage, as the leaves at the other end of their cables."""
    _, plan = _built(_storage_leaf_spine_sn5600(tmp_path))
    spines = [d for d in plan.switches("storage") if d.role == "spine"]
    assert spines and all(d.ports_per_cage == 2 for d in spines)
    _, plan = _built(str(EXAMPLES / "roce-dragonfly.yaml"))
    routers = [d for d in plan.switches("compute") if d.role == "router"]
    assert routers and all(d.ports_per_cage == 2 for d in routers)
