"""Synthetic large blueprints for the benchmarks (a module name apart from the `blueprints` package)."""

from __future__ import annotations

# Bare metal through MAAS, as a site of this size would be. The default compute_cidr (a /16 split into
# one subnet per rail) holds 8,181 nodes per rail; 12,800 nodes need a /12 (DEP010 says so otherwise).
_DEPLOYMENT = "deployment: {target: maas, maas: {compute_cidr: 10.64.0.0/12}}\n"


def fat_tree_blueprint(gpus: int) -> str:
    """A 3-tier rail-optimised InfiniBand fat-tree, 8 GPUs and 8 rails per node.

    Up to 65,536 GPUs: NDR DGX H100 on QM9700 (radix 64 carries at most 64^3/4 = 65,536 ports in 3 tiers).
    Beyond: XDR B200 nodes with ConnectX-8 on Quantum-X800 Q3400 at its native 144 XDR ports (one InfiniBand
    node numbers at most 254 ports, rule NET025, so the Q3400 is not split to 288 NDR ports), DOCA-Host
    past the 2.9 branch that lacks ConnectX-8 (SFT003).
    """
    nodes = gpus // 8
    if gpus <= 65536:
        tech, switch, su, pool, software = "infiniband-ndr", "qm9700", 32, "server: dgx-h100", ""
    else:
        tech, switch, su, pool, software = "infiniband-xdr", "q3400", 64, _XDR_SPEC, _XDR_SOFTWARE
    # compute racks + network racks (the 144-port XDR leaves come in more racks than the NDR ones) + spare
    racks = nodes // 4 + nodes // (32 if gpus <= 65536 else 8) + 200
    rows = max(1, -(-racks // 100))
    return f"""apiVersion: cluster-blueprint/v1
name: bench-ft-{gpus}
site: {{rows: {rows}, racks_per_row: 100, rack: {{units: 48, power_kw: 60}}}}
pools:
  - {{name: dgx, role: gpu, count: {nodes}, {pool}, placement: {{nodes_per_rack: 4}}}}
fabrics:
  compute:
    technology: {tech}
    topology: {{kind: fat-tree, tiers: 3, switch: {switch}, rail_optimized: true, scalable_unit: {su}}}
    subnet_manager: {{kind: ufm, ha: true}}
{_DEPLOYMENT}{software}"""


# An 8-GPU B200 node with eight ConnectX-8 XDR adapters, as the NET025 pass fixture declares it.
_XDR_SPEC = (
    "spec: {gpu: b200, gpus: 8, gpu_interconnect: nvlink5, nvlink_domain_gpus: 8, nvswitches: 2, pcie_gen: 6, "
    "nics: [{purpose: compute, model: cx8, count: 8, speed_gbps: 800}], power_kw: 14.3, rack_units: 10}"
)
_XDR_SOFTWARE = (
    "software: {ofed: {kind: doca, version: '3.0.0'}, driver_branch: '570', cuda: '12.8', nccl: '2.26.2'}\n"
)


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
