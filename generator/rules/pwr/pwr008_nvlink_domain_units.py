from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from blueprints.models.topology import Dragonfly, FatTree
from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.topology.dragonfly import nodes_per_router

if TYPE_CHECKING:
    from generator.plan.model import Plan
    from generator.resolve.model import ResolvedCluster, ResolvedPool


class NvlinkDomainUnits(Rule):
    """Scalable units that rack a multi-node NVLink domain apart.

    A pool whose NVLink domain spans servers (a GB200 NVL72 rack's 18 trays) is racked one domain a rack
    (PWR007), but the planner starts a rack with each scalable unit of the compute fabric: a unit that ends
    inside a domain (the default 32 nodes of a 64-port rail leaf, for 18-tray domains) puts that domain's
    trays in two racks. The plan's rack elevations then show trays outside the rack whose NVLink joins them,
    and the Slurm blocks (``topology/block``) name domains the plan does not keep together.

    The hint names only keys the compute fabric's topology has: a fat-tree's unit is its ``scalable_unit``;
    a dragonfly's is a group (generator/plan/placing.py), ``a`` routers of ``p // ports-per-node`` nodes
    each (generator/topology/dragonfly.py), and its schema has no ``scalable_unit``.
    """

    id = "PWR008"
    severity = Severity.WARNING
    title = "scalable units split an NVLink domain across racks"
    rationale = "A rack-scale NVLink domain exists only inside its rack; the plan should rack it whole."
    fix = (
        "make the compute fabric's placement unit a multiple of the domain's node count (18 for NVL72): a "
        "fat-tree's scalable_unit; a dragonfly's nodes per group (a routers × p // ports-per-node nodes)"
    )
    tags = ("rack", "nvlink")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        if cluster.is_cloud:
            return
        pools = [p for p in cluster.pools if p.cloud is None and p.server.nodes_per_nvlink_domain > 1]
        plan = ctx.plan if pools else None
        if plan is None:  # nothing to hold, or no plan (PLN001 says why)
            return
        for pool in pools:
            yield from self._racked_apart(pool, plan, cluster)

    def _racked_apart(self, pool: ResolvedPool, plan: Plan, cluster: ResolvedCluster) -> Iterator[Finding]:
        """The first domain whose nodes the plan puts in more than one rack."""
        by_name = plan.device_by_name
        for hosts in pool.nvlink_domains:
            racks = sorted({by_name[h].rack or "" for h in hosts if h in by_name})
            if len(racks) > 1:
                yield self.finding(
                    f"pool `{pool.name}`: the NVLink domain of {hosts[0]}..{hosts[-1]} ({len(hosts)} nodes) "
                    f"is racked in {len(racks)} racks ({', '.join(racks[:4])})",
                    pool.source_path,
                    _hint(cluster, len(hosts)),
                )
                return


def _hint(cluster: ResolvedCluster, domain: int) -> str:
    """What the compute fabric's own schema lets the user change so no placement unit ends in a domain."""
    fabric = cluster.fabrics.get("compute")
    topology = fabric.spec.topology if fabric is not None else None
    if isinstance(topology, FatTree):
        return (
            f"make the compute fabric's scalable_unit a multiple of {domain} nodes, so no unit ends inside "
            "a domain"
        )
    if isinstance(topology, Dragonfly):
        # the builder puts whole nodes on a router: p // (the most compute ports a node has) of them
        per_node = max((len(p.ports_for("compute")) for p in cluster.pools), default=1) or 1
        per_router = nodes_per_router(topology.p, per_node)
        return (
            f"make the compute dragonfly's nodes per group, a × (p // {per_node} compute ports a node) = "
            f"{topology.a} × {per_router} = {topology.a * per_router} now, a multiple of {domain} (set `a` "
            "and `p`), so no group ends inside a domain"
        )
    kind = getattr(topology, "kind", "compute fabric")
    return f"nothing to set in the {kind} topology: none of its keys says where its placement units end"
