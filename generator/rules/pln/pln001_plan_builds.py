"""PLN001: the blueprint can be turned into a fabric and a physical plan."""

from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class PlanBuilds(Rule):
    """Builds the topology and the physical plan (racks, units, cables) exactly as `blueprint generate`
    would, and reports why it cannot: a fat-tree that needs more tiers than given, a leaf shape that
    does not fit the switch radix, more racks than the site has, a server too heavy for a rack's power
    budget, node ports that do not fit a torus, and so on. Every other output depends on this plan, so
    this is always an error."""

    id = "PLN001"
    severity = Severity.ERROR
    title = "the fabric and physical plan can be built"
    rationale = (
        "cabling, Ansible, Slurm and Pulumi outputs are all derived from the plan; without it "
        "nothing can be generated"
    )
    fix = "change the topology parameters, the switch model or the site size as the message says"
    tags = ("topology", "site")
    # `generate` builds the plan whatever validate says (generator/plan/build.py plan_or_raise): suppressed,
    # or skipped on a cloud target, validate passed what generate then refused
    suppressible = False

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        if ctx.plan is None and ctx.plan_error:
            yield self.finding(f"cannot build the plan: {ctx.plan_error}", ctx.plan_error_path or ("site",))
