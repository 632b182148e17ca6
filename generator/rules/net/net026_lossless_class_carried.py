from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class LosslessClassCarried(Rule):
    """A ``lossless`` setting the generated switch and host ports cannot carry.

    - ``trust: pcp``: the priority code point is a field of the IEEE 802.1Q VLAN tag. The generated fabric
      ports are routed, untagged /31s on both ends (docs/switches.md), so no RoCE frame carries a PCP: the
      switch classes every one at the port's default priority 0 and the lossless priority is never used.
      Classify by DSCP, which every routed RoCE v2 packet carries in its IP header.
    - ``ecn: false`` on Cumulus switches: the RoCE default configuration of Cumulus Linux marks ECN on the
      RoCE traffic class in lossless and lossy mode alike ("Default RoCE Configuration", Cumulus Linux 5.14
      and 5.15 User Guides), and the NVUE value that turns it off is not one the catalogue records
      (data/switch_os.yaml lists `ecn enable` only). The hosts stop reacting to marks (roce_np/roce_rp off)
      while the switches keep marking: turn ECN off on the switches by hand, or keep it on.
    """

    id = "NET026"
    severity = Severity.ERROR
    title = "lossless setting the generated ports cannot carry"
    rationale = "A class the routed, untagged fabric ports cannot carry leaves the RDMA traffic lossy."
    fix = "use `trust: dscp`; keep `ecn: true` on Cumulus switches, or turn ECN off on them by hand"
    tags = ("roce", "lossless", "switches")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for name in ctx.cluster.routed_fabrics:
            fab = ctx.cluster.fabrics[name]
            ll = fab.spec.lossless
            if fab.kind != "roce" or ll is None:
                continue
            if ll.trust == "pcp":
                yield self.finding(
                    f"{name} fabric: `trust: pcp` classes RoCE by the 802.1Q priority code point, but the "
                    "generated host and switch ports are routed and untagged: no frame carries one, every "
                    "packet lands on priority 0 and the lossless priority "
                    f"{ll.pfc_priority} is never used",
                    (*fab.source_path, "lossless", "trust"),
                    "use `trust: dscp` (every RoCE v2 packet carries its DSCP in the IP header)",
                )
            if not ll.ecn and fab.spec.switch_os != "frr":
                yield self.finding(
                    f"{name} fabric: `ecn: false` turns ECN off on the hosts' priority {ll.pfc_priority} "
                    "only; the Cumulus switches keep the RoCE default's ECN marking on the RoCE traffic "
                    "class (the generated startup.yaml cannot turn it off: the catalogue records no NVUE "
                    "value for that)",
                    (*fab.source_path, "lossless", "ecn"),
                    "keep `ecn: true`, or turn ECN off on the switches by hand",
                    Severity.WARNING,
                )
