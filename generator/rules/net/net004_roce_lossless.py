from __future__ import annotations

from collections.abc import Iterator

from blueprints.models.fabric import Lossless
from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class RoceLossless(Rule):
    """A RoCE fabric without lossless settings (PFC and ECN, DSCP/traffic class).

    RoCE v2 carries RDMA over UDP/IP; its transport recovers from loss with go-back-N, so a dropped
    packet costs a whole window and collective throughput collapses under incast. Production RoCE
    training fabrics (e.g. Meta's, SIGCOMM 2024) run Priority Flow Control on the RDMA traffic class and
    ECN marking for congestion control (DCQCN), with traffic classified by DSCP. The blueprint's
    ``lossless`` section configures NICs and switches; without it generate writes the model's default
    class, which the blueprint then does not state; with PFC and ECN both off nothing protects the RDMA
    traffic. The switches of the fabric and the hosts' ports on it (the roce_qos role, one class per RoCE
    fabric: compute and storage) get the same class.
    """

    id = "NET004"
    severity = Severity.WARNING
    title = "RoCE fabric without lossless settings"
    rationale = "RDMA over Ethernet degrades badly on packet loss; PFC and ECN keep the RDMA class lossless."
    fix = (
        "add `lossless: {pfc: true, ecn: true, dscp: 26, pfc_priority: 3}` to the fabric; `blueprint "
        "generate` "
        "then writes it into every switch (build/switches/<fabric>/<switch>/startup.yaml, `qos`) and "
        "every site host's ports on the fabric (the roce_qos role's group_vars, roce_qos_classes)"
    )
    tags = ("roce", "ethernet", "lossless")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        if ctx.cluster.is_cloud:  # the provider configures its RoCE fabric (DEP004)
            return
        for fab in ctx.cluster.fabrics.values():
            if fab.kind != "roce":
                continue
            ll = fab.spec.lossless
            hosts = f"the switches and the hosts' {fab.name} ports"
            if ll is None:
                d = Lossless()
                yield self.finding(
                    f"{fab.name} fabric is {fab.technology} ({fab.speed_gbps:g} Gb/s RoCE v2) "
                    f"with no `lossless` section: generate gives {hosts} the default class (PFC "
                    f"{'on' if d.pfc else 'off'} for priority {d.pfc_priority}, "
                    f"ECN {'on' if d.ecn else 'off'}, DSCP {d.dscp}), which the blueprint does not state",
                    (*fab.source_path, "technology"),
                )
            elif not ll.pfc and not ll.ecn:
                yield self.finding(
                    f"{fab.name} fabric is {fab.technology} with PFC and ECN both off",
                    (*fab.source_path, "lossless"),
                )
