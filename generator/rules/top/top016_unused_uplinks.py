from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator

from blueprints.models.topology import FatTree, LeafSpine, parse_ratio
from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class UnusedUplinks(Rule):
    """Leaf uplinks (ports, cables and optics) bought for capacity nothing can use.

    A leaf needs uplink bandwidth for the node ports cabled to it, at the oversubscription asked for:
    ``ceil(node bandwidth × u / d / uplink speed)`` links, and at least one link to each spine it meets.
    Everything above that is capacity no node can reach. The builder sizes uplinks for the nodes present
    (and the declared growth), but a fat-tree's leaves share one shape, so a partly filled scalable unit
    (40 nodes in SUs of 32: the second SU's leaves carry 8 nodes and 32 uplinks each) still buys ports,
    cables and transceivers for nodes that do not exist. Fabrics with declared growth are skipped: that
    capacity is bought on purpose.

    NVIDIA's SuperPOD reference architectures do build a partial SU's leaf-spine cables in full, so that
    routing stays even across the fabric ("the fabric should be designed to support the full SU, including
    leaf switches and leaf-spine cables", DGX SuperPOD B300 RA, Network Fabrics,
    https://docs.nvidia.com/dgx-superpod/reference-architecture/scalable-infrastructure-b300/latest/network-fabrics.html).
    If that is the intent, say so with ``growth_nodes`` (the SU will be filled) or suppress this rule with
    that reason.
    """

    id = "TOP016"
    severity = Severity.WARNING
    title = "uplinks bought for capacity nothing uses"
    rationale = (
        "Every unused uplink is two switch ports, a cable and usually two transceivers paid for nothing."
    )
    fix = (
        "declare growth_nodes if the units will fill (NVIDIA's RA cables partial SUs in full for even "
        "routing), "
        "or choose a scalable_unit that divides the node count"
    )
    tags = ("fat-tree", "cost")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        plan = ctx.plan
        if plan is None:
            return
        compute = ctx.cluster.fabrics.get("compute")
        compute_topo = compute.spec.topology if compute else None
        growth = isinstance(compute_topo, FatTree) and compute_topo.growth_nodes is not None
        for fab in ctx.cluster.fabrics.values():
            topo = fab.spec.topology
            if growth or not isinstance(topo, FatTree | LeafSpine):
                continue
            d, u = parse_ratio(topo.oversubscription)
            down: defaultdict[str, float] = defaultdict(float)
            up: Counter[str] = Counter()
            spines: dict[str, set[str]] = {}
            speed = 0.0
            for link in plan.links_of(fab.name):
                if link.layer == "node_leaf":
                    down[link.b.device] += link.speed_gbps
                elif link.layer == "leaf_spine":
                    up[link.a.device] += 1
                    spines.setdefault(link.a.device, set()).add(link.b.device)
                    speed = link.speed_gbps
            if not up:
                continue
            need = {
                leaf: max(-(-int(down[leaf] * u * 1000) // int(d * speed * 1000)), len(spines[leaf]))
                for leaf in up
            }
            spare = {leaf: up[leaf] - need[leaf] for leaf in up if up[leaf] > need[leaf]}
            total = sum(up.values())
            extra = sum(spare.values())
            if extra * 10 <= total:  # rounding to whole links per spine costs a little; flag real waste
                continue
            worst = max(spare, key=lambda leaf: (spare[leaf], leaf))
            yield self.finding(
                f"{fab.name} fabric: {extra:,} of {total:,} leaf uplinks ({extra / total:.0%}) carry no node "
                f"traffic at {topo.oversubscription}: e.g. `{worst}` has {down[worst] / speed:g} node ports' "
                f"bandwidth but {up[worst]} uplinks ({need[worst]} needed); that is {2 * extra:,} switch "
                "ports "
                f"and {extra:,} cables",
                (*fab.source_path, "topology"),
            )
