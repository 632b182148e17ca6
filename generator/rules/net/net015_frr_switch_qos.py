from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class FrrSwitchQos(Rule):
    """A lossless RoCE fabric whose switches run FRR (``switch_os: frr``): the switch QoS is not generated.

    On Cumulus Linux the generated ``startup.yaml`` carries the switch side of ``lossless`` (PFC on the
    RDMA priority, ECN, DSCP trust, port MTU) next to the routing. ``frr.conf`` is FRR's configuration:
    routing only; PFC, ECN, trust and MTU are settings of the switch's forwarding hardware, which each FRR
    NOS configures with its own tools. The hosts still get ``lossless`` (the roce_qos role), so the switches
    must be set to the same values by hand, or the RDMA class is lossless on the hosts only.
    """

    id = "NET015"
    severity = Severity.INFO
    title = "lossless RoCE on FRR switches: switch QoS left to the NOS"
    rationale = "PFC and ECN work only when hosts and switches agree on the priority and DSCP."
    fix = (
        "configure PFC, ECN, DSCP trust and port MTU on the switches with the NOS's tools, to the values "
        "the message names (docs/switches.md, 'Lossless RoCE QoS'), or run Cumulus Linux (`switch_os: "
        "cumulus`) to have them generated"
    )
    tags = ("roce", "lossless", "switches")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for name in ctx.cluster.routed_fabrics:
            fab = ctx.cluster.fabrics[name]
            ll = fab.spec.lossless
            if fab.kind != "roce" or fab.spec.switch_os != "frr" or ll is None or not (ll.pfc or ll.ecn):
                continue
            yield self.finding(
                f"{name} fabric: switches run FRR, whose frr.conf holds the routing only; set on them what "
                f"the hosts use: PFC {'on' if ll.pfc else 'off'} for priority {ll.pfc_priority}, ECN "
                f"{'on' if ll.ecn else 'off'}, trust {ll.trust} (DSCP {ll.dscp})"
                + (f", port MTU at least {fab.spec.mtu}" if fab.spec.mtu else ""),
                (*fab.source_path, "switch_os"),
            )
