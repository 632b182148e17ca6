"""DEP002: no switch topology on a cloud target — the provider cables the fabric."""

from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.resolve import FABRIC_NAMES
from generator.rules.base import Rule, RuleContext


class CloudCabling(Rule):
    """A `topology` under a fabric asks cluster-blueprint to build switches and cables (a fat-tree, a
    dragonfly...). On a cloud target nobody can cable anything: the provider's GPU fabric (EFA, the
    ND-series InfiniBand, GCP's GPU NIC networks, OCI's cluster network) is already built, and the
    program only places instances close together (placement group, scale set, compact placement,
    cluster network). An appliance (`appliances:`, cabled to the plan's switches) has no switch to go on
    either."""

    id = "DEP002"
    severity = Severity.ERROR
    title = "fabric topology (switch cabling) requested on a cloud target"
    rationale = "the cloud provider owns the switches; a cabling plan for them cannot be built or verified"
    fix = "remove `topology` from the fabric (keep `technology` if it matches the instance type)"
    tags = ("deployment", "cloud", "topology")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        if not cluster.is_cloud:
            return
        for name in FABRIC_NAMES:
            fabric = getattr(cluster.blueprint.fabrics, name)
            if fabric is None or fabric.topology is None:
                continue
            kind = fabric.topology.kind
            yield self.finding(
                f"fabrics.{name}.topology asks for {kind} cabling, but on {cluster.target} the "
                "provider cables "
                f"the {name} fabric; a cloud cluster gets a placement group, not switches",
                ("fabrics", name, "topology"),
            )
        for i, a in enumerate(cluster.blueprint.appliances):
            yield self.finding(
                f"appliance `{a.name}` is cabled to the {a.fabric} fabric's switches, but on "
                f"{cluster.target} the provider owns the {a.fabric} fabric: there are no switch ports to "
                f"give it (appliance {i + 1} of {len(cluster.blueprint.appliances)})",
                ("appliances", i),
                "remove the appliance (a cloud service stands in for it: managed storage, the provider's "
                "fabric management)",
            )
