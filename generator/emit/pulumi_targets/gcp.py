"""GCP: A3 High/Mega/Ultra with one NIC per GPU network, compact placement, Filestore / Managed Lustre."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from generator.deploy.address_plan import address_plan
from generator.emit.pulumi_targets.common import (
    ConfigKey,
    Project,
    cloud_data,
    pool_data,
)

if TYPE_CHECKING:
    from blueprints.models.deployment import CloudSettings
    from generator.plan.model import Plan
    from generator.resolve import ResolvedCluster, ResolvedPool

PACKAGES = ("pulumi-gcp",)


def project(cluster: ResolvedCluster, plan: Plan | None) -> Project:
    cloud = cluster.blueprint.deployment.cloud
    assert cloud is not None
    data = cloud_data(cluster)
    data["network"] = _network(cluster, cloud)
    data["pools"] = [_pool_row(cluster, plan, pool) for pool in cluster.pools if pool.cloud is not None]
    config: dict[str, object] = {
        "gcp:region": cloud.region,
        "gcp:zone": cloud.zone,
        "capacity": cloud.capacity,
        "bootDiskGiB": cloud.boot_disk_gb,
        "sshKeyConfig": cloud.ssh_key_config,
        "sshUser": "cluster",
    }
    if cloud.reservation_id:
        config["reservationName"] = cloud.reservation_id
    return Project(
        data=data,
        config=config,
        packages=PACKAGES,
        user_config=[
            ConfigKey("gcp:project", False, "Google Cloud project id to deploy into", "my-project"),
            ConfigKey(
                cloud.ssh_key_config,
                False,
                "SSH public key for the `sshUser` account",
                '"$(cat ~/.ssh/id_ed25519.pub)"',
            ),
        ],
        credentials=CREDENTIALS,
        notes=NOTES,
    )


CREDENTIALS = (
    "Application Default Credentials: `gcloud auth application-default login`, or a service account "
    "key file in `GOOGLE_APPLICATION_CREDENTIALS` (keep the file out of the project).",
    "Roles: Compute Admin, Service Networking Admin (Managed Lustre private services access), "
    "Filestore Editor or Lustre Admin; A3 GPU quota (or the reservation) in the zone.",
    "APIs enabled: compute, servicenetworking, file or lustre.",
)
NOTES = (
    "Every VM has one NIC per GPU network: A3 High 4 and A3 Mega 8 gVNICs "
    "(GPUDirect-TCPX/TCPXO), each "
    "in its own VPC; A3 Ultra 8 MRDMA NICs in one RoCE VPC made from the zone's RDMA network profile "
    "(`<zone>-vpc-roce`), plus 2 host gVNICs.",
    "All VMs of a pool share a compact placement policy. Instance names are the blueprint hostnames.",
    "Outbound internet goes through Cloud NAT on the first host network; SSH is open to IAP "
    "(35.235.240.0/20) only: `gcloud compute ssh --tunnel-through-iap`, and `blueprint inventory "
    "--from-stack` writes the same IAP ProxyCommand for every host (access via iap, the default).",
    "VMs consuming a reservation use the instance type's provisioning model from the catalogue "
    "(A3 Ultra: RESERVATION_BOUND, as Google's cluster-toolkit A3 Ultra blueprints do).",
    "Managed Lustre: a firewall rule admits the private services access range on the Lustre ports "
    "(TCP 988, and 6988 for GKE-compatible instances) into the host network.",
)


def _network(cluster: ResolvedCluster, cloud: CloudSettings) -> dict[str, Any]:
    """Host and GPU NIC subnets from the address plan, the GPU NIC VPC kind and its MTU."""
    addresses = address_plan(cluster)
    insts = [p.cloud for p in cluster.pools if p.cloud is not None]
    host = [{"name": s.name, "cidr": s.cidr} for s in addresses.subnets if s.name.startswith("host")]
    gpu = [{"name": s.name, "cidr": s.cidr} for s in addresses.subnets if s.name.startswith("gpu")]
    return {
        "host": host,
        "gpu": gpu,
        # RoCE (MRDMA) NICs share one VPC created from the zone's RDMA network profile, one subnet per
        # NIC; GPUDirect-TCPX/O gVNICs each need a VPC of their own (a VM may not have two NICs in one VPC).
        "gpu_rdma": any(i.gpu_nic_type == "MRDMA" for i in insts),
        "mtu": max((i.gpu_nic_mtu or 1460 for i in insts), default=1460),
        "internal": [cloud.network_cidr, cloud.gpu_network_cidr],
    }


def _pool_row(cluster: ResolvedCluster, plan: Plan | None, pool: ResolvedPool) -> dict[str, Any]:
    assert pool.cloud is not None
    row = pool_data(cluster, plan, pool)
    row["host_nics"] = pool.cloud.host_nics
    row["gpu_nic_type"] = pool.cloud.gpu_nic_type
    row["boot_disk_type"] = pool.cloud.boot_disk_type
    row["reservation_provisioning_model"] = pool.cloud.reservation_provisioning_model
    return row
