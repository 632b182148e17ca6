from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.pwr._racks import stated_rack_share, usable_units
from generator.rules.sizing import server_path


class RackUnits(Rule):
    """A pool's nodes do not fit a rack's units.

    A rack has ``site.rack.units`` (48 by default) less ``reserved_units`` kept for PDUs and patch
    panels. A pool's nodes_per_rack × its server's height must fit; a DGX H100 is 8U, so 4 per rack take
    32U.
    """

    id = "PWR002"
    severity = Severity.ERROR
    title = "nodes do not fit the rack's units"
    rationale = "Servers cannot be stacked above the rack's usable height."
    fix = "lower placement.nodes_per_rack or use taller racks (site.rack.units)"
    tags = ("rack", "space")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        if cluster.is_cloud:
            return
        site = cluster.blueprint.site
        usable = usable_units(site)
        for pool in cluster.pools:
            ru = pool.server.rack_units
            npr = stated_rack_share(pool)
            if npr and npr * ru > usable:
                yield self.finding(
                    f"pool `{pool.name}`: {npr} × {ru}U = {npr * ru}U per rack but a rack has "
                    f"{site.rack.units}U − "
                    f"{site.rack.reserved_units}U reserved = {usable}U",
                    (*pool.source_path, "placement", "nodes_per_rack"),
                    f"at most {usable // ru} per rack",
                )
            elif not npr and ru > usable:
                yield self.finding(
                    f"pool `{pool.name}`: one {pool.server_id} is {ru}U, taller than the {usable}U usable "
                    "in a rack",
                    server_path(cluster, pool, "rack_units"),
                )
