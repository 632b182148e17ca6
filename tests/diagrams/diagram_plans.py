"""Plans for the diagram tests: the reference example, a 100k-GPU fat-tree, a dragonfly and tori."""

from __future__ import annotations

import tempfile
from functools import cache
from pathlib import Path

from generator.pipeline import load_and_resolve
from generator.plan.build import build_plan
from generator.plan.model import Plan

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "superpod-h100-4su.yaml"
_DIR = tempfile.TemporaryDirectory(prefix="diagram-blueprints-")

_HEAD = """apiVersion: cluster-blueprint/v1
name: {name}
site: {{name: dc1, rows: {rows}, racks_per_row: {racks}, rack: {{units: 48, power_kw: 44}}}}
deployment: {{target: maas}}
pools:
  - {{name: {pool}, count: {count}, server: {server}, placement: {{nodes_per_rack: {per_rack}}}}}
fabrics:
  compute:
    technology: {tech}
    topology: {topology}
"""

# 100,000 H100 GPUs = 12,500 DGX H100 on a 3-tier rail-optimised QM9700 fat-tree. At NDR (64 ports of
# 400G) a 3-tier fat-tree ends at 64^3/4 = 65,536 node ports (8,192 eight-rail nodes), so the big plan
# runs the QM9700 at NDR200: 128 ports of 200G, scalable units of 64 nodes, 25 pods.
BLUEPRINTS = {
    "gpu100k": dict(
        name="gpu100k",
        rows=60,
        racks=80,
        pool="dgx",
        count=12500,
        server="dgx-h100",
        per_rack=4,
        tech="infiniband-ndr200",
        topology="{kind: fat-tree, tiers: 3, switch: qm9700, rail_optimized: true, scalable_unit: 64}",
    ),
    "dragonfly": dict(
        name="dragonfly",
        rows=4,
        racks=20,
        pool="gpu",
        count=70,
        server="pcie-l40s-8",
        per_rack=4,
        tech="infiniband-ndr",
        topology="{kind: dragonfly, switch: qm9700, p: 8, a: 4, h: 4, groups: 5}",
    ),
    "torus": dict(
        name="torus",
        rows=4,
        racks=20,
        pool="dgx",
        count=16,
        server="dgx-h100",
        per_rack=4,
        tech="infiniband-ndr",
        topology="{kind: torus, dimensions: [4, 4]}",
    ),
    "torus-big": dict(
        name="torus-big",
        rows=20,
        racks=40,
        pool="dgx",
        count=512,
        server="dgx-h100",
        per_rack=4,
        tech="infiniband-ndr",
        topology="{kind: torus, dimensions: [16, 16, 2]}",
    ),
    "dragonfly-big": dict(
        name="dragonfly-big",
        rows=30,
        racks=40,
        pool="gpu",
        count=2000,
        server="pcie-l40s-8",
        per_rack=4,
        tech="infiniband-ndr",
        topology="{kind: dragonfly, switch: qm9700, p: 16, a: 8, h: 8, groups: 32}",
    ),
}


@cache
def plan_named(name: str) -> Plan:
    if name == "superpod":
        path = EXAMPLE
    else:
        path = Path(_DIR.name) / f"{name}.yaml"
        path.write_text(_HEAD.format(**BLUEPRINTS[name]))
    return build_plan(load_and_resolve(path)[1])
