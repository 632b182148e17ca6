from __future__ import annotations

from collections.abc import Iterator

from blueprints.models.topology import FatTree
from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.sizing import leaf_split, radix


class SuPortBudget(Rule):
    """A scalable unit larger than a rail leaf's down ports.

    In a rail-optimised fat-tree each scalable unit (SU) has one leaf per rail, and every node of the SU
    plugs its rail-*i* port into leaf *i*: a leaf needs one down port per node of the SU. At
    oversubscription d:u a leaf of radix k has k·d/(d+u) down ports (k/2 at 1:1). A DGX SuperPOD SU is
    32 nodes because a QM9700 leaf has 64 ports: 32 down, 32 up.
    """

    id = "TOP003"
    severity = Severity.ERROR
    title = "scalable unit larger than a leaf's down ports"
    rationale = "Each node of a scalable unit takes one down port on every rail leaf of that unit."
    fix = "make scalable_unit at most the leaf's down ports, or use a larger-radix leaf"
    tags = ("fat-tree", "rail", "ports")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for fab in ctx.cluster.fabrics.values():
            topo = fab.spec.topology
            k = radix(fab)
            if k == 0 or not isinstance(topo, FatTree) or not topo.rail_optimized or not topo.scalable_unit:
                continue
            down, up = leaf_split(k, topo.oversubscription)
            if topo.scalable_unit > down:
                yield self.finding(
                    f"{fab.name} fabric: a scalable unit of {topo.scalable_unit} nodes needs "
                    f"{topo.scalable_unit} down "
                    f"ports per rail leaf; `{fab.switch_id}` has {k} ports at {fab.speed_gbps:g} Gb/s, "
                    f"{down} down and {up} up at {topo.oversubscription}",
                    (*fab.source_path, "topology", "scalable_unit"),
                    f"set scalable_unit: {down}",
                )
