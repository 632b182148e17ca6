from __future__ import annotations

from collections.abc import Iterator

from blueprints.models.topology import Hypercube, Torus
from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.sizing import server_path
from generator.topology.cube import cube_degree


class DirectAttachPorts(Rule):
    """A directly attached torus or hypercube whose nodes have too few NIC ports.

    With ``attach: direct`` each node is a vertex and cables go node to node: a torus vertex needs two
    links per dimension of size above 2 (one to each neighbour around the ring) and one per dimension of
    size 2; a hypercube of dimension d needs d links. Each link takes one NIC port on the fabric.
    """

    id = "TOP011"
    severity = Severity.ERROR
    title = "too few NIC ports for a direct-attach torus/hypercube"
    rationale = "Each neighbour link of a directly attached vertex takes one NIC port."
    fix = "give the nodes enough fabric ports, lower the dimensions, or use attach: switch"
    tags = ("torus", "hypercube", "ports")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        for fab in cluster.fabrics.values():
            t = fab.spec.topology
            if isinstance(t, Torus) and t.attach == "direct":
                need = cube_degree(t.vertex_dims)
                shape = "torus " + " × ".join(str(k) for k in t.dimensions)
            elif isinstance(t, Hypercube) and t.attach == "direct":
                need, shape = t.dimension, f"hypercube of dimension {t.dimension}"
            else:
                continue
            for pool in cluster.pools_on(fab.name):
                have = len(pool.ports_for(fab.name))
                if have < need:
                    yield self.finding(
                        f"pool `{pool.name}`: a directly attached {shape} needs {need} {fab.name} "
                        "ports per node; "
                        f"the server has {have}",
                        server_path(cluster, pool, "nics"),
                    )
