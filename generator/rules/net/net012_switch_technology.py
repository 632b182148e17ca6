from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext

SWITCH_FOR = {"infiniband": "infiniband", "roce": "ethernet", "ethernet": "ethernet"}


class SwitchTechnology(Rule):
    """A switch of the wrong technology for its fabric.

    InfiniBand fabrics need InfiniBand switches (Quantum QM8700, QM9700, Q3400); RoCE and Ethernet
    fabrics need Ethernet switches (Spectrum SN5600, SN4600C, SN2201). The two do not interoperate at
    the link layer.
    """

    id = "NET012"
    severity = Severity.ERROR
    title = "switch technology does not match the fabric"
    rationale = "InfiniBand and Ethernet switches cannot carry each other's link layer."
    fix = "pick a switch of the fabric's technology (blueprint catalog switches)"
    tags = ("switch", "fabric")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for fab in ctx.cluster.fabrics.values():
            want = SWITCH_FOR[fab.kind]
            for key, sid, sw in (
                ("switch", fab.switch_id, fab.switch),
                ("spine_switch", fab.spine_switch_id, fab.spine_switch),
            ):
                if sw is None or sid is None or sw.technology == want:
                    continue
                if key == "spine_switch" and getattr(fab.spec.topology, "spine_switch", None) is None:
                    continue  # the spine defaults to the leaf switch: reported once, for `switch`
                yield self.finding(
                    f"{fab.name} fabric is {fab.technology} but {key} `{sid}` ({sw.name}) is an "
                    f"{sw.technology} switch",
                    (*fab.source_path, "topology", key),
                )
