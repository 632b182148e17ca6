from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.pwr._racks import stated_rack_share
from generator.rules.sizing import server_path


class RackPower(Rule):
    """A rack's nodes draw more power than the rack's budget.

    Each rack has a usable power budget (``site.rack.power_kw``). A pool's nodes_per_rack × its server's
    power must fit it: NVIDIA's reference racks hold 4 DGX H100 at ~10.2 kW each, 40.8 kW, in racks of
    over 40 kW. Without nodes_per_rack the planner fills racks by power, but a single node above the
    budget cannot be placed at all. Server power is the catalogue's maximum (datasheet) figure.
    """

    id = "PWR001"
    severity = Severity.ERROR
    title = "rack power over budget"
    rationale = "Racks above their power budget trip breakers or cannot be cooled."
    fix = "lower placement.nodes_per_rack or raise site.rack.power_kw to what the facility delivers"
    tags = ("power", "rack")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        from generator.plan.placement import watts

        cluster = ctx.cluster
        if cluster.is_cloud:
            return
        budget = cluster.blueprint.site.rack.power_kw
        for pool in cluster.pools:
            kw = pool.server.power_kw
            npr = stated_rack_share(pool)
            # whole milliwatts, the rack allocator's arithmetic (placement.watts): no float edge between them
            if npr:
                total = npr * kw
                if npr * watts(kw) > watts(budget):
                    fit = watts(budget) // watts(kw)
                    # a rack-scale NVLink domain is racked whole (PWR007): fewer a rack is no way out
                    whole = npr == pool.server.nodes_per_nvlink_domain > 1
                    hint = (
                        f"its NVLink domain is racked whole: raise site.rack.power_kw to {total:g} kW or more"
                        if whole
                        else f"at most {fit} per rack at {budget:g} kW, or raise site.rack.power_kw"
                    )
                    yield self.finding(
                        f"pool `{pool.name}`: {npr} × {pool.server_id} at {kw:g} kW = {total:g} kW per "
                        "rack, over the "
                        f"{budget:g} kW budget (site.rack.power_kw)",
                        (*pool.source_path, "placement", "nodes_per_rack"),
                        hint,
                    )
            elif watts(kw) > watts(budget):
                yield self.finding(
                    f"pool `{pool.name}`: one {pool.server_id} draws {kw:g} kW, over the {budget:g} kW "
                    "rack budget",
                    server_path(cluster, pool, "power_kw"),
                    "raise site.rack.power_kw",
                )
