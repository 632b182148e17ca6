"""DEP009: there is an image to deploy for software.os on the target."""

from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class OsImage(Rule):
    """The program boots `software.os`: on MAAS as a distro series (Ubuntu ships with MAAS; RHEL, Rocky
    or Debian need a custom image uploaded to MAAS and named in `deployment.maas.distro_series`); on a
    cloud as the provider's GPU image for that OS (AWS Deep Learning Base AMI, Azure Ubuntu-HPC, Google
    Ubuntu accelerator image, OCI platform image) unless `deployment.cloud.image` names one."""

    id = "DEP009"
    severity = Severity.ERROR
    title = "no image for software.os on the deployment target"
    rationale = "the program has nothing to boot"
    fix = "set deployment.cloud.image (an image id) or deployment.maas.distro_series, or pick a supported OS"
    tags = ("deployment",)

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        target = cluster.target
        if target != "maas" and target != "oci" and not cluster.is_cloud:  # no image to check
            return
        from generator.deploy.images import MAAS_SERIES, default_image, image_for, maas_series

        os_ = cluster.blueprint.software.os
        if target == "maas" and maas_series(cluster) is None:
            yield self.finding(
                f"MAAS has no built-in image for {os_} (built in: {', '.join(sorted(MAAS_SERIES))})",
                ("software", "os"),
                hint="upload a custom image to MAAS and set deployment.maas.distro_series",
            )
        elif target == "oci" and image_for(cluster) is None:
            yield self.finding(
                "OCI cluster networks need an image with the RDMA tooling (Mellanox configuration, "
                "oci-cn-auth "
                "802.1X) such as the OCI GPU images oracle-quickstart/oci-hpc deploys; a stock platform "
                "image "
                "has none, so there is no default",
                ("deployment", "cloud"),
                severity=Severity.WARNING,
                hint="set deployment.cloud.image (or `pulumi config set imageId`) to the OCID of an OCI "
                "GPU/HPC "
                "image for the shape; the program stops before creating anything until one is set",
            )
        elif cluster.is_cloud and image_for(cluster) is None:
            known = ", ".join(sorted(cluster.catalog.images.get(target, {}))) or "none"
            yield self.finding(
                f"no default {target} GPU image for {os_} (defaults exist for: {known})",
                ("software", "os"),
                hint="set deployment.cloud.image to an image id for this OS",
            )
        elif cluster.is_cloud:
            default = default_image(cluster)
            branch = cluster.software.driver_branch
            cloud = cluster.blueprint.deployment.cloud
            if (
                default is not None
                and default.driver_branch
                and default.driver_branch != branch
                and not (cloud and cloud.image)
            ):
                yield self.finding(
                    f"the default {target} image ships NVIDIA driver {default.driver_branch}, the "
                    "blueprint pins "
                    f"{branch}: the nvidia_driver role would replace the image's driver",
                    ("software", "driver_branch"),
                    severity=Severity.WARNING,
                    hint=f"pin driver_branch {default.driver_branch!r} or set deployment.cloud.image",
                )
