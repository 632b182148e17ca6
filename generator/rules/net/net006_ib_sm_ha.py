from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.sizing import switch_count


class IbSmHa(Rule):
    """A multi-switch InfiniBand fabric whose subnet manager has no standby.

    With one subnet manager, losing its host leaves the fabric without anyone to reroute around the
    next link or switch failure, and new ports never come up. A fabric of more than one switch has
    links that can fail and reroutes to make; run a standby SM (OpenSM with priorities, UFM HA, or the
    embedded SM on two managed switches). Single-switch fabrics have nothing to reroute and are not
    flagged. The switch count is a lower bound computed from the topology.
    """

    id = "NET006"
    severity = Severity.WARNING
    title = "InfiniBand subnet manager without HA on a multi-switch fabric"
    rationale = "A lone subnet manager is a single point of failure for rerouting and port bring-up."
    fix = (
        "set `subnet_manager.ha: true` (a standby SM on a second host or switch): `blueprint generate` then "
        "writes a master and a standby opensm.conf (sm_priority 15 and 14) under "
        "build/subnet_manager/<fabric>/"
    )
    tags = ("infiniband", "subnet-manager", "availability")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        if cluster.is_cloud:
            return
        for fab in cluster.fabrics.values():
            sm = fab.spec.subnet_manager
            if fab.kind != "infiniband" or sm is None or sm.ha:
                continue
            n = switch_count(ctx, fab)
            if n > 1:
                yield self.finding(
                    f"{fab.name} fabric has {n:,} switches but one {sm.kind} subnet manager (ha: false)",
                    (*fab.source_path, "subnet_manager"),
                )
