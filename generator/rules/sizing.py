"""Analytic fabric and NIC figures the rules share (no plan needed: closed-form from the ResolvedCluster).

Formulas (Al-Fares, Loukissas, Vahdat, SIGCOMM 2008, and the standard folded-Clos counts): a folded Clos of
radix k whose leaves split k into d:u down:up carries k·down endpoints in 2 tiers and k²/2·down in 3 tiers
(k²/2 and k³/4 when d:u = 1:1); a dragonfly router needs p + a + h − 1 ports; a torus vertex needs 2 links
per dimension of size > 2 (1 when the dimension is 2), a hypercube vertex one per dimension.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from blueprints.catalog.schema import ServerNic
from blueprints.models import parse_ratio
from blueprints.models.topology import Dragonfly, FatTree, Hypercube, LeafSpine, Torus
from generator.findings import Path
from generator.resolve import NicPort, ResolvedCluster, ResolvedFabric, ResolvedPool
from generator.topology.base import ratio_down_ports, uplinks_for

if TYPE_CHECKING:
    from generator.rules.base import RuleContext

PURPOSE_ORDER = {"compute": 0, "storage": 1, "management": 2}


# ---- NICs --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Adapter:
    """One NIC adapter of a node: its server/spec entry, where to point findings, and its cabled ports."""

    pool: ResolvedPool
    nic_index: int  # index in the server's (or spec's) nic list
    snic: ServerNic
    ports: tuple[NicPort, ...]
    path: Path

    @property
    def line_gbps(self) -> float:
        return sum(p.speed_gbps for p in self.ports)


def pool_spec_index(cluster: ResolvedCluster, pool: ResolvedPool) -> int:
    return int(pool.source_path[1]) if len(pool.source_path) > 1 else 0


def nic_path(cluster: ResolvedCluster, pool: ResolvedPool, nic_index: int, key: str | None = None) -> Path:
    """Where a NIC of ``pool`` is written: the spec's nic entry, or the pool's ``server`` id."""
    i = pool_spec_index(cluster, pool)
    bp_pool = cluster.blueprint.pools[i]
    if bp_pool.spec is not None:
        base: Path = ("pools", i, "spec", "nics", nic_index)
        return (*base, key) if key else base
    return ("pools", i, "server")


def server_path(cluster: ResolvedCluster, pool: ResolvedPool, key: str | None = None) -> Path:
    """The pool's ``server`` id, or a key of its explicit ``spec``."""
    i = pool_spec_index(cluster, pool)
    if cluster.blueprint.pools[i].spec is not None:
        return ("pools", i, "spec", key) if key else ("pools", i, "spec")
    return ("pools", i, "server")


def adapters(cluster: ResolvedCluster, pool: ResolvedPool) -> Iterator[Adapter]:
    """The node's adapters in resolve order (compute, storage, management), each with its ports."""
    ports = list(pool.ports)
    pos = 0
    ordered = sorted(enumerate(pool.server.nics), key=lambda t: (PURPOSE_ORDER[t[1].purpose], t[0]))
    for nic_index, snic in ordered:
        for _ in range(snic.count):
            mine = tuple(ports[pos : pos + snic.ports])
            pos += snic.ports
            yield Adapter(pool, nic_index, snic, mine, nic_path(cluster, pool, nic_index))


# ---- fabrics ----------------------------------------------------------------------------------


def endpoints(cluster: ResolvedCluster, fabric: str) -> int:
    """NIC ports attached to ``fabric`` over the whole cluster."""
    return sum(p.count * len(p.ports_for(fabric)) for p in cluster.pools)


def fabric_nodes(cluster: ResolvedCluster, fabric: str) -> int:
    return sum(p.count for p in cluster.pools_on(fabric))


def radix(fab: ResolvedFabric) -> int:
    """Logical ports of the fabric's (leaf) switch at the fabric's speed; 0 without a usable switch."""
    return fab.switch.ports_at(fab.speed_gbps) if fab.switch else 0


def leaf_split(k: int, ratio: str) -> tuple[int, int]:
    """Down ports of a leaf of radix ``k`` at oversubscription ``ratio`` (down:up) and the uplinks they
    need: the fat-tree builder's own split (generator/topology/base.py), never a second computation."""
    parsed = parse_ratio(ratio)
    down = ratio_down_ports(k, parsed)
    return down, uplinks_for(down, parsed)


def leaf_down(k: int, ratio: str, rail_optimized: bool = False, scalable_unit: int | None = None) -> int:
    """Down ports a fat-tree leaf gives to nodes: the SU size on rail-optimised leaves, else k·d/(d+u)."""
    down = leaf_split(k, ratio)[0]
    return min(scalable_unit, down) if rail_optimized and scalable_unit else down


def pod_leaves(k: int, rails: int | None = None) -> int:
    """Leaves in a 3-tier pod: a pod spine has k/2 down ports; rail-optimised pods hold whole SUs."""
    half = k // 2
    return (half // rails) * rails if rails and rails > 1 else half


def clos_capacity(k: int, tiers: int, down: int, rails: int | None = None) -> int:
    """Endpoints a folded Clos of radix ``k`` with ``down`` node ports per leaf carries.

    2 tiers: at most k leaves (one spine port each) → k·down (k²/2 at 1:1). 3 tiers: at most k pods (one
    core port each) of pod_leaves leaves → k·(k/2)·down (k³/4 at 1:1).
    """
    if tiers <= 1:
        return k
    if tiers == 2:
        return k * down
    return k * pod_leaves(k, rails) * down


def capacity_formula(k: int, tiers: int, down: int, rails: int | None = None) -> str:
    """The capacity as the formula the user can check (k²/2, k³/4 or the general form)."""
    cap = clos_capacity(k, tiers, down, rails)
    if tiers == 2:
        return f"k²/2 = {cap:,}" if 2 * down == k else f"k × {down} down = {cap:,}"
    lpp = pod_leaves(k, rails)
    if 2 * down == k and 2 * lpp == k:
        return f"k³/4 = {cap:,}"
    return f"k × {lpp} leaves per pod × {down} down = {cap:,}"


def growth_endpoints(cluster: ResolvedCluster, fabric: str, growth_nodes: int | None) -> int:
    """Endpoints the fabric must be sized for: today's, or ``growth_nodes`` at today's ports per node."""
    now = endpoints(cluster, fabric)
    nodes = fabric_nodes(cluster, fabric)
    if not growth_nodes or nodes == 0 or growth_nodes <= nodes:
        return now
    return math.ceil(growth_nodes * now / nodes)


def ports_per_node(cluster: ResolvedCluster, fabric: str) -> int:
    """Most ports any node has on ``fabric`` (rails of a rail-optimised design)."""
    return max((len(p.ports_for(fabric)) for p in cluster.pools_on(fabric)), default=0)


def switch_count(ctx: RuleContext, fab: ResolvedFabric) -> int:
    """The switches the plan builds for ``fab`` (tiers, pods and per-unit leaves counted); where no plan
    can be built (PLN001 says why), the closed-form lower bound ``min_switches``."""
    plan = ctx.plan
    if plan is not None:
        return len(plan.switches(fab.name))
    return min_switches(ctx.cluster, fab)


def min_switches(cluster: ResolvedCluster, fab: ResolvedFabric) -> int:
    """A lower bound on the switches ``fab`` needs (0: none, or it cannot be told)."""
    topo = fab.spec.topology
    eps = endpoints(cluster, fab.name)
    if topo is None or eps == 0:
        return 0
    if isinstance(topo, Dragonfly):
        return topo.a * topo.groups
    if isinstance(topo, Torus):
        return math.prod(topo.dimensions) if topo.attach == "switch" else 0
    if isinstance(topo, Hypercube):
        return 2**topo.dimension if topo.attach == "switch" else 0
    k = radix(fab)
    if k == 0:
        return 0
    if isinstance(topo, LeafSpine):
        return 1 if eps <= k else math.ceil(eps / leaf_split(k, topo.oversubscription)[0]) + 1
    if isinstance(topo, FatTree):
        down, _ = leaf_split(k, topo.oversubscription)
        if topo.rail_optimized:
            rails = ports_per_node(cluster, fab.name)
            if rails > 1:
                return rails
        return 1 if eps <= k else math.ceil(eps / max(down, 1)) + 1
    return 0


def gb(n_bytes: float) -> str:
    """Bytes as GB with sensible precision (decimal GB, as GPU memory is quoted)."""
    v = n_bytes / 1e9
    return f"{v:,.0f} GB" if v >= 100 else f"{v:,.1f} GB"


def params_text(params: float) -> str:
    return f"{params / 1e9:g}B" if params >= 1e9 else f"{params / 1e6:g}M"
