"""Azure: ND-series scale sets with InfiniBand (program: generator/emit/pulumi_targets/azure.py)."""

from __future__ import annotations

from typing import cast

from generator.deploy.address_plan import (
    STORAGE_ADDRESS_HEADROOM,
    AddressPlan,
    CloudNetwork,
    Network,
    Subnet,
    usable,
)
from generator.deploy.stack_outputs import AzureOutputs
from generator.deploy.targets import CloudTarget


def _zone(region: str, zone: str) -> str | None:
    # Azure availability zones are numbered 1 to 3 within a region.
    return None if zone in ("1", "2", "3") else f"`{zone}` is not an Azure availability zone: use 1, 2 or 3"


def _subnets(net: CloudNetwork, plan: AddressPlan) -> None:
    """A compute subnet (one address per VM) and a storage subnet (Managed Lustre, Files): the first /24 of
    the network's second half, or the larger block Managed Lustre's size needs (catalogue [AMLFS-NET])."""
    compute, storage = net.first, net.small
    if net.storage_prefix is not None and net.storage_prefix < storage.prefixlen:
        rest = next(n for n in compute.supernet().subnets(prefixlen_diff=1) if n != compute)
        if rest.prefixlen > net.storage_prefix:
            plan.problems.append(
                (
                    net.path,
                    f"Azure Managed Lustre needs a /{net.storage_prefix} subnet or larger for its size, and "
                    f"the second half of the network ({rest}) is smaller: use a larger network_cidr",
                )
            )
        else:
            storage = cast("Network", next(rest.subnets(new_prefix=net.storage_prefix)))
    if usable(compute, net.reserved) < net.nodes:
        plan.problems.append(
            (
                net.path,
                f"compute subnet {compute} holds "
                f"{usable(compute, net.reserved)} addresses, {net.nodes} VMs need one each",
            )
        )
    plan.subnets += [
        Subnet("compute", str(compute), net.nodes),
        Subnet("storage", str(storage), STORAGE_ADDRESS_HEADROOM),
    ]


TARGET = CloudTarget(
    name="azure",
    title="Azure ND-series scale sets with InfiniBand",
    components="network, compute (scale sets = placement), storage",
    # Azure Virtual Network FAQ: five addresses are reserved in every subnet.
    subnet_reserved=5,
    stack_outputs=AzureOutputs,
    subnet_layout=_subnets,
    zone_required=False,  # a scale set is the placement; the zone is optional
    zone_check=_zone,
    # Microsoft Learn, "Associate a Virtual Machine Scale Set with uniform orchestration to a Capacity
    # Reservation group", Limitations: "the singlePlacementGroup property must be set to False"; the program's
    # scale sets keep singlePlacementGroup true, the one placement group an InfiniBand fabric spans.
    reservation_refused=(
        "a Uniform scale set takes a capacity reservation group only with singlePlacementGroup false "
        "(Microsoft Learn, capacity reservation for Uniform scale sets, Limitations), and the program keeps "
        "each scale set in one placement group, the one InfiniBand fabric its VMs share"
    ),
)
