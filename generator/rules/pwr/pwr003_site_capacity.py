from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.pwr._racks import nodes_per_rack


class SiteCapacity(Rule):
    """The node racks alone need more racks than the site (or the pool's rows) has.

    Each pool fills racks with nodes_per_rack nodes (given, or as many as power and space allow); its
    racks are ceil(count / nodes_per_rack). The site has rows × racks_per_row positions, and a pool
    limited to some rows (``placement.rows``) only those rows' positions. Network switches need racks
    too, so the count here is a lower bound: the planner reports the full layout. A small site whose nodes
    all fit one rack (by units, power and each pool's nodes_per_rack) counts one rack, as the planner puts
    them there with their switches (``shares_one_rack``; when the switches do not fit too, PLN001 reports
    the layout).
    """

    id = "PWR003"
    severity = Severity.ERROR
    title = "pools do not fit the site's racks"
    rationale = "Nodes need rack positions; a site with too few cannot hold the cluster."
    fix = "add rows or racks_per_row, raise the per-rack power budget, or allow the pool more rows"
    tags = ("rack", "site")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        from generator.plan.placement import pool_demand, racks_for, shares_one_rack

        cluster = ctx.cluster
        if cluster.is_cloud:
            return
        site = cluster.blueprint.site
        capacity = site.rows * site.racks_per_row
        one_rack = shares_one_rack(site, map(pool_demand, cluster.pools))
        total = 1 if one_rack else 0
        parts = []
        for pool in cluster.pools:
            per = nodes_per_rack(pool, site)
            if per == 0:
                continue  # PWR001/PWR002 report the node that fits no rack
            racks = 1 if one_rack else racks_for(site, pool_demand(pool))
            total += 0 if one_rack else racks
            parts.append(f"{pool.name} {pool.count}/{per} = {racks}")
            if pool.rows is not None:
                rows = {r for r in pool.rows if 0 <= r < site.rows}
                room = len(rows) * site.racks_per_row
                if racks > room:
                    yield self.finding(
                        f"pool `{pool.name}` needs {racks} racks ({pool.count} nodes, {per} per rack) "
                        "but its "
                        f"{len(rows)} row(s) hold {room} ({site.racks_per_row} per row)",
                        (*pool.source_path, "placement", "rows"),
                    )
        if total > capacity:
            # a blueprint without `site:` gets the default site: point at the pools that overflow it instead
            where = (
                ("site", "racks_per_row")
                if "site" in cluster.blueprint.model_fields_set
                else ("pools", 0, "count")
            )
            yield self.finding(
                f"the nodes need at least {total} racks ({'; '.join(parts)}) but the site has "
                f"{site.rows} rows × "
                f"{site.racks_per_row} racks = {capacity}",
                where,
            )
