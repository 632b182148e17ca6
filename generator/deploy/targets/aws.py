"""AWS: EC2 GPU instances with EFA in a cluster placement group.

Its program: generator/emit/pulumi_targets/aws.py and templates/pulumi/aws/__main__.py.
"""

from __future__ import annotations

import re

from generator.deploy.address_plan import STORAGE_ADDRESS_HEADROOM, AddressPlan, CloudNetwork, Subnet, usable
from generator.deploy.stack_outputs import AwsOutputs
from generator.deploy.targets import CloudTarget


def _zone(region: str, zone: str) -> str | None:
    # An availability zone is the region's name plus one letter (us-east-1a in us-east-1).
    if re.fullmatch(re.escape(region) + r"[a-z]", zone):
        return None
    return f"`{zone}` is not an availability zone of {region} (expected e.g. {region}a)"


def _subnets(net: CloudNetwork, plan: AddressPlan) -> None:
    """A private cluster subnet (instances, EFA interfaces, FSx) and a small public one (NAT)."""
    cloud = net.cloud
    # efa-only interfaces take no address; `efa` interfaces take one each (plus the primary).
    per_node = {
        p.name: (1 if cloud.efa_only_cards else max(1, p.cloud.efa_interfaces)) for p in net.pools if p.cloud
    }
    need = sum(per_node[p.name] * p.count for p in net.pools) + STORAGE_ADDRESS_HEADROOM
    private, public = net.first, net.small
    if usable(private, net.reserved) < need:
        what = (
            "one address per instance"
            if cloud.efa_only_cards
            else "one address per EFA interface (efa_only_cards: false)"
        )
        plan.problems.append(
            (
                net.path,
                f"private subnet {private} holds {usable(private, net.reserved)} addresses; "
                f"{need} are needed ({what} plus storage headroom)",
            )
        )
    plan.subnets += [Subnet("private", str(private), need), Subnet("public", str(public), 1)]


# EC2 User Guide, "Find and purchase Capacity Blocks": "You must specify reservation durations in 1-day
# increments up to 14 days, and in 7-day increments up to 182 days. Each Capacity Block can have up to 64
# instances, and you can have up to 256 instances across Capacity Blocks."
CAPACITY_BLOCK_DAILY_UP_TO_DAYS = 14
CAPACITY_BLOCK_MAX_DAYS = 182
CAPACITY_BLOCK_MAX_INSTANCES = 64


def _capacity_block_hours(hours: int) -> str | None:
    days, rest = divmod(hours, 24)
    if rest or not 1 <= days <= CAPACITY_BLOCK_MAX_DAYS:
        return f"Capacity Blocks last whole days, 1 to {CAPACITY_BLOCK_MAX_DAYS}"
    if days > CAPACITY_BLOCK_DAILY_UP_TO_DAYS and days % 7:
        return (
            f"past {CAPACITY_BLOCK_DAILY_UP_TO_DAYS} days Capacity Blocks are sold in whole weeks "
            f"({days} days is not one)"
        )
    return None


TARGET = CloudTarget(
    name="aws",
    title="AWS EC2 with EFA",
    components="network, placement, compute, storage",
    # AWS VPC user guide, "Subnet CIDR blocks": the first four and the last address of every subnet.
    subnet_reserved=5,
    stack_outputs=AwsOutputs,
    default_access="ssm",  # Session Manager: the program gives every instance the SSM instance profile
    subnet_layout=_subnets,
    network_largest_prefix=16,
    network_largest_source="EC2 API CreateVpc: the largest VPC uses a /16 netmask (65,536 IP addresses)",
    # a cluster placement group and its subnet live in one availability zone
    zone_required=True,
    zone_check=_zone,
    capacity_blocks=True,  # EC2 Capacity Blocks for ML
    capacity_block_hours=_capacity_block_hours,
    capacity_block_max_instances=CAPACITY_BLOCK_MAX_INSTANCES,
    own_settings={
        "efa_only_cards": "EFA network cards exist only on AWS",
        "capacity_hours": "capacity blocks exist only on AWS",
    },
)
