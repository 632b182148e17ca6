from __future__ import annotations

from collections.abc import Iterator

from blueprints.catalog.schema import Switch
from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


def _ports_text(sw: Switch) -> str:
    parts = [f"{sw.ports} × {sw.speed_gbps:g}G"] + [f"{n} × {s:g}G" for s, n in sorted(sw.splits.items())]
    return " or ".join(parts)


class SwitchSpeed(Rule):
    """A switch without ports at the fabric's speed.

    Every fabric link runs at the fabric technology's speed (NDR 400, HDR 200, NDR200 200 Gb/s, ...). A
    switch offers its native speed and the split (breakout) speeds the catalogue lists: a QM9700 has
    64 × 400G or 128 × 200G, an SN4600C only 64 × 100G. A spine behind leaves with dedicated uplinks
    (SN2201: 48 × 1G plus 4 × 100G uplinks) must offer the uplink speed instead.
    """

    id = "NET013"
    severity = Severity.ERROR
    title = "switch has no ports at the fabric speed"
    rationale = "Without ports at the fabric's speed the switch cannot terminate the fabric's links."
    fix = "pick a switch with native or split ports at the fabric speed (blueprint catalog switches)"
    tags = ("switch", "speed")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for fab in ctx.cluster.fabrics.values():
            leaf = fab.switch
            if leaf is not None and leaf.ports_at(fab.speed_gbps) == 0:
                yield self.finding(
                    f"{fab.name} fabric runs at {fab.speed_gbps:g} Gb/s ({fab.technology}) but "
                    f"`{fab.switch_id}` "
                    f"has {_ports_text(leaf)} ports",
                    (*fab.source_path, "topology", "switch"),
                )
            spine_given = getattr(fab.spec.topology, "spine_switch", None) is not None
            spine = fab.spine_switch
            if not spine_given or spine is None:
                continue
            speed = leaf.uplinks.speed_gbps if leaf is not None and leaf.uplinks else fab.speed_gbps
            if spine.ports_at(speed) == 0:
                why = (
                    f"`{fab.switch_id}` uplinks run at {speed:g} Gb/s"
                    if leaf and leaf.uplinks
                    else f"the fabric runs at {speed:g} Gb/s"
                )
                yield self.finding(
                    f"{fab.name} fabric: {why} but spine `{fab.spine_switch_id}` has "
                    f"{_ports_text(spine)} ports",
                    (*fab.source_path, "topology", "spine_switch"),
                )
