from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class LongRuns(Rule):
    """Node-to-leaf cables that cross rows: the site layout forces long runs.

    A unit (a scalable unit, a pool) keeps its nodes and leaves in neighbouring racks so that its node
    cables stay short, often copper or short AOCs. When a unit needs more racks than a row holds (or a
    pool is pinned to other rows), its node cables cross an aisle: longer, optical, dearer, and harder to
    trace. The message gives the count and the longest run.
    """

    id = "PWR005"
    severity = Severity.WARNING
    title = "node cables cross rows"
    rationale = "node-leaf runs across aisles need optics and tray space a row-local layout avoids"
    fix = "use longer rows (racks_per_row), fewer nodes per unit, or top-of-rack / middle-of-row switches"
    tags = ("site", "cabling")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        plan = ctx.plan
        if plan is None or not plan.racks:
            return
        row_of = {r.id: r.row for r in plan.racks}
        rack_of = {d.name: d.rack for d in plan.devices}
        for fabric in sorted(plan.metrics):
            crossing = [
                link
                for link in plan.links_of(fabric)
                if link.layer == "node_leaf"
                and rack_of.get(link.a.device)
                and rack_of.get(link.b.device)
                and row_of[rack_of[link.a.device] or ""] != row_of[rack_of[link.b.device] or ""]
            ]
            if crossing:
                longest = max(crossing, key=lambda ln: (ln.run_m, ln.id))
                yield self.finding(
                    f"{fabric} fabric: {len(crossing):,} node-leaf cables cross rows (longest "
                    f"{longest.run_m:g} m, "
                    f"{longest.id} from `{longest.a.device}` to `{longest.b.device}`)",
                    ("site", "racks_per_row"),
                )
