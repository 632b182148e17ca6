"""NET027: the management leaves' DHCP relay target is reachable over the generated management fabric."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class DhcpRelayRoute(Rule):
    """The management leaves relay DHCP to a server the generated fabric has no route to.

    Each management leaf relays its VLANs' DHCP to ``fabrics.management.vlans.dhcp_server`` (by default on
    a MAAS target: the MAAS rack controller's planned management address) over its uplinks. The generated
    configuration announces into BGP the leaves' VLAN subnets and loopbacks only (docs/switches.md,
    "Management network"): a server outside them, such as an address of ``deployment.maas.management_cidr``
    on no management leaf's VLAN, has no route in the fabric, and every relayed request is dropped at the
    first spine. The generated test bench (tests/realtools/test_mgmt_dhcp_relay.py) has to add that route by
    hand. A site that routes the management network into the fabric at a border leaf (not generated here)
    may acknowledge this with ``suppress``.
    """

    id = "NET027"
    severity = Severity.WARNING
    title = "DHCP relay target not routed by the management fabric"
    rationale = "A relayed DHCP request needs a route to its server; the generated fabric routes its VLANs."
    fix = (
        "set fabrics.management.vlans.dhcp_server to the provisioning server's address on a management leaf "
        "VLAN, or route the management network into the fabric at a border leaf (and suppress this)"
    )
    tags = ("ethernet", "switches", "management", "dhcp")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        if "management" not in cluster.fabrics or ctx.plan is None:
            return
        from generator.deploy.mgmt_vlans import VlanProblem, management_fabrics, management_plan, settings
        from generator.plan.switch_numbers import PlanProblem

        if not management_fabrics(cluster):
            return
        try:
            mplan = management_plan(ctx.plan)
        except (VlanProblem, PlanProblem):
            return  # NET017/NET019 say why
        relaying = [sw for sw in mplan.switches if sw.vlans and sw.uplinks]
        if mplan.dhcp_server is None or not relaying:
            return
        server = ipaddress.IPv4Address(mplan.dhcp_server)
        routed = [v.subnet for sw in mplan.switches for v in sw.vlans]
        if any(server in ipaddress.IPv4Network(net, strict=False) for net in routed):
            return
        declared = settings(cluster).dhcp_server is not None
        source = cluster.fabrics["management"].source_path
        what = "fabrics.management.vlans.dhcp_server" if declared else "the MAAS rack controller's address"
        shown = ", ".join(sorted(set(routed), key=lambda n: ipaddress.IPv4Network(n))[:4])
        more = f" and {len(set(routed)) - 4} more" if len(set(routed)) > 4 else ""
        yield self.finding(
            f"{len(relaying)} management leaves relay DHCP to {server} ({what}), which is in none of the "
            f"networks the generated management fabric routes (its VLAN subnets {shown}{more}, and the "
            "switch loopbacks): the relayed requests have no route to it",
            (*source, "vlans", "dhcp_server") if declared else ("deployment", "maas", "management_cidr"),
        )
