from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class SingleSpine(Rule):
    """A multi-leaf fabric with one spine (or one core): its loss splits every leaf from every other.

    Leaves reach each other only through the spine layer; with a single spine, one switch failure or
    one firmware upgrade cuts all traffic between leaves (storage traffic to the file servers, management
    traffic to the head nodes). Two spines halve the bandwidth on a failure instead of stopping the fabric.
    """

    id = "TOP017"
    severity = Severity.WARNING
    title = "a single spine is a single point of failure"
    rationale = "one switch should not be able to stop a whole fabric"
    fix = "use a switch with more uplinks, or a leaf/spine oversubscription that leaves ports for 2 spines"
    tags = ("redundancy",)

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        plan = ctx.plan
        if plan is None:
            return
        for name, metrics in plan.metrics.items():
            tiers = Counter(d.role for d in plan.devices if d.kind == "switch" and d.fabric == name)
            for tier in ("spine", "core"):
                if tiers.get(tier) == 1 and tiers.get("leaf", 0) > 1:
                    spine = next(d.name for d in plan.devices if d.fabric == name and d.role == tier)
                    fab = ctx.cluster.fabrics[name]
                    yield self.finding(
                        f"{name} fabric: {tiers['leaf']} leaves meet in 1 {tier} (`{spine}`); its loss "
                        "leaves "
                        f"{metrics.bandwidth_after_spine_loss:.0%} of the bisection",
                        (*fab.source_path, "topology"),
                    )
