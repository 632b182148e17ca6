"""OCI: bare-metal GPU shapes in a cluster network (RoCE v2), instance configuration, FSS or Lustre."""

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
    from generator.plan.model import Plan
    from generator.resolve import ResolvedCluster

PACKAGES = ("pulumi-oci",)


def _user_config(ssh_key_config: str, data: dict[str, Any]) -> list[ConfigKey]:
    """The keys the user sets before `pulumi up` (the README lists each)."""
    user_config = [
        ConfigKey(
            "compartmentId", False, "OCID of the compartment to deploy into", "ocid1.compartment.oc1..xxxx"
        ),
        ConfigKey(
            ssh_key_config,
            False,
            "SSH public key for the `ubuntu`/`opc` user",
            '"$(cat ~/.ssh/id_ed25519.pub)"',
        ),
    ]
    if not (data.get("image") or {}).get("id"):
        # the program stops before creating anything without one (templates/pulumi/oci/__main__.py
        # image_id(): no stock image carries the cluster-network tooling), so the README must say it
        user_config.append(
            ConfigKey(
                "imageId",
                False,
                "OCID of an OCI GPU/HPC image with the cluster-network RDMA tooling (or set "
                "deployment.cloud.image in the blueprint and regenerate)",
                "ocid1.image.oc1..xxxx",
            )
        )
    return user_config


def project(cluster: ResolvedCluster, plan: Plan | None) -> Project:
    cloud = cluster.blueprint.deployment.cloud
    assert cloud is not None
    addresses = address_plan(cluster)
    data = cloud_data(cluster)
    data["network"] = {"cidr": cloud.network_cidr, "compute": addresses.cidr("compute")}
    data["pools"] = [pool_data(cluster, plan, p) for p in cluster.pools if p.cloud is not None]
    zone = (cloud.zone or "AD-1").upper()
    config: dict[str, object] = {
        "oci:region": cloud.region,
        "availabilityDomain": zone if zone.startswith("AD-") else f"AD-{zone}",
        "capacity": cloud.capacity,
        "bootVolumeGB": cloud.boot_disk_gb,
        "sshKeyConfig": cloud.ssh_key_config,
    }
    if cloud.reservation_id:
        config["capacityReservationId"] = cloud.reservation_id
    return Project(
        data=data,
        config=config,
        packages=PACKAGES,
        user_config=_user_config(cloud.ssh_key_config, data),
        credentials=(
            "An OCI API signing key: `oci setup config` writes ~/.oci/config (tenancy, user, "
            "fingerprint, key "
            "file, region), which the provider reads; or set `oci:tenancyOcid`, `oci:userOcid`, "
            "`oci:fingerprint` and the secret `oci:privateKey` (`pulumi config set --secret oci:privateKey "
            "< key.pem`).",
            "Policies: manage instance-family, cluster-family (cluster networks), virtual-network-family and "
            "file-family / lustre-file-family in the compartment; GPU bare-metal service limits in the AD.",
        ),
        notes=(
            "The cluster network places every instance of a pool on the same RoCE v2 RDMA network; the RDMA "
            "interfaces are configured on the hosts by the Oracle Cloud Agent HPC plugins enabled here "
            "(images without the agent need the OCI HPC RDMA packages).",
            "Instances are created by the cluster network's instance pool; `nodes` maps the blueprint "
            "hostnames to them in launch order (Ansible sets the hostnames).",
            "The availability domain is given as AD-1..AD-3 and resolved to the tenancy's AD name.",
        ),
    )
