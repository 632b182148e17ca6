"""What a target boots: the instance type of a cloud pool, the OS image (the blueprint's or the catalogue
default, and whether it is vendor-tuned) and the MAAS distro series. Read by the DEP rules, the Pulumi
programs and the Ansible group_vars alike, so they never disagree."""

from __future__ import annotations

from blueprints.catalog.schema import CloudImage
from generator.resolve import ResolvedCluster, ResolvedPool

# MAAS image names for software.os (Ubuntu series ship with MAAS; others need a custom image name).
MAAS_SERIES = {"ubuntu-22.04": "jammy", "ubuntu-24.04": "noble"}


def instance_type(pool: ResolvedPool) -> str:
    return pool.server_id.partition("/")[2]


def default_image(cluster: ResolvedCluster) -> CloudImage | None:
    """The catalogue's default image for the target and software.os (data/cloud.yaml `images`)."""
    return cluster.catalog.images.get(cluster.target, {}).get(cluster.blueprint.software.os)


def image_for(cluster: ResolvedCluster) -> dict[str, str] | None:
    """The image the cloud target boots: the blueprint's `cloud.image`, else the catalogue default."""
    cloud = cluster.blueprint.deployment.cloud
    if cloud is not None and cloud.image:
        return {"id": cloud.image}
    default = default_image(cluster)
    return dict(default.image) if default is not None else None


def image_tuned(cluster: ResolvedCluster) -> bool:
    """The default image carries the vendor's HPC stack and tuning (Azure HPC images): keep it."""
    cloud = cluster.blueprint.deployment.cloud
    default = default_image(cluster)
    return default is not None and default.tuned and not (cloud is not None and cloud.image)


def maas_series(cluster: ResolvedCluster) -> str | None:
    maas = cluster.blueprint.deployment.maas
    if maas is not None and maas.distro_series:
        return maas.distro_series
    return MAAS_SERIES.get(cluster.blueprint.software.os)
