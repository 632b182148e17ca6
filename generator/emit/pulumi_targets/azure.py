"""Azure: ND-series uniform scale sets (one InfiniBand placement group each), HPC image, AMLFS or Azure
Files NFS."""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING, Any

from blueprints.models.deployment import azure_image, azure_image_forms
from generator.deploy.address_plan import address_plan
from generator.deploy.rdma_layout import rdma_domains
from generator.emit.pulumi_targets.common import (
    ConfigKey,
    Project,
    cloud_data,
    pool_data,
)

if TYPE_CHECKING:
    from generator.plan.model import Plan
    from generator.resolve import ResolvedCluster, ResolvedPool

PACKAGES = ("pulumi-azure-native",)


def project(cluster: ResolvedCluster, plan: Plan | None) -> Project:
    cloud = cluster.blueprint.deployment.cloud
    assert cloud is not None
    addresses = address_plan(cluster)
    data = cloud_data(cluster)
    if cloud.image:  # an ARM image id, or a Marketplace URN as its four imageReference fields (DEP015)
        data["image"] = azure_image(cloud.image) or data["image"]
    data["image_forms"] = azure_image_forms()  # what an `imageId` set with `pulumi config` must be
    data["network"] = {
        "cidr": cloud.network_cidr,
        "compute": addresses.cidr("compute"),
        "storage": addresses.cidr("storage"),
    }
    data["pools"] = [_pool_row(cluster, plan, pool) for pool in cluster.pools if pool.cloud is not None]
    _name_accounts(cluster.name, data["storage"])
    config: dict[str, object] = {
        "azure-native:location": cloud.region,
        "zone": cloud.zone,
        "capacity": cloud.capacity,
        "osDiskGiB": cloud.boot_disk_gb,
        "sshKeyConfig": cloud.ssh_key_config,
        "adminUsername": "azureuser",
    }
    return Project(
        data=data,
        config=config,
        packages=PACKAGES,
        user_config=[
            ConfigKey(
                cloud.ssh_key_config,
                False,
                "SSH public key for the admin user",
                '"$(cat ~/.ssh/id_ed25519.pub)"',
            )
        ],
        credentials=CREDENTIALS,
        notes=NOTES,
    )


CREDENTIALS = (
    "Azure CLI login (`az login`, `az account set --subscription <id>`) or a service principal in "
    "`ARM_CLIENT_ID`, `ARM_CLIENT_SECRET` (secret), `ARM_TENANT_ID`, `ARM_SUBSCRIPTION_ID`.",
    "Role: Contributor on the subscription or the target resource group; ND-series vCPU quota in the region.",
)
NOTES = (
    "Each scale set is Uniform with a single placement group: its VMs share one InfiniBand fabric. "
    "A pool larger than one placement group is split into several scale sets (scalable units); "
    "InfiniBand does not connect VMs of different scale sets.",
    "VM names come from the scale set (`<prefix><6-character instance id>`); the `nodes` export maps "
    "each blueprint hostname to that name, which Azure DNS resolves inside the VNet. The mapping "
    "assumes instance ids 0..n-1 (overprovisioning is off); check with `az vmss list-instances`.",
    "Outbound internet goes through a NAT gateway; VMs get no public address.",
)


def _pool_row(cluster: ResolvedCluster, plan: Plan | None, pool: ResolvedPool) -> dict[str, Any]:
    """The pool with its scale sets: each is one InfiniBand domain (single placement group); big pools
    become several, and their index is the node's scalable unit."""
    assert pool.cloud is not None
    row = pool_data(cluster, plan, pool)
    sets = []
    start = 0
    for k, size in enumerate(rdma_domains(pool.count, pool.cloud.rdma_domain_max_vms), start=1):
        members = row["nodes"][start : start + size]
        for i, node in enumerate(members):
            node["su"] = k
            node["instance_id"] = i
        sets.append({"su": k, "size": size, "hostnames": [n["hostname"] for n in members]})
        start += size
    row["scale_sets"] = sets
    return row


# The logical name of an NFS share's storage account: the blueprint's and the storage's names in lowercase
# letters and digits (all an account name may hold: Azure naming rules, Microsoft.Storage storageAccounts),
# cut to 16 characters, the name the program has always given, so a deployed account keeps its URN.
ACCOUNT_NAME_CHARS = 16
ACCOUNT_DIGEST_CHARS = 6


def _name_accounts(cluster_name: str, storage: list[dict[str, Any]]) -> None:
    """Set ``account`` on every NFS share's row. Two storages whose names cut to one account name (a long
    blueprint name leaves none of the storage's, or names differing only in hyphens) were two resources of
    one URN, which Pulumi refuses: those end in a digest of their storage's name instead."""
    nfs = [s for s in storage if s["protocol"] != "lustre"]
    plain = {
        s["name"]: re.sub(r"[^a-z0-9]", "", f"{cluster_name}{s['name']}")[:ACCOUNT_NAME_CHARS] for s in nfs
    }
    taken = list(plain.values())
    for s in nfs:
        account = plain[s["name"]]
        if taken.count(account) > 1:
            digest = hashlib.sha256(s["name"].encode()).hexdigest()[:ACCOUNT_DIGEST_CHARS]
            account = account[: ACCOUNT_NAME_CHARS - ACCOUNT_DIGEST_CHARS] + digest
        s["account"] = account
