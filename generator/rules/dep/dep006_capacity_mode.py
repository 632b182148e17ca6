"""DEP006: the capacity mode is one the target sells for these instance types."""

from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class CapacityMode(Rule):
    """`deployment.cloud.capacity` decides how instances are obtained. `capacity-block` is an AWS
    product (EC2 Capacity Blocks for ML) for the instance types that are sold that way; it targets a
    purchased block (`reservation_id`) or buys one of `capacity_hours`. `reservation` on AWS creates an
    On-Demand Capacity Reservation in the placement group unless `reservation_id` names one; on Azure
    (capacity reservation group), GCP (specific reservation) and OCI (compute capacity reservation) it
    must name the existing reservation. Bare-metal OCI shapes have no preemptible (spot) capacity."""

    id = "DEP006"
    severity = Severity.ERROR
    title = "capacity mode not available for this target or instance type"
    rationale = "the program cannot obtain instances in a way the provider does not sell"
    fix = "pick a capacity mode the provider offers, and give reservation_id / capacity_hours where needed"
    tags = ("deployment", "cloud", "capacity")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        cloud = cluster.blueprint.deployment.cloud
        target = cluster.target
        if cloud is None or not cluster.is_cloud:
            return
        path = ("deployment", "cloud", "capacity")
        cap = cloud.capacity
        pools = [p for p in cluster.pools if p.cloud is not None]
        if cap == "capacity-block":
            if target != "aws":
                yield self.finding(
                    "capacity-block is an AWS product (EC2 Capacity Blocks for ML), not available on "
                    f"{target}",
                    path,
                    hint="use reservation (with reservation_id), on-demand or spot",
                )
                return
            for p in pools:
                if p.cloud is not None and not p.cloud.capacity_blocks:
                    yield self.finding(
                        f"{p.server_id} (pool `{p.name}`) is not sold as a Capacity Block", path
                    )
            if cloud.reservation_id is None and cloud.capacity_hours is None:
                yield self.finding(
                    "capacity-block needs reservation_id (a purchased block, cr-...) or capacity_hours "
                    "(the program buys a block of that length)",
                    path,
                )
            if len(pools) > 1 and cloud.reservation_id is not None:
                yield self.finding("one capacity block (reservation_id) cannot serve several pools", path)
            elif len(pools) > 1:
                yield self.finding(
                    "capacity-block serves one GPU pool: the block's Availability Zone sets the cluster "
                    "subnet's, and blocks bought per pool may land in different zones",
                    path,
                )
        elif cap == "reservation":
            if target != "aws" and cloud.reservation_id is None:
                what = {
                    "azure": "capacity reservation group resource id",
                    "gcp": "reservation name",
                    "oci": "compute capacity reservation OCID",
                }[target]
                yield self.finding(
                    f"capacity reservation on {target} needs reservation_id (the {what})", path
                )
            if target == "aws" and len(pools) > 1 and cloud.reservation_id is not None:
                yield self.finding(
                    "one reservation_id cannot serve several pools of different instance types", path
                )
        elif cap == "spot":
            for p in pools:
                if p.cloud is not None and p.cloud.bare_metal:
                    yield self.finding(
                        f"{p.server_id} (pool `{p.name}`) is bare metal: {target} sells no "
                        "preemptible capacity for it",
                        path,
                    )
        if cap in ("on-demand", "spot") and cloud.reservation_id is not None:
            yield self.finding(
                f"reservation_id is ignored with capacity: {cap}",
                ("deployment", "cloud", "reservation_id"),
                severity=Severity.WARNING,
                hint="set capacity: reservation (or capacity-block on AWS)",
            )
