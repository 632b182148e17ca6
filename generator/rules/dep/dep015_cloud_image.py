"""DEP015: deployment.cloud.image is an image the target's program can boot from."""

from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class CloudImage(Rule):
    """`deployment.cloud.image` is handed to the target's program as data (cluster.json). Azure's scale set
    takes an image as `imageReference`: either `id`, the ARM resource id of a managed image or a Compute
    Gallery image (`/subscriptions/<id>/resourceGroups/<group>/providers/Microsoft.Compute/images/<name>`,
    `.../galleries/<gallery>/images/<definition>[/versions/<x.y.z>]`), or a Marketplace image's publisher,
    offer, sku and version, written as the URN `publisher:offer:sku:version` that `az vm image list` prints
    (version `latest` or Major.Minor.Build). A bare name is neither, and the scale set fails at `pulumi up`
    after the network is made. The other targets take a host-name-like id (an AMI id, a GCP image name, an
    OCI OCID): letters, digits, '.' and '-'."""

    id = "DEP015"
    severity = Severity.ERROR
    title = "deployment.cloud.image is not an image id the target takes"
    rationale = "the program passes the image to the provider as given: it fails at `pulumi up`, part-way"
    fix = (
        "on Azure give the image's ARM resource id or its Marketplace URN publisher:offer:sku:version; "
        "elsewhere the provider's image id (AMI id, GCP image name, OCI OCID)"
    )
    tags = ("deployment", "cloud")
    # The schema took only host-name-like ids before the Azure forms were allowed: the other targets keep
    # that check, which no `suppress:` entry could turn off.
    suppressible = False

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        from blueprints.models.deployment import HOST_IMAGE, azure_image

        cloud = ctx.cluster.blueprint.deployment.cloud
        if cloud is None or cloud.image is None:
            return
        image, target = cloud.image, ctx.cluster.target
        if target == "azure" and azure_image(image) is None:
            yield self.finding(
                f"`{image}` is neither an Azure ARM image id (/subscriptions/<id>/resourceGroups/<group>/"
                "providers/Microsoft.Compute/images/<name> or .../galleries/<gallery>/images/<definition>"
                "[/versions/<x.y.z>]) nor a Marketplace URN publisher:offer:sku:version (version `latest` "
                "or Major.Minor.Build)",
                ("deployment", "cloud", "image"),
            )
        elif target != "azure" and not HOST_IMAGE.fullmatch(image):
            yield self.finding(
                f"`{image}` is not an image id the {target} target takes: letters, digits, '.' and '-' "
                "(an AMI id, GCP image name or OCI OCID); ARM ids and publisher:offer:sku:version are "
                "Azure's",
                ("deployment", "cloud", "image"),
            )
