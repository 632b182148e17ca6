"""NET017: every switch of every routed fabric gets its own loopback and ASN from its fabric's pools."""

from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class UnderlayNumbers(Rule):
    """A routed fabric's ``underlay.loopback_cidr`` or ``asn_base`` leaves too few loopbacks or ASNs.

    ``blueprint generate`` gives every switch of every Ethernet/RoCE compute or storage fabric a /32
    loopback (its BGP router id) from ``fabrics.<f>.underlay.loopback_cidr`` and an ASN from ``asn_base``
    (RFC 7938 section 5.2.1: one per leaf, one per spine tier), unique across all routed fabrics of the site:
    fabrics sharing a pool (the default one) number on where the previous fabric stopped. This rule runs
    that same allocation (generator/plan/switch_numbers.py) on the plan, so a pool that is too small
    is refused here, at its line, rather than when the switch files are written.
    """

    id = "NET017"
    severity = Severity.ERROR
    title = "switch loopback or ASN pool too small"
    rationale = (
        "Two switches with one router id or one ASN break BGP between them; a switch without a loopback "
        "cannot be configured."
    )
    fix = "give the fabric a larger `underlay.loopback_cidr` (or a lower `asn_base`), or a pool of its own"
    tags = ("ethernet", "switches", "bgp")
    # generate stops on what it says: suppressed, validate would pass what generate refuses
    suppressible = False

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        if not ctx.cluster.routed_fabrics or ctx.plan is None:  # no plan: PLN001 says why
            return
        from generator.plan.switch_numbers import PlanProblem, site_numbers

        try:
            site_numbers(ctx.plan)
        except PlanProblem as exc:
            yield self.finding(exc.message, exc.path)
