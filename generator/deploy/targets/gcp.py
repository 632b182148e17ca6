"""Google Cloud: A3 VMs with GPU NIC networks (program: generator/emit/pulumi_targets/gcp.py)."""

from __future__ import annotations

import ipaddress
import re

from generator.deploy.address_plan import STORAGE_ADDRESS_HEADROOM, AddressPlan, CloudNetwork, carve
from generator.deploy.stack_outputs import GcpOutputs
from generator.deploy.targets import CloudTarget


def _zone(region: str, zone: str) -> str | None:
    # A zone is the region's name, a hyphen and one letter (us-central1-b in us-central1).
    if re.fullmatch(re.escape(region) + r"-[a-z]", zone):
        return None
    return f"`{zone}` is not a zone of {region} (expected e.g. {region}-a)"


def _subnets(net: CloudNetwork, plan: AddressPlan) -> None:
    """One host subnet per host NIC from network_cidr and one subnet per GPU NIC from gpu_network_cidr."""
    cloud = net.cloud
    host_nics = max((p.cloud.host_nics for p in net.pools if p.cloud), default=1)
    carve(
        plan,
        cloud.network_cidr,
        net.path,
        [f"host{i}" for i in range(host_nics)],
        net.nodes + STORAGE_ADDRESS_HEADROOM,
        net.reserved,
        "the host networks",
    )
    gpu_nics = max((p.cloud.network_cards for p in net.pools if p.cloud), default=0)
    if gpu_nics:
        _apart(cloud.network_cidr, cloud.gpu_network_cidr, plan)
    carve(
        plan,
        cloud.gpu_network_cidr,
        ("deployment", "cloud", "gpu_network_cidr"),
        [f"gpu{i}" for i in range(gpu_nics)],
        net.nodes,
        net.reserved,
        "the GPU NIC networks",
    )


def _apart(host_cidr: str, gpu_cidr: str, plan: AddressPlan) -> None:
    """Every VM holds a NIC in a host subnet and one in each GPU NIC subnet: ranges that overlap give it two
    connected routes to one range, and traffic for another node's host address leaves through an RDMA NIC
    (SSH, Ansible, NFS and Lustre break), as the on-prem plan refuses (addresses._overlaps)."""
    try:
        host = ipaddress.ip_network(host_cidr, strict=False)
        gpu = ipaddress.ip_network(gpu_cidr, strict=False)
    except ValueError:
        return  # refused where each is carved
    if host.overlaps(gpu):
        plan.problems.append(
            (
                ("deployment", "cloud", "gpu_network_cidr"),
                f"{gpu} overlaps network_cidr {host}: every VM holds a NIC in both, so it would route part "
                "of the host network through a GPU NIC; give the GPU NIC networks a range of their own",
            )
        )


TARGET = CloudTarget(
    name="gcp",
    title="Google Cloud A3",
    components="network, placement, compute, storage",
    # Google Cloud "Subnets": four addresses of every primary IPv4 range are reserved.
    subnet_reserved=4,
    stack_outputs=GcpOutputs,
    default_access="iap",  # IAP TCP forwarding: the program opens the firewall to IAP's range
    subnet_layout=_subnets,
    # a compact placement policy and the A3 Ultra RoCE network live in one zone
    zone_required=True,
    zone_check=_zone,
    reservation_id="reservation name",
    own_settings={"gpu_network_cidr": "only GCP gives every GPU NIC its own subnet"},
)
