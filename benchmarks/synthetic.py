"""Synthetic large blueprints for the benchmarks (a module name apart from the `blueprints` package)."""

from __future__ import annotations

# Bare metal through MAAS, as a site of this size would be. The default compute_cidr (a /16 split into
# one subnet per rail) holds 8,181 nodes per rail; 12,800 nodes need a /12 (DEP010 says so otherwise).
_DEPLOYMENT = "deployment: {target: maas, maas: {compute_cidr: 10.64.0.0/12}}\n"


def fat_tree_blueprint(gpus: int) -> str:
    """A 3-tier rail-optimised NDR fat-tree of DGX H100 (8 GPUs, 8 rails per node).

    QM9700 (radix 64) carries at most 64^3/4 = 65,536 NDR ports in 3 tiers; beyond that the switch is a
    Quantum-X800 Q3400 split to 288 NDR ports.
    """
    nodes = gpus // 8
    switch = "qm9700" if gpus <= 65536 else "q3400"
    su = 32 if switch == "qm9700" else 128
    racks = nodes // 4 + nodes // 32 + 200
    rows = max(1, -(-racks // 100))
    return f"""apiVersion: cluster-blueprint/v1
name: bench-ft-{gpus}
site: {{rows: {rows}, racks_per_row: 100, rack: {{units: 48, power_kw: 44}}}}
pools:
  - {{name: dgx, role: gpu, count: {nodes}, server: dgx-h100, placement: {{nodes_per_rack: 4}}}}
fabrics:
  compute:
    technology: infiniband-ndr
    topology: {{kind: fat-tree, tiers: 3, switch: {switch}, rail_optimized: true, scalable_unit: {su}}}
    subnet_manager: {{kind: ufm, ha: true}}
{_DEPLOYMENT}"""


def dragonfly_blueprint(gpus: int) -> str:
    """A RoCE v2 dragonfly: one 8-NIC node per router, p = 8 terminals, a = 2h.

    a = 2p = 2h = 16 (Kim et al.'s balanced dragonfly) reaches a·h + 1 = 129 groups, 2,064 routers; larger
    clusters take the smallest a = 2h (32, 64) whose a·h + 1 groups hold them (TOP007), globally
    over-provisioned rather than invalid.
    """
    nodes = gpus // 8
    a = next(a for a in (16, 32, 64) if a * (a * (a // 2) + 1) >= nodes)
    groups = max(2, -(-nodes // a))
    racks = nodes // 4 + 2 * groups + 50
    rows = max(1, -(-racks // 100))
    return f"""apiVersion: cluster-blueprint/v1
name: bench-df-{gpus}
site: {{rows: {rows}, racks_per_row: 100, rack: {{units: 48, power_kw: 44}}}}
pools:
  - name: hgx
    role: gpu
    count: {nodes}
    server: hgx-h200
    placement: {{nodes_per_rack: 4}}
fabrics:
  compute:
    technology: roce-v2-400
    topology: {{kind: dragonfly, switch: sn5600, p: 8, a: {a}, h: {a // 2}, groups: {groups}, global_arrangement: relative}}
    lossless: {{pfc: true, ecn: true, dscp: 26}}
{_DEPLOYMENT}"""
