"""DEP004: fabric settings the cloud provider manages are informational only."""

from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class CloudFabricInformational(Rule):
    """On a cloud the provider runs the fabric: the InfiniBand subnet manager of an ND-series scale set,
    the lossless (PFC/ECN) configuration of a RoCE cluster network and the fabric MTU are the provider's.
    Such settings in the blueprint are kept as documentation and do not change the generated program.
    Separate storage and management fabrics do not exist on a cloud either: storage traffic uses the
    VPC network (or EFA for FSx for Lustre)."""

    id = "DEP004"
    severity = Severity.INFO
    title = "fabric parameters on a cloud target are informational"
    rationale = "the provider configures its own fabric; these values are not applied"
    fix = "keep them as documentation or remove them"
    tags = ("deployment", "cloud", "fabric")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        if not cluster.is_cloud:
            return
        fabrics = cluster.blueprint.fabrics
        compute = fabrics.compute
        if compute is not None:
            for key, what in (
                ("subnet_manager", "the subnet manager"),
                ("lossless", "PFC/ECN"),
                ("mtu", "the MTU"),
            ):
                if getattr(compute, key) is not None:
                    yield self.finding(
                        f"fabrics.compute.{key}: on {cluster.target} the provider manages {what}; "
                        "the value is informational",
                        ("fabrics", "compute", key),
                    )
        for name in ("storage", "management"):
            if getattr(fabrics, name) is not None:
                yield self.finding(
                    f"fabrics.{name}: on {cluster.target} {name} traffic uses the provider's VPC "
                    "network; this fabric is informational",
                    ("fabrics", name),
                )
