from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class PlacementRows(Rule):
    """A pool placed in rows the site does not have.

    ``placement.rows`` lists the rows (0-based) a pool may use; the site has ``site.rows`` rows,
    numbered 0 to rows − 1.
    """

    id = "PWR004"
    severity = Severity.ERROR
    title = "placement rows outside the site"
    rationale = "A pool cannot be placed in a row that does not exist."
    fix = "use row numbers from 0 to site.rows − 1, or add rows to the site"
    tags = ("rack", "site")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        if cluster.is_cloud:
            return
        rows = cluster.blueprint.site.rows
        for pool in cluster.pools:
            for i, r in enumerate(pool.rows or ()):
                if not 0 <= r < rows:
                    yield self.finding(
                        f"pool `{pool.name}` is placed in row {r} but the site has rows 0–{rows - 1}",
                        (*pool.source_path, "placement", "rows", i),
                    )
