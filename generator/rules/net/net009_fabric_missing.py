from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class FabricMissing(Rule):
    """GPU nodes with compute NICs but no compute fabric to join.

    Several GPU nodes only work as one cluster over a compute fabric (InfiniBand or RoCE in the article's
    multi-node design); their compute NICs say they expect one, but ``fabrics.compute`` is absent, so
    nothing is planned, cabled or configured between them. A single node needs no compute fabric.
    Cloud blueprints describe the provider's fabric with a technology and no topology.
    """

    id = "NET009"
    severity = Severity.ERROR
    title = "compute NICs but no compute fabric"
    rationale = "Multi-node training needs the nodes' compute NICs joined by a fabric."
    fix = "add fabrics.compute (technology and topology), or reduce the GPU pool to one node"
    tags = ("fabric",)

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        if "compute" in cluster.fabrics or cluster.gpu_node_count <= 1:
            return
        with_nics = [p for p in cluster.gpu_pools if p.ports_for("compute")]
        if not with_nics:
            return
        # A cloud's own fabric that no blueprint technology names (AWS EFA, GCP GPUDirect-TCPX/O) comes with
        # the instance type; there is nothing to declare (DEP003 checks declared cloud fabrics).
        if cluster.is_cloud and all(
            p.cloud is not None and p.cloud.fabric not in cluster.catalog.fabrics for p in with_nics
        ):
            return
        pool = with_nics[0]
        ports = sum(p.count * len(p.ports_for("compute")) for p in with_nics)
        yield self.finding(
            f"{cluster.gpu_node_count} GPU nodes with {ports:,} compute NIC ports (pool `{pool.name}`: "
            f"{len(pool.ports_for('compute'))} per node) but fabrics.compute is absent",
            (*pool.source_path, "count"),
        )
