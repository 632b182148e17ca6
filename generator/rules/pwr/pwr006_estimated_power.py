from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.sizing import server_path


class EstimatedPower(Rule):
    """Power the plan adds up that no vendor text gives.

    Rack power (PWR001), placement and the bill of materials add up each device's catalogue power. NVIDIA
    publishes its DGX systems' maximum power in their user guides, and the catalogue holds those; it holds
    no vendor power figure for the switches (their manuals' power tables were not found) nor for the generic
    server classes (an 8-GPU PCIe box, a 1U CPU server), which are no one product. Those figures are
    estimates (catalogue ``power_estimated``). This finding names each one a plan rests on, with the total
    it adds, so the site can declare its own: an entry with the same id in the blueprint's ``catalog:``
    file replaces the shipped one.
    """

    id = "PWR006"
    severity = Severity.INFO
    title = "rack power rests on estimated figures"
    rationale = "A rack plan is only as right as the power figures it adds; an estimate can be far off."
    fix = (
        "give the model's entry with your datasheet's power (power_w / power_kw) in the blueprint's catalog "
        "file: an entry with the shipped id replaces it"
    )
    tags = ("power", "rack", "catalogue")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        if cluster.is_cloud:
            return
        for pool in cluster.pools:
            server = pool.server
            if server.power_estimated and pool.count:
                yield self.finding(
                    f"pool `{pool.name}`: {pool.count} × {pool.server_id} at {server.power_kw:g} kW = "
                    f"{pool.count * server.power_kw:g} kW, an estimate: no vendor figure for this model",
                    server_path(cluster, pool),
                )
        if ctx.plan is None:
            return
        used = Counter((d.fabric, d.model) for d in ctx.plan.devices if d.kind == "switch")
        switches = cluster.catalog.switches
        for (fabric, model), count in sorted(used.items(), key=lambda t: (t[0][0] or "", t[0][1])):
            sw = switches.get(model)
            fab = cluster.fabrics.get(fabric or "")
            if sw is None or not sw.power_estimated or fab is None:
                continue
            spine = model == fab.spine_switch_id and model != fab.switch_id
            total = count * sw.power_w
            total_text = f"{total:g} W" if total < 1000 else f"{round(total / 1000, 2):g} kW"
            yield self.finding(
                f"{fab.name} fabric: {count} × {model} at {sw.power_w:g} W = {total_text}, an estimate: no "
                "vendor power figure for this switch",
                (*fab.source_path, "topology", "spine_switch" if spine else "switch"),
            )
