from __future__ import annotations

from collections.abc import Iterator

from blueprints.models.topology import Hypercube
from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.sizing import fabric_nodes


class HypercubeSize(Rule):
    """A hypercube whose node count is not 2^d (× nodes_per_switch).

    A hypercube of dimension d has 2^d vertices, each joined to the d vertices whose binary labels differ
    in one bit. With ``attach: direct`` the nodes are the vertices (nodes = 2^d); with ``attach: switch``
    each switch vertex carries ``nodes_per_switch`` nodes (nodes = 2^d × nodes_per_switch). A missing
    vertex removes links from d neighbours and breaks dimension-order routing.
    """

    id = "TOP012"
    severity = Severity.ERROR
    title = "hypercube size does not match the node count"
    rationale = "A hypercube is only a hypercube with all 2^d vertices present."
    fix = "choose the dimension so that 2^d (× nodes_per_switch) is the node count"
    tags = ("hypercube",)

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        for fab in cluster.fabrics.values():
            t = fab.spec.topology
            if not isinstance(t, Hypercube):
                continue
            nodes = fabric_nodes(cluster, fab.name)
            vertices = 2**t.dimension
            slots = vertices * (t.nodes_per_switch if t.attach == "switch" else 1)
            if slots == nodes:
                continue
            how = (
                f"2^{t.dimension} = {vertices:,} nodes"
                if t.attach == "direct"
                else f"2^{t.dimension} = {vertices:,} switches × {t.nodes_per_switch} = {slots:,} node slots"
            )
            yield self.finding(
                f"{fab.name} hypercube of dimension {t.dimension} has {how} but {nodes:,} nodes are on it",
                (*fab.source_path, "topology", "dimension"),
            )
