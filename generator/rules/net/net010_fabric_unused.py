from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class FabricUnused(Rule):
    """A fabric that no node has a NIC for.

    A fabric's endpoints are the node NIC ports of the same purpose (compute NICs join the compute
    fabric, storage NICs the storage fabric, management NICs the management fabric). A fabric with
    none has nothing to connect: switches would be planned and bought for no ports.
    """

    id = "NET010"
    severity = Severity.WARNING
    title = "fabric without endpoints"
    rationale = "Switches and cables for a fabric no node attaches to are wasted."
    fix = "give the servers NICs of this purpose (spec.nics[].purpose) or remove the fabric"
    tags = ("fabric",)

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        for fab in cluster.fabrics.values():
            if cluster.pools_on(fab.name):
                continue
            yield self.finding(
                f"{fab.name} fabric ({fab.technology}) has 0 endpoints: no pool has a {fab.name} NIC "
                f"({len(cluster.pools)} pools checked)",
                fab.source_path,
            )
