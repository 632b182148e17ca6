from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.sizing import fabric_nodes

TRAINING = ("pretrain", "full-finetune")


class EthernetLargeTraining(Rule):
    """Plain Ethernet as the compute fabric of a large training cluster.

    The article's fabric table: InfiniBand NDR (400 Gb/s, ~0.5 µs) fits large-scale training, HDR
    mid-to-large, RoCE v2 cost-sensitive designs, and Ethernet 100G (~5 µs) small clusters. Plain
    Ethernet without RDMA puts every collective through the kernel TCP stack. The rule warns when an
    Ethernet compute fabric serves at least the article's small-cluster bound (100 nodes) or a
    pre-training/full fine-tune of a model above 70B parameters (the article's several-nodes class).
    """

    id = "NET011"
    severity = Severity.WARNING
    title = "Ethernet compute fabric for large-scale training"
    rationale = "The article places Ethernet 100G at small clusters; large training needs InfiniBand or RoCE."
    fix = "use infiniband-ndr (or infiniband-hdr / roce-v2-*) for the compute fabric"
    tags = ("fabric", "article")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        from blueprints.catalog.advice import advice

        cluster, adv = ctx.cluster, advice()
        fab = cluster.fabrics.get("compute")
        if fab is None or fab.kind != "ethernet":
            return
        nodes = fabric_nodes(cluster, "compute")
        wl = cluster.blueprint.workload
        reasons = []
        if nodes >= adv.small_cluster_nodes:
            reasons.append(
                f"{nodes:,} nodes (the article's Ethernet row is for clusters below "
                f"{adv.small_cluster_nodes})"
            )
        if wl is not None and wl.mode in TRAINING and wl.params > adv.large_model_params:
            reasons.append(
                f"{wl.mode} of {wl.params / 1e9:g}B parameters (above {adv.large_model_params / 1e9:g}B: "
                "large-scale training)"
            )
        if reasons:
            yield self.finding(
                f"compute fabric is {fab.technology} ({fab.speed_gbps:g} Gb/s, "
                f"~{fab.tech.latency_us:g} µs) for " + " and ".join(reasons),
                (*fab.source_path, "technology"),
            )
