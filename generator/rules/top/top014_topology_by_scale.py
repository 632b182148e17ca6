from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.sizing import fabric_nodes


class TopologyByScale(Rule):
    """The compute topology is outside the scale the article recommends it for.

    The article: below 100 nodes use a fat-tree; from 100 to 1,000 a fat-tree or a dragonfly (weigh
    cost against performance); above 1,000 a dragonfly. Its topology table places the torus at small
    scale (low cost) and the hypercube in research. The ranges live in the catalogue's ``advice.yaml``.
    This is advice, reported as information.
    """

    id = "TOP014"
    severity = Severity.INFO
    title = "topology outside the article's recommended scale"
    rationale = (
        "The article matches topologies to scale: fat-tree small/medium, dragonfly very large, torus small."
    )
    fix = "consider the topology the article recommends for this many nodes"
    tags = ("topology", "article")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        from blueprints.catalog.advice import advice

        cluster, adv = ctx.cluster, advice()
        fab = cluster.fabrics.get("compute")
        kind = fab.topology_kind if fab else None
        if fab is None or kind is None or kind not in adv.topology_scale:
            return
        nodes = fabric_nodes(cluster, "compute")
        rng = adv.topology_scale[kind]
        if rng.holds(nodes):
            return
        if nodes < adv.small_cluster_nodes:
            advised = f"below {adv.small_cluster_nodes} nodes it advises a fat-tree"
        elif nodes <= adv.dragonfly_above_nodes:
            advised = (
                f"from {adv.small_cluster_nodes} to {adv.dragonfly_above_nodes:,} nodes a "
                "fat-tree or a dragonfly"
            )
        else:
            advised = f"above {adv.dragonfly_above_nodes:,} nodes a dragonfly"
        yield self.finding(
            f"{kind} for {nodes:,} nodes: the article places {kind} at {rng.text()}; {advised}",
            (*fab.source_path, "topology", "kind"),
        )
