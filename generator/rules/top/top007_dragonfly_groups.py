from __future__ import annotations

from collections.abc import Iterator

from blueprints.models.topology import Dragonfly
from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class DragonflyGroups(Rule):
    """More dragonfly groups than the global links can connect (g ≤ a·h + 1).

    Each group has a·h global channels; to reach every other group with at least one direct global link
    a dragonfly can have at most a·h + 1 groups (Kim et al., ISCA 2008). Beyond that some group pairs
    have no direct link, minimal routes grow past one global hop, and the diameter guarantee is lost.
    """

    id = "TOP007"
    severity = Severity.ERROR
    title = "too many dragonfly groups (g > a·h + 1)"
    rationale = "Every pair of groups needs a direct global link; a group has only a·h of them."
    fix = "reduce groups to a·h + 1 or raise a or h"
    tags = ("dragonfly",)

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for fab in ctx.cluster.fabrics.values():
            t = fab.spec.topology
            if not isinstance(t, Dragonfly):
                continue
            limit = t.a * t.h + 1
            if t.groups > limit:
                yield self.finding(
                    f"{fab.name} dragonfly has {t.groups} groups but a·h + 1 = {t.a}·{t.h} + 1 = {limit}: "
                    f"each group's {t.a * t.h} global links cannot reach {t.groups - 1} other groups",
                    (*fab.source_path, "topology", "groups"),
                    f"at most {limit} groups, or raise a or h",
                )
