"""DEP001: every pool of a cloud target is an instance type of that cloud (and none on-prem)."""

from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class CloudPoolInstance(Rule):
    """On a cloud target (`deployment.target: aws|azure|gcp|oci`) the program can only create what the
    provider sells: every pool must name an instance type of that provider as `provider/type`
    (`aws/p5.48xlarge`, `azure/Standard_ND96isr_H100_v5`, `gcp/a3-ultragpu-8g`, `oci/BM.GPU.H100.8`).
    On an on-prem target (`maas`, `none`) cloud instance types make no sense."""

    id = "DEP001"
    severity = Severity.ERROR
    title = "pool server must be an instance type of the deployment target"
    rationale = (
        "the Pulumi program provisions instances of the target cloud; other servers cannot be created there"
    )
    fix = "use `server: <target>/<instance type>` from `blueprint catalog cloud`, or change deployment.target"
    tags = ("deployment", "cloud")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        target = cluster.target
        for i, pool in enumerate(cluster.blueprint.pools):
            provider = pool.server.partition("/")[0] if pool.server and "/" in pool.server else None
            where = ("pools", i, "server") if pool.server else ("pools", i, "spec")
            if cluster.is_cloud:
                if provider is None:
                    what = f"server `{pool.server}`" if pool.server else "an explicit `spec`"
                    yield self.finding(
                        f"pool `{pool.name}` uses {what}, but on target {target} every pool is a {target} "
                        f"instance type (`server: {target}/<type>`)",
                        where,
                    )
                elif provider != target:
                    yield self.finding(
                        f"pool `{pool.name}` is a {provider} instance (`{pool.server}`), but "
                        "deployment.target is "
                        f"{target}",
                        where,
                    )
            elif provider is not None:
                yield self.finding(
                    f"pool `{pool.name}` is a cloud instance (`{pool.server}`) on the on-prem target "
                    f"`{target}`",
                    where,
                    hint=f"set deployment.target: {provider} (with a `cloud:` section) or use a "
                    "catalogue server",
                )
