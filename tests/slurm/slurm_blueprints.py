"""Blueprints for the Slurm tests (one per fabric shape), planned once per session."""

from __future__ import annotations

import tempfile
from functools import cache
from pathlib import Path

from generator.pipeline import load_and_resolve
from generator.plan.build import build_plan
from generator.plan.model import Plan
from generator.resolve import ResolvedCluster

HEAD = """apiVersion: cluster-blueprint/v1
name: {name}
site: {{name: dc1, rows: 8, racks_per_row: 20, rack: {{units: 48, power_kw: {kw}}}}}
deployment: {{target: maas}}
"""


def _bp(name: str, pools: str, compute: str, kw: int = 44) -> str:
    return HEAD.format(name=name, kw=kw) + "pools:\n" + pools + "fabrics:\n  compute:\n" + compute


BLUEPRINTS = {
    "partial": _bp(
        "partial",
        "  - {name: dgx, count: 100, server: dgx-h100, placement: {nodes_per_rack: 4}}\n",
        "    technology: infiniband-ndr\n    topology: {kind: fat-tree, switch: qm9700, scalable_unit: 32}\n",
    ),
    "tier3": _bp(
        "tier3",
        "  - {name: dgx, count: 160, server: dgx-h100, placement: {nodes_per_rack: 4}}\n",
        "    technology: infiniband-ndr\n"
        "    topology: {kind: fat-tree, tiers: 3, switch: qm9700, scalable_unit: 32}\n",
    ),
    "dragonfly": _bp(
        "dragonfly",
        "  - {name: gpu, count: 70, server: pcie-l40s-8}\n",
        "    technology: infiniband-ndr\n"
        "    topology: {kind: dragonfly, switch: qm9700, p: 8, a: 4, h: 4, groups: 5}\n",
    ),
    "torus": _bp(
        "torus",
        "  - {name: dgx, count: 16, server: dgx-h100}\n",
        "    technology: infiniband-ndr\n    topology: {kind: torus, dimensions: [4, 4]}\n",
    ),
    "torus-switched": _bp(
        "torus-switched",
        "  - {name: dgx, count: 8, server: dgx-h100}\n",
        "    technology: infiniband-ndr\n    topology: {kind: torus, dimensions: [2, 2], "
        "attach: switch, switch: qm9700, nodes_per_switch: 2}\n",
    ),
    "nvl72": _bp(
        "nvl72",
        "  - {name: gb, count: 72, server: gb200-nvl72-tray, placement: {nodes_per_rack: 18}}\n",
        "    technology: infiniband-ndr\n    topology: {kind: fat-tree, switch: qm9700, scalable_unit: 18}\n",
        kw=140,
    ),
    # no placement: the trays are racked one NVLink domain a rack by default (power would fit 20)
    "nvl72-default": _bp(
        "nvl72-default",
        "  - {name: gb, count: 36, server: gb200-nvl72-tray}\n",
        "    technology: infiniband-xdr\n    topology: {kind: fat-tree, switch: q3400, scalable_unit: 36}\n",
        kw=140,
    ),
    # 6 compute ports per node on 32-port leaf halves: nodes 6 and 11 straddle two leaves
    "non-rail": _bp(
        "non-rail",
        "  - {name: n, count: 20, spec: {gpu: h100-sxm, gpus: 8, gpu_interconnect: nvlink4, "
        "power_kw: 10, rack_units: 8, nics: [{model: cx7, count: 6, speed_gbps: 400}]}}\n",
        "    technology: infiniband-ndr\n"
        "    topology: {kind: fat-tree, switch: qm9700, rail_optimized: false}\n",
    ),
    # one whole NVL72 domain beside DGX H100 nodes that are in no NVLink domain
    "nvl72-mixed": _bp(
        "nvl72-mixed",
        "  - {name: gb, count: 18, server: gb200-nvl72-tray}\n"
        "  - {name: dgx, count: 4, server: dgx-h100, placement: {nodes_per_rack: 4}}\n",
        "    technology: infiniband-ndr\n    topology: {kind: fat-tree, switch: qm9700, rail_optimized: false}\n",
        kw=140,
    ),
    # one NVL72 domain and 2 trays of a second (below the base block size)
    "nvl72-partial": _bp(
        "nvl72-partial",
        "  - {name: gb, count: 20, server: gb200-nvl72-tray}\n",
        "    technology: infiniband-ndr\n    topology: {kind: fat-tree, switch: qm9700, rail_optimized: false}\n",
        kw=140,
    ),
    # two InfiniBand tenants (each pool pinned to its own P_Key) and a pool in no tenant partition
    "tenants": _bp(
        "tenants",
        "  - {name: teama, count: 8, server: dgx-h100, placement: {nodes_per_rack: 4}}\n"
        "  - {name: teamb, count: 8, server: dgx-h100, placement: {nodes_per_rack: 4}}\n"
        "  - {name: common, count: 4, server: dgx-h100, placement: {nodes_per_rack: 4}}\n",
        "    technology: infiniband-ndr\n    topology: {kind: fat-tree, switch: qm9700, scalable_unit: 16}\n"
        "    subnet_manager:\n      kind: ufm\n      ha: true\n      partitions:\n"
        "        - {name: a, pkey: 0x0a01, pools: [teama]}\n        - {name: b, pkey: 0x0b01, pools: [teamb]}\n",
    ),
    # NVIDIA and AMD GPUs, and two NVIDIA models, on one fabric
    "vendors": _bp(
        "vendors",
        "  - {name: h100, count: 4, server: dgx-h100, placement: {nodes_per_rack: 4}}\n"
        "  - {name: mi, count: 3, server: mi300x-8}\n"
        "  - {name: l40s, count: 2, server: pcie-l40s-8}\n",
        "    technology: infiniband-ndr\n    topology: {kind: fat-tree, switch: qm9700, rail_optimized: false}\n"
        "    subnet_manager: {kind: opensm, ha: true}\n",
    ),
    # AMD GPUs only
    "amd": _bp(
        "amd",
        "  - {name: mi, count: 4, server: mi300x-8}\n",
        "    technology: infiniband-ndr\n    topology: {kind: fat-tree, switch: qm9700}\n"
        "    subnet_manager: {kind: ufm, ha: true}\n",
    ),
    # a site leaf named `unattached` beside a pool with no compute port (the tool's pseudo-switch's name)
    "unattached-leaf": _bp(
        "unattached-leaf",
        "  - {name: gpu, count: 8, server: dgx-h100, placement: {nodes_per_rack: 4}}\n"
        "  - name: lone\n    count: 2\n    spec: {gpu: l40s, gpus: 4, gpu_interconnect: pcie4, power_kw: 2, "
        "rack_units: 2, nics: [{purpose: management, model: x710, count: 1, ports: 1, speed_gbps: 1}]}\n",
        "    technology: infiniband-ndr\n    topology:\n      kind: fat-tree\n      switch: qm9700\n"
        "      rail_optimized: false\n      names:\n        leaf: {names: [unattached, ib-leaf-2]}\n"
        "    subnet_manager: {kind: ufm, ha: true}\n",
    ),
    # physical leaves (not rail-optimised) that the site names like scalable units
    "su-named-leaves": _bp(
        "su-named-leaves",
        "  - {name: gpu, count: 8, server: dgx-h100, placement: {nodes_per_rack: 4}}\n",
        "    technology: infiniband-ndr\n    topology:\n      kind: fat-tree\n      switch: qm9700\n"
        "      rail_optimized: false\n      names:\n        leaf: {names: [sup-a1, sup-a2]}\n"
        "    subnet_manager: {kind: ufm, ha: true}\n",
    ),
    "cloud": "apiVersion: cluster-blueprint/v1\nname: cloud\ndeployment: {target: aws, cloud: {region: us-east-1}}\n"
    "pools:\n  - {name: p5, count: 4, server: aws/p5.48xlarge}\n",
    # GCP A3 Mega (its vendor's RxDM job prolog/epilog), alone and beside another machine type
    "a3mega": "apiVersion: cluster-blueprint/v1\nname: a3mega\n"
    "deployment: {target: gcp, cloud: {region: us-central1, zone: us-central1-a}}\n"
    "pools:\n  - {name: mega, count: 2, server: gcp/a3-megagpu-8g}\n",
    "a3mixed": "apiVersion: cluster-blueprint/v1\nname: a3mixed\n"
    "deployment: {target: gcp, cloud: {region: us-central1, zone: us-central1-a}}\n"
    "pools:\n  - {name: mega, count: 2, server: gcp/a3-megagpu-8g}\n"
    "  - {name: ultra, count: 2, server: gcp/a3-ultragpu-8g}\n",
}

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "superpod-h100-4su.yaml"
_DIR = tempfile.TemporaryDirectory(prefix="slurm-blueprints-")


@cache
def planned(name: str) -> tuple[ResolvedCluster, Plan]:
    """(cluster, plan) for a blueprint above, or "superpod" (the reference example)."""
    if name == "superpod":
        path = EXAMPLE
    else:
        path = Path(_DIR.name) / f"{name}.yaml"
        path.write_text(BLUEPRINTS[name])
    _, cluster = load_and_resolve(path)
    return cluster, build_plan(cluster)
