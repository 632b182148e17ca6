"""AWS: EFA instances in a cluster placement group, capacity reservation/block, FSx for Lustre."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from generator.deploy.address_plan import address_plan
from generator.deploy.rdma_layout import efa_layout
from generator.emit.pulumi_targets.common import (
    ConfigKey,
    Project,
    cloud_data,
    pool_data,
)

if TYPE_CHECKING:
    from blueprints.models.deployment import CloudSettings
    from generator.plan.model import Plan
    from generator.resolve import ResolvedCluster

PACKAGES = ("pulumi-aws",)


def project(cluster: ResolvedCluster, plan: Plan | None) -> Project:
    cloud = cluster.blueprint.deployment.cloud
    assert cloud is not None
    addresses = address_plan(cluster)
    data = cloud_data(cluster)
    data["network"] = {
        "cidr": cloud.network_cidr,
        "private": addresses.cidr("private"),
        "public": addresses.cidr("public"),
    }
    data["pools"] = _pools(cluster, plan, cloud)
    return Project(
        data=data,
        config=_stack_config(cloud),
        packages=PACKAGES,
        user_config=_user_config(cloud),
        credentials=CREDENTIALS,
        notes=_notes(cloud, data["access"]["via"]),
    )


CREDENTIALS = (
    "AWS credentials as for the AWS CLI: `aws configure sso` / `AWS_PROFILE`, or "
    "`AWS_ACCESS_KEY_ID` + `AWS_SECRET_ACCESS_KEY` (+ `AWS_SESSION_TOKEN`) in the environment.",
    "Permissions: EC2 (VPC, subnets, NAT, security groups, launch templates, placement groups, "
    "instances, capacity reservations / capacity blocks), FSx or EFS; with Session Manager access (the "
    "default) IAM to create a role and instance profile and pass it to the instances (iam:PassRole).",
    "Quota: enough On-Demand P-instance vCPUs (or the reservation / Capacity Block) in the region.",
)


def _pools(cluster: ResolvedCluster, plan: Plan | None, cloud: CloudSettings) -> list[dict[str, Any]]:
    """The cloud pools with their EFA interface layout (one EFA per network card)."""
    pools = []
    for pool in cluster.pools:
        if pool.cloud is None:
            continue
        row = pool_data(cluster, plan, pool)
        row["efa"] = [asdict(i) for i in efa_layout(pool.cloud, cloud.efa_only_cards)]
        pools.append(row)
    return pools


def _stack_config(cloud: CloudSettings) -> dict[str, object]:
    config: dict[str, object] = {
        "aws:region": cloud.region,
        "availabilityZone": cloud.zone,
        "capacity": cloud.capacity,
        "rootVolumeGiB": cloud.boot_disk_gb,
        "sshKeyConfig": cloud.ssh_key_config,
    }
    if cloud.reservation_id:
        config["reservationId"] = cloud.reservation_id
    if cloud.capacity_hours:
        config["capacityBlockHours"] = cloud.capacity_hours
    return config


def _user_config(cloud: CloudSettings) -> list[ConfigKey]:
    """Keys the user sets: the SSH key, and for an unpinned Capacity Block the search start and the
    offering to buy."""
    user = [
        ConfigKey(
            cloud.ssh_key_config,
            False,
            "SSH public key installed for the default user",
            '"$(cat ~/.ssh/id_ed25519.pub)"',
        )
    ]
    if cloud.capacity == "capacity-block" and not cloud.reservation_id:
        user.append(
            ConfigKey(
                "capacityBlockStart",
                False,
                "earliest start of the Capacity Block to look for (RFC 3339); without a pinned offering the "
                "program lists the first one from then on and stops",
                "2026-03-01T11:30:00Z",
            )
        )
        user.append(
            ConfigKey(
                "capacityBlockOfferingId",
                False,
                "the Capacity Block offering to buy, pinned after reviewing the one the program lists "
                "(non-refundable: the block is protected and never bought twice)",
                "cb-0123456789abcdef0",
            )
        )
    return user


def _access_note(via: str) -> str:
    if via == "ssm":
        return (
            "The instances get an instance profile with AmazonSSMManagedInstanceCore; `blueprint inventory "
            "--from-stack` writes each host as its instance id behind the Session Manager ProxyCommand, so "
            "Ansible reaches them from your machine (AWS CLI with the Session Manager plugin)."
        )
    return "Run Ansible through the declared bastion or from inside the VPC (VPN, peering)."


def _notes(cloud: CloudSettings, access_via: str) -> tuple[str, ...]:
    notes = [
        "Instances get one EFA per network card: card 0 device 0 is the primary `efa` interface (with "
        "ENA, the instance's IP address); the other cards use device index 1 as `efa-only` "
        "(`efa_only_cards: true`, no IP address) or `efa`.",
        "The private subnet reaches the internet through a NAT gateway; nodes have no public address. "
        + _access_note(access_via),
    ]
    if cloud.capacity == "capacity-block":
        notes.append(
            "Instances can only run inside the Capacity Block's time window: if `pulumi up` runs before "
            "the block starts, the instance launches fail; run it again once the block is active."
        )
        notes.append(
            "Buying a Capacity Block is not refundable, so `pulumi up` never picks one by itself: the "
            "first run "
            "lists the offering found (id, Availability Zone, dates, fee) and stops; pin it with `pulumi "
            "config "
            "set capacityBlockOfferingId <id>`. The block is created protected and ignores later offering "
            "ids, so "
            "re-running `pulumi up` keeps it; the subnets and instances use the block's Availability Zone."
        )
    return tuple(notes)
