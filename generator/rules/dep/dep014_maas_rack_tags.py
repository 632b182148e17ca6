"""DEP014: every rack holding the cluster's machines gets a MAAS tag of its own."""

from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class MaasRackTags(Rule):
    """The MAAS program tags each machine with its rack (`<name>-rack-<rack>`). MAAS takes only letters,
    digits, '_' and '-' in a tag name (`^[a-zA-Z0-9_-]+$`, Tag._tag_name_regex in canonical/maas
    src/maasserver/models/tag.py), so any other character of a rack name ('.' in `DH2.R01-P01`) becomes
    '-' in the tag. Two racks whose names differ only there (`A01.R01` and `A01-R01`) would share one tag:
    the machines of both racks would be tagged as one rack, and allocating by rack tag would take either."""

    id = "DEP014"
    severity = Severity.ERROR
    title = "two racks would share one MAAS rack tag"
    rationale = "MAAS tag names hold only letters, digits, '_' and '-': the racks' tag cannot tell them apart"
    fix = "rename one of the racks in `site.rack_names` so the names differ in a letter, digit, '_' or '-'"
    tags = ("deployment", "maas")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        site = ctx.cluster.blueprint.site
        if ctx.cluster.target != "maas" or site.rack_names is None:
            return  # the default rack ids (r01-05) hold no character MAAS refuses
        from blueprints.models.deployment import maas_rack_tags

        plan = ctx.plan
        if plan is None:  # no racks to tell apart (PLN001 says why)
            return
        devices = plan.device_by_name
        held = [d.rack for p in ctx.cluster.pools for h in p.hostnames if (d := devices.get(h)) and d.rack]
        for tag, racks in sorted(maas_rack_tags(ctx.cluster.name, held).items()):
            if len(racks) > 1:
                yield self.finding(
                    f"racks {', '.join(racks)} would share the MAAS tag `{tag}` ({len(racks)} racks, 1 tag)",
                    ("site", "rack_names"),
                )
