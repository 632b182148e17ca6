from __future__ import annotations

from collections.abc import Iterator

from blueprints.models.topology import FatTree
from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.sizing import fabric_nodes


class GrowthNodes(Rule):
    """``growth_nodes`` smaller than the nodes already on the fabric.

    ``growth_nodes`` sizes the spines and cores for a future node count so that adding scalable units
    later needs no re-cabling of the upper tiers. A figure below today's node count cannot be a growth
    target and would size the fabric smaller than what is being built.
    """

    id = "TOP004"
    severity = Severity.ERROR
    title = "growth_nodes below the current node count"
    rationale = "A growth target below today's size would under-size the upper tiers."
    fix = "set growth_nodes to the planned final node count (at least today's), or remove it"
    tags = ("fat-tree", "growth")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        for fab in cluster.fabrics.values():
            topo = fab.spec.topology
            if not isinstance(topo, FatTree) or topo.growth_nodes is None:
                continue
            nodes = fabric_nodes(cluster, fab.name)
            if topo.growth_nodes < nodes:
                yield self.finding(
                    f"{fab.name} fabric: growth_nodes {topo.growth_nodes:,} is below the {nodes:,} "
                    "nodes already on it",
                    (*fab.source_path, "topology", "growth_nodes"),
                    f"set growth_nodes of at least {nodes}",
                )
