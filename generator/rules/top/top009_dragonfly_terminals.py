from __future__ import annotations

from collections.abc import Iterator

from blueprints.models.topology import Dragonfly
from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.sizing import endpoints


class DragonflyTerminals(Rule):
    """More node ports on a dragonfly than its routers have terminal ports (p · a · groups).

    Every node NIC port on the fabric is a dragonfly terminal; each router offers p terminal ports, so
    the fabric holds p · a · groups of them. A balanced dragonfly at its maximum size (g = a·h + 1)
    holds N = a·p·(a·h + 1) terminals (h = 4: 1,056; h = 8: 16,512).
    """

    id = "TOP009"
    severity = Severity.ERROR
    title = "dragonfly has too few terminal ports"
    rationale = "Each node port needs a terminal port on a router: p per router, a routers per group."
    fix = "add groups (up to a·h + 1) or raise p"
    tags = ("dragonfly", "ports")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        for fab in cluster.fabrics.values():
            t = fab.spec.topology
            if not isinstance(t, Dragonfly):
                continue
            have = t.p * t.a * t.groups
            need = endpoints(cluster, fab.name)
            if need > have:
                per_group = t.p * t.a
                yield self.finding(
                    f"{fab.name} dragonfly: {need:,} node ports but p·a·groups = "
                    f"{t.p}·{t.a}·{t.groups} = {have:,} "
                    f"terminal ports; {-(-need // per_group)} groups of {per_group} are needed",
                    (*fab.source_path, "topology", "groups"),
                )
