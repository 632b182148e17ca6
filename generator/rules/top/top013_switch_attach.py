from __future__ import annotations

import math
from collections.abc import Iterator

from blueprints.models.topology import Hypercube, Torus
from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.sizing import ports_per_node, radix


class SwitchAttach(Rule):
    """A switch-attached torus or hypercube without a switch, or with too few switch ports.

    With ``attach: switch`` each vertex is a switch carrying ``nodes_per_switch`` nodes. Its ports go to
    the nodes (nodes_per_switch × each node's ports on the fabric) and to the neighbour switches (two per
    torus dimension above 2, one per dimension of 2; d for a hypercube); the sum must fit the switch's
    logical ports at the fabric speed.
    """

    id = "TOP013"
    severity = Severity.ERROR
    title = "switch-attached torus/hypercube switch missing or too small"
    rationale = "Each vertex switch needs ports for its nodes and for every neighbour link."
    fix = "name a `switch` with enough ports at the fabric speed, or lower nodes_per_switch"
    tags = ("torus", "hypercube", "ports")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        from generator.topology.cube import cube_degree, switch_ports  # a builder module: imported on use

        cluster = ctx.cluster
        for fab in cluster.fabrics.values():
            t = fab.spec.topology
            if not isinstance(t, Torus | Hypercube) or t.attach != "switch":
                continue
            path = (*fab.source_path, "topology", "switch")
            if t.switch is None:
                vertices = math.prod(t.vertex_dims)
                yield self.finding(
                    f"{fab.name} {t.kind} uses attach: switch ({vertices:,} switch vertices) but names "
                    "no `switch`",
                    (*fab.source_path, "topology", "attach"),
                )
                continue
            k = radix(fab)
            if k == 0:
                continue  # NET013
            dims = t.vertex_dims  # the plan's dims
            per_node = ports_per_node(cluster, fab.name)
            need = switch_ports(t.nodes_per_switch, per_node, dims)
            if need > k:
                yield self.finding(
                    f"{fab.name} {t.kind}: each switch needs {t.nodes_per_switch} nodes × "
                    f"{per_node} ports + {cube_degree(dims)} neighbour links = {need} ports; "
                    f"`{t.switch}` has {k} at {fab.speed_gbps:g} Gb/s",
                    path,
                )
