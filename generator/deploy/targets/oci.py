"""OCI: bare-metal GPU shapes in a cluster network (program: generator/emit/pulumi_targets/oci.py)."""

from __future__ import annotations

import re

from generator.deploy.address_plan import STORAGE_ADDRESS_HEADROOM, AddressPlan, CloudNetwork, Subnet, usable
from generator.deploy.stack_outputs import OciOutputs
from generator.deploy.targets import CloudTarget

# The blueprint names an availability domain by its number, AD-1..AD-3 (the program looks up the
# tenancy-specific name).
OCI_AD = re.compile(r"^(?:AD-)?([1-3])$", re.IGNORECASE)


def _zone(region: str, zone: str) -> str | None:
    if OCI_AD.match(zone):
        return None
    return f"`{zone}` is not an OCI availability domain: use AD-1, AD-2 or AD-3"


def _subnets(net: CloudNetwork, plan: AddressPlan) -> None:
    """One compute subnet: the instances and the file systems' mount targets."""
    compute = net.first
    if usable(compute, net.reserved) < net.nodes + STORAGE_ADDRESS_HEADROOM:
        plan.problems.append(
            (
                net.path,
                f"compute subnet {compute} holds {usable(compute, net.reserved)} addresses, "
                f"{net.nodes + STORAGE_ADDRESS_HEADROOM} are needed",
            )
        )
    plan.subnets.append(Subnet("compute", str(compute), net.nodes))


TARGET = CloudTarget(
    name="oci",
    title="OCI bare-metal GPU cluster network",
    components="network, compute (cluster network = placement), storage",
    # OCI "VCNs and subnets": the first two and the last address of every subnet are reserved.
    subnet_reserved=3,
    stack_outputs=OciOutputs,
    subnet_layout=_subnets,
    network_largest_prefix=16,
    network_largest_source=(
        "OCI CreateVcn (terraform-provider-oci oci_core_vcn): the CIDR blocks can range from /16 to /30"
    ),
    zone_required=True,  # a cluster network lives in one availability domain
    zone_check=_zone,
    reservation_id="compute capacity reservation OCID",
)
