"""DEP005: the cloud location names a zone where the GPU placement needs one."""

from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class CloudLocation(Rule):
    """GPU placement is zonal: an AWS cluster placement group and its subnet live in one availability
        zone, a GCP compact placement policy and the A3 Ultra RoCE network in one zone, an OCI cluster
        network in one availability domain. The program needs that zone, and it must belong to the region:
        AWS `us-east-1a` in `us-east-1`, GCP `us-central1-b` in `us-central1`, OCI `AD-1`..`AD-3` (the
        tenancy-specific AD name is looked up), Azure availability zone `1`..`3` (optional). Each target's
    rule is in its record (generator/deploy/targets/<name>.py: zone_required, zone_check)."""

    id = "DEP005"
    severity = Severity.ERROR
    title = "cloud zone missing or not in the region"
    rationale = "placement groups, compact placement policies and cluster networks are zonal"
    fix = "set deployment.cloud.zone (e.g. us-east-1a, us-central1-b, AD-1, or 1 on Azure)"
    tags = ("deployment", "cloud")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        cloud = cluster.blueprint.deployment.cloud
        if cloud is None:  # before the records: on-prem blueprints do not import the target modules
            return
        from generator.deploy.targets import cloud_target

        target = cloud_target(cluster.target)
        if target is None or not target.provider:
            return
        if cloud.zone is None:
            if target.zone_required:
                yield self.finding(
                    f"target {target.name} needs deployment.cloud.zone: GPU placement is zonal",
                    ("deployment", "cloud"),
                )
            return
        problem = target.zone_check(cloud.region, cloud.zone) if target.zone_check else None
        if problem is not None:
            yield self.finding(problem, ("deployment", "cloud", "zone"))
