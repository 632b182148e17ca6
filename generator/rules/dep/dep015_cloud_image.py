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
    after the network is made. GCP's instance takes the forms its boot disk's `initializeParams.image`
    documents: an image or family name, `projects/<project>/global/images/[family/]<name>` and its
    `https://www.googleapis.com/compute/v1/` self link, `global/images/[family/]<name>`, `family/<name>` and
    `<project>/<name>` (names RFC 1035, 1-63 characters; project ids 6-30). The other targets take a
    host-name-like id (an AMI id, an OCI OCID): letters, digits, '.' and '-'."""

    id = "DEP015"
    severity = Severity.ERROR
    title = "deployment.cloud.image is not an image id the target takes"
    rationale = "the program passes the image to the provider as given: it fails at `pulumi up`, part-way"
    fix = (
        "on Azure give the image's ARM resource id or its Marketplace URN publisher:offer:sku:version; "
        "on GCP an image or family name or projects/<project>/global/images/[family/]<name>; elsewhere the "
        "provider's image id (AMI id, OCI OCID)"
    )
    tags = ("deployment", "cloud")
    # The schema took only host-name-like ids before the Azure forms were allowed: the other targets keep
    # that check, which no `suppress:` entry could turn off.
    suppressible = False

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        from blueprints.models.deployment import GCP_IMAGE, HOST_IMAGE, azure_image

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
        elif target == "gcp" and not GCP_IMAGE.fullmatch(image):
            yield self.finding(
                f"`{image}` is not a GCP image: give an image or family name (a lower-case letter, then up "
                "to 62 of a-z, 0-9, '-', not ending in '-'), projects/<project>/global/images/<name>, "
                "projects/<project>/global/images/family/<family>, their https://www.googleapis.com/"
                "compute/v1/ self link, global/images/[family/]<name>, family/<family> or <project>/<name> "
                "(project id: 6-30 of a-z, 0-9, '-')",
                ("deployment", "cloud", "image"),
            )
        elif target not in ("azure", "gcp") and not HOST_IMAGE.fullmatch(image):
            yield self.finding(
                f"`{image}` is not an image id the {target} target takes: letters, digits, '.' and '-' "
                "(an AMI id or OCI OCID); ARM ids and publisher:offer:sku:version are Azure's, "
                "projects/.../global/images/... paths GCP's",
                ("deployment", "cloud", "image"),
            )
