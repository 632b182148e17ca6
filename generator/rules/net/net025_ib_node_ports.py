from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext

# One InfiniBand node numbers at most 254 ports: NodeInfo:NumPorts and every port number are 8-bit fields
# and 255 is not a port (OpenSM include/iba/ib_types.h: IB_NODE_NUM_PORTS_MAX 0xFE, "Maximum number of
# ports in a single node (14.2.5.7)"; IB_INVALID_PORT_NUM 0xFF).
IB_NODE_MAX_PORTS = 254


class IbNodePorts(Rule):
    """An InfiniBand switch planned as one subnet node with more ports than a node can number.

    The plan, the expected ``ibnetdiscover`` output, the ibsim net file, the OpenSM GUID files and
    ``verify-cabling`` all see a switch as one subnet node with ports 1..N. A node has at most 254 ports:
    NodeInfo:NumPorts and port numbers are 8 bits wide, and 255 is not a port (OpenSM ``ib_types.h``,
    ``IB_NODE_NUM_PORTS_MAX``). A switch model with more logical ports at the fabric's speed — a
    Quantum-X800 Q3400 split to 288 × 400G — must appear in the subnet as several nodes, and how its ports
    are spread over them and numbered is not published, so those outputs would describe a fabric no real
    subnet shows: an expected dump that ``ibnetdiscover`` can never print, cables ``verify-cabling`` could
    never find.
    """

    id = "NET025"
    severity = Severity.ERROR
    title = "InfiniBand switch with more ports than one subnet node can number"
    rationale = "A subnet node numbers at most 254 ports; the plan would describe a fabric no subnet shows."
    fix = (
        "run the switch at a speed where it has at most 254 ports (a Q3400 at XDR has 144), or pick a "
        "switch model that does (blueprint catalog switches)"
    )
    tags = ("switch", "infiniband")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for fab in ctx.cluster.fabrics.values():
            if fab.kind != "infiniband":
                continue
            leaf = fab.switch
            uplink = leaf.uplinks.speed_gbps if leaf is not None and leaf.uplinks else fab.speed_gbps
            tiers = [("switch", fab.switch_id, leaf, fab.speed_gbps)]
            if getattr(fab.spec.topology, "spine_switch", None) is not None:
                tiers.append(("spine_switch", fab.spine_switch_id, fab.spine_switch, uplink))
            for field, model, sw, speed in tiers:
                ports = sw.ports_at(speed) if sw is not None else 0
                if ports > IB_NODE_MAX_PORTS:
                    yield self.finding(
                        f"{fab.name} fabric: `{model}` has {ports} ports at {speed:g} Gb/s; one InfiniBand "
                        f"node numbers at most {IB_NODE_MAX_PORTS}, so the subnet cannot show it as the one "
                        "switch the plan (and its expected ibnetdiscover output) would describe",
                        (*fab.source_path, "topology", field),
                    )
