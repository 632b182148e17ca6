from __future__ import annotations

from collections.abc import Iterator

from blueprints.models.topology import FatTree
from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.sizing import capacity_formula, clos_capacity, growth_endpoints, leaf_down, radix


class ExtraTier(Rule):
    """A 3-tier fat-tree whose endpoints fit in 2 tiers.

    Two tiers of radix k carry k²/2 endpoints (non-blocking). Below that a third tier adds a layer of
    switches and a layer of cables (5k²/4 instead of 3k/2 switches at full size), one more hop of latency
    each way, and power, for no extra reach. Use ``growth_nodes`` if the third tier is for planned growth:
    the rule then compares the growth size.
    """

    id = "TOP002"
    severity = Severity.INFO
    title = "3 tiers where 2 suffice"
    rationale = "An unneeded tier costs switches, cables, power and a hop of latency."
    fix = "set tiers: 2, or state the planned size with growth_nodes"
    tags = ("fat-tree", "cost")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        for fab in cluster.fabrics.values():
            topo = fab.spec.topology
            k = radix(fab)
            if k == 0 or not isinstance(topo, FatTree) or topo.tiers != 3:
                continue
            need = growth_endpoints(cluster, fab.name, topo.growth_nodes)
            down = leaf_down(k, topo.oversubscription, topo.rail_optimized, topo.scalable_unit)
            if need <= clos_capacity(k, 2, down):
                yield self.finding(
                    f"{fab.name} fabric: {need:,} endpoints fit in 2 tiers of radix {k} "
                    f"({capacity_formula(k, 2, down)}); "
                    "the third tier adds switches, cables and a hop",
                    (*fab.source_path, "topology", "tiers"),
                )
