from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.sizing import fabric_nodes, switch_count


class SingleSwitch(Rule):
    """A compute or storage fabric of one switch: a single point of failure.

    When every node of a fabric hangs off one switch, that switch's failure (or firmware upgrade) stops
    all traffic between them: the article lists failure probability growing with scale among the
    multi-node challenges, and the remedy is redundancy. Two leaves (or two rails) let jobs continue
    at reduced bandwidth. Management networks are not checked.
    """

    id = "TOP015"
    severity = Severity.WARNING
    title = "single switch: single point of failure"
    rationale = "One switch carrying every node stops the whole cluster when it fails."
    fix = "use at least two switches (rails, or a leaf pair), or accept the risk with a suppression"
    tags = ("availability", "article")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        for name in ("compute", "storage"):
            fab = cluster.fabrics.get(name)
            if fab is None:
                continue
            nodes = fabric_nodes(cluster, name)
            if nodes > 1 and switch_count(ctx, fab) == 1:
                yield self.finding(
                    f"{name} fabric: all {nodes} nodes hang off one `{fab.switch_id}` switch",
                    (*fab.source_path, "topology"),
                )
