from __future__ import annotations

import math
from collections.abc import Iterator

from blueprints.models.topology import Torus
from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.sizing import fabric_nodes


class TorusSize(Rule):
    """Torus dimensions that do not multiply to the node count.

    A torus of dimensions k₁ × k₂ × … has k₁·k₂·… vertices. With ``attach: direct`` the nodes are the
    vertices, so the product must equal the nodes on the fabric; with ``attach: switch`` the switches are
    the vertices and each carries ``nodes_per_switch`` nodes, so nodes = product × nodes_per_switch. A
    partly filled torus has holes that break its wrap-around rings.
    """

    id = "TOP010"
    severity = Severity.ERROR
    title = "torus dimensions do not match the node count"
    rationale = "Every vertex of a torus must exist for its rings to close."
    fix = "choose dimensions whose product is the node count (or node count / nodes_per_switch)"
    tags = ("torus",)

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        for fab in cluster.fabrics.values():
            t = fab.spec.topology
            if not isinstance(t, Torus):
                continue
            nodes = fabric_nodes(cluster, fab.name)
            vertices = math.prod(t.dimensions)
            dims = " × ".join(str(k) for k in t.dimensions)
            if t.attach == "direct" and vertices != nodes:
                yield self.finding(
                    f"{fab.name} torus {dims} = {vertices:,} vertices but {nodes:,} nodes attach directly",
                    (*fab.source_path, "topology", "dimensions"),
                )
            elif t.attach == "switch" and vertices * t.nodes_per_switch != nodes:
                yield self.finding(
                    f"{fab.name} torus {dims} = {vertices:,} switches × {t.nodes_per_switch} nodes per "
                    "switch = "
                    f"{vertices * t.nodes_per_switch:,} node slots but {nodes:,} nodes",
                    (*fab.source_path, "topology", "dimensions"),
                )
