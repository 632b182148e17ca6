"""DEP003: the compute fabric the blueprint claims is the one the cloud instance type has."""

from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class CloudFabricTechnology(Rule):
    """On a cloud the GPU fabric comes with the instance type: an ND H100 v5 VM has NDR InfiniBand, a
    p5.48xlarge has EFA, an a3-ultragpu-8g has RoCE NICs. A `fabrics.compute.technology` that differs
    from the catalogue entry of the pool's instance type describes a cluster the program cannot build
    (and would make the performance rules reason about the wrong network)."""

    id = "DEP003"
    severity = Severity.ERROR
    title = "compute fabric technology differs from what the cloud instance type provides"
    rationale = "cloud instance types come with a fixed GPU fabric; the blueprint must describe that fabric"
    fix = "set fabrics.compute.technology to the instance type's fabric, or leave `fabrics.compute` out"
    tags = ("deployment", "cloud", "fabric")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        if not cluster.is_cloud:
            return
        compute = cluster.blueprint.fabrics.compute
        if compute is None:
            return
        for pool in cluster.pools:
            if pool.cloud is None:
                continue
            provides = pool.cloud.fabric
            if provides == compute.technology:
                continue
            itype = pool.server_id.partition("/")[2]
            known = provides in cluster.catalog.fabrics
            hint = (
                f"set fabrics.compute.technology: {provides}"
                if known
                else f"{provides} is the provider's own fabric: leave `fabrics.compute` out of the blueprint"
            )
            yield self.finding(
                f"fabrics.compute.technology is {compute.technology}, but {cluster.target} {itype} (pool "
                f"`{pool.name}`) provides {provides} ({pool.cloud.network_cards} x "
                f"{pool.cloud.nic_gbps:g} Gb/s)",
                ("fabrics", "compute", "technology"),
                hint=hint,
            )
