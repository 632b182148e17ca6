"""DEP005: the cloud location names a zone where the GPU placement needs one."""

from __future__ import annotations

import re
from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext

OCI_AD = re.compile(r"^(?:AD-)?([1-3])$", re.IGNORECASE)


class CloudLocation(Rule):
    """GPU placement is zonal: an AWS cluster placement group and its subnet live in one availability
    zone, a GCP compact placement policy and the A3 Ultra RoCE network in one zone, an OCI cluster
    network in one availability domain. The program needs that zone, and it must belong to the region:
    AWS `us-east-1a` in `us-east-1`, GCP `us-central1-b` in `us-central1`, OCI `AD-1`..`AD-3` (the
    tenancy-specific AD name is looked up), Azure availability zone `1`..`3` (optional)."""

    id = "DEP005"
    severity = Severity.ERROR
    title = "cloud zone missing or not in the region"
    rationale = "placement groups, compact placement policies and cluster networks are zonal"
    fix = "set deployment.cloud.zone (e.g. us-east-1a, us-central1-b, AD-1, or 1 on Azure)"
    tags = ("deployment", "cloud")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        cloud = cluster.blueprint.deployment.cloud
        target = cluster.target
        if cloud is None or not cluster.is_cloud:
            return
        path = ("deployment", "cloud", "zone")
        zone = cloud.zone
        if zone is None:
            if target != "azure":
                yield self.finding(
                    f"target {target} needs deployment.cloud.zone: GPU placement is zonal",
                    ("deployment", "cloud"),
                )
            return
        if target == "aws" and not re.fullmatch(re.escape(cloud.region) + r"[a-z]", zone):
            yield self.finding(
                f"`{zone}` is not an availability zone of {cloud.region} (expected e.g. {cloud.region}a)",
                path,
            )
        elif target == "gcp" and not re.fullmatch(re.escape(cloud.region) + r"-[a-z]", zone):
            yield self.finding(
                f"`{zone}` is not a zone of {cloud.region} (expected e.g. {cloud.region}-a)", path
            )
        elif target == "oci" and not OCI_AD.match(zone):
            yield self.finding(f"`{zone}` is not an OCI availability domain: use AD-1, AD-2 or AD-3", path)
        elif target == "azure" and zone not in ("1", "2", "3"):
            yield self.finding(f"`{zone}` is not an Azure availability zone: use 1, 2 or 3", path)
