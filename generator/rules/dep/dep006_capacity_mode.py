"""DEP006: the capacity mode is one the target sells for these instance types."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext

if TYPE_CHECKING:
    from blueprints.models.deployment import CloudSettings
    from generator.resolve import ResolvedPool

PATH = ("deployment", "cloud", "capacity")


class CapacityMode(Rule):
    """`deployment.cloud.capacity` decides how instances are obtained. `capacity-block` is an AWS
    product (EC2 Capacity Blocks for ML) for the instance types that are sold that way; it targets a
    purchased block (`reservation_id`) or buys one of `capacity_hours`. `reservation` on AWS creates an
    On-Demand Capacity Reservation in the placement group unless `reservation_id` names one; on GCP
    (specific reservation) and OCI (compute capacity reservation) it must name the existing reservation. On
    Azure it is refused: a Uniform scale set takes a capacity reservation group only with
    singlePlacementGroup false, and the program's InfiniBand scale sets keep one placement group. Bare-metal
    OCI shapes have no preemptible (spot) capacity."""

    id = "DEP006"
    severity = Severity.ERROR
    title = "capacity mode not available for this target or instance type"
    rationale = "the program cannot obtain instances in a way the provider does not sell"
    fix = "pick a capacity mode the provider offers, and give reservation_id / capacity_hours where needed"
    tags = ("deployment", "cloud", "capacity")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        cloud = cluster.blueprint.deployment.cloud
        if cloud is None or not cluster.is_cloud:
            return
        pools = [p for p in cluster.pools if p.cloud is not None]
        modes = {"capacity-block": self._capacity_block, "reservation": self._reservation, "spot": self._spot}
        if cloud.capacity in modes:
            yield from modes[cloud.capacity](cluster.target, cloud, pools)
        if cloud.capacity in ("on-demand", "spot") and cloud.reservation_id is not None:
            yield self.finding(
                f"reservation_id is ignored with capacity: {cloud.capacity}",
                ("deployment", "cloud", "reservation_id"),
                severity=Severity.WARNING,
                hint="set capacity: reservation (or capacity-block on AWS)",
            )

    def _capacity_block(
        self, target: str, cloud: CloudSettings, pools: list[ResolvedPool]
    ) -> Iterator[Finding]:
        from generator.deploy.targets import cloud_target

        record = cloud_target(target)
        if record is None or not record.capacity_blocks:
            yield self.finding(
                f"capacity-block is an AWS product (EC2 Capacity Blocks for ML), not available on {target}",
                PATH,
                hint="use reservation (with reservation_id), on-demand or spot",
            )
            return
        for p in pools:
            if p.cloud is not None and not p.cloud.capacity_blocks:
                yield self.finding(f"{p.server_id} (pool `{p.name}`) is not sold as a Capacity Block", PATH)
            most = record.capacity_block_max_instances
            if most and p.count > most:
                yield self.finding(
                    f"pool `{p.name}` has {p.count} instances; one Capacity Block holds at most {most}",
                    PATH,
                    hint=f"at most {most} nodes in the pool, or capacity: reservation / on-demand",
                )
        hours = cloud.capacity_hours
        why = record.capacity_block_hours(hours) if (hours and record.capacity_block_hours) else None
        if why is not None:
            yield self.finding(
                f"capacity_hours: {hours} is not a length AWS sells: {why}",
                ("deployment", "cloud", "capacity_hours"),
                hint="a length the message names (the EC2 User Guide's Capacity Block durations)",
            )
        if cloud.reservation_id is None and cloud.capacity_hours is None:
            yield self.finding(
                "capacity-block needs reservation_id (a purchased block, cr-...) or capacity_hours "
                "(the program buys a block of that length)",
                PATH,
            )
        if len(pools) > 1 and cloud.reservation_id is not None:
            yield self.finding("one capacity block (reservation_id) cannot serve several pools", PATH)
        elif len(pools) > 1:
            yield self.finding(
                "capacity-block serves one GPU pool: the block's Availability Zone sets the cluster "
                "subnet's, and blocks bought per pool may land in different zones",
                PATH,
            )

    def _reservation(self, target: str, cloud: CloudSettings, pools: list[ResolvedPool]) -> Iterator[Finding]:
        from generator.deploy.targets import cloud_target

        record = cloud_target(target)
        if record is not None and record.reservation_refused:
            yield self.finding(
                f"capacity: reservation is not available on {target}: {record.reservation_refused}",
                PATH,
                hint="use on-demand or spot",
            )
            return
        what = record.reservation_id if record is not None else ""
        if what and cloud.reservation_id is None:  # the program cannot create the reservation itself
            yield self.finding(f"capacity reservation on {target} needs reservation_id (the {what})", PATH)
        if target == "aws" and len(pools) > 1 and cloud.reservation_id is not None:
            yield self.finding(
                "one reservation_id cannot serve several pools of different instance types", PATH
            )

    def _spot(self, target: str, cloud: CloudSettings, pools: list[ResolvedPool]) -> Iterator[Finding]:
        for p in pools:
            if p.cloud is not None and p.cloud.bare_metal:
                yield self.finding(
                    f"{p.server_id} (pool `{p.name}`) is bare metal: {target} sells no "
                    "preemptible capacity for it",
                    PATH,
                )
