"""Where the cluster is stood up: on-prem bare metal (MAAS) or a cloud."""

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal

from pydantic import Field, model_validator

from blueprints.models.base import Model, SafeName, VersionStr
from blueprints.models.targets import NO_TARGET, TARGETS, access_owner, is_provider

# deployment.target: the names of targets.yaml (mypy sees a str; the schema an enum of the names)
if TYPE_CHECKING:
    TargetName = str
else:
    TargetName = Literal[tuple(TARGETS)]
_NAMES = tuple(TARGETS)

CIDR_PATTERN = r"^\d{1,3}(\.\d{1,3}){3}/\d{1,2}$"

# `gcloud projects create` PROJECT_ID: starts with a lower-case letter; lower-case ASCII letters, digits or
# hyphens; 6 to 30 characters (Resource Manager v3 Project: no trailing hyphen). One pattern for every
# reader: the stack-output reader (generator/deploy/stack_outputs.py) imports it from this lower layer.
GCP_PROJECT_ID = r"[a-z][a-z0-9-]{4,28}[a-z0-9]"
GCP_PROJECT = re.compile(GCP_PROJECT_ID)
# A Compute Engine image or image family name: "1-63 characters long, and comply with RFC1035", i.e.
# [a-z]([-a-z0-9]*[a-z0-9])? (cloud.google.com/compute/docs/reference/rest/v1/images, `name` and `family`).
_GCP_NAME = r"[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?"
# The image a GCE instance boots from, pulumi-gcp compute.Instance bootDisk.initializeParams.image (the
# Terraform google provider's google_compute_instance, which the Pulumi provider wraps): "the image's
# self_link, projects/{project}/global/images/{image}, projects/{project}/global/images/family/{family},
# global/images/{image}, global/images/family/{family}, family/{family}, {project}/{family},
# {project}/{image}, {family}, or {image}". A self link is the v1 API URL of the projects/... path
# (https://www.googleapis.com/compute/v1/projects/...), as images.get returns it in `selfLink`.
_GCP_IMAGE = (
    rf"(?:(?:https://www\.googleapis\.com/compute/v1/)?projects/{GCP_PROJECT_ID}/)?global/images/"
    rf"(?:family/)?{_GCP_NAME}"
    rf"|(?:family/|{GCP_PROJECT_ID}/)?{_GCP_NAME}"
)
GCP_IMAGE = re.compile(_GCP_IMAGE, re.ASCII)

# deployment.cloud.image as a target takes it. AWS AMI ids and OCI OCIDs are host-name-like (HostStr); GCP
# takes the forms of GCP_IMAGE. Azure's imageReference takes either `id`, an ARM resource id (a managed
# image, or a Compute Gallery image definition or version), or a Marketplace image's `publisher`, `offer`,
# `sku` and `version` ("Major.Minor.Build or 'latest'"), which `az vm image list` prints as the URN
# publisher:offer:sku:version (Azure Compute ImageReference: learn.microsoft.com/javascript/api/@azure/arm-
# compute-profile-2020-09-01-hybrid/imagereference; the program's Pulumi azure-native
# compute.ImageReferenceArgs has the same fields).
# The schema takes the union; which form a target takes is rule DEP015's check.
IMAGE_PATTERN = (
    r"^(?:[A-Za-z0-9][A-Za-z0-9.-]{0,252}"  # HostStr
    r"|/[A-Za-z0-9._()/-]{1,1023}"  # an ARM resource id
    r"|[A-Za-z0-9._-]{1,256}(?::[A-Za-z0-9._-]{1,256}){3}"  # a Marketplace URN
    # a GCP image path or self link; GCP_IMAGE (rule DEP015) is the exact check, with a message that says
    # which forms Google takes
    r"|(?:https://www\.googleapis\.com/compute/v1/)?[A-Za-z0-9._-]{1,63}(?:/[A-Za-z0-9._-]{1,63}){1,5})$"
)
HOST_IMAGE = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]{0,252}")
# Azure naming rules (learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules:
# resource groups 1-90 of letters, digits, '_', '.', '(', ')', '-'; Microsoft.Compute images and galleries
# 1-80 of letters, digits, '_', '.', '-'); names and the id's segments compare without case.
AZURE_IMAGE_ID = re.compile(
    r"/subscriptions/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    r"/resourceGroups/[A-Za-z0-9._()-]{1,90}/providers/Microsoft\.Compute/"
    r"(?:images/[A-Za-z0-9._-]{1,80}"
    r"|galleries/[A-Za-z0-9._]{1,80}/images/[A-Za-z0-9._-]{1,80}(?:/versions/[0-9]+\.[0-9]+\.[0-9]+)?)",
    re.IGNORECASE | re.ASCII,
)
AZURE_IMAGE_URN = re.compile(
    r"(?P<publisher>[A-Za-z0-9._-]{1,256}):(?P<offer>[A-Za-z0-9._-]{1,256}):(?P<sku>[A-Za-z0-9._-]{1,256})"
    r":(?P<version>latest|[0-9]+\.[0-9]+\.[0-9]+)",
    re.ASCII,
)


def _inline(pattern: re.Pattern[str]) -> str:
    """The pattern with its flags written inline, for a reader that has the text alone."""
    flags = ("i" if pattern.flags & re.IGNORECASE else "") + ("a" if pattern.flags & re.ASCII else "")
    return f"(?{flags}){pattern.pattern}" if flags else pattern.pattern


def azure_image_forms() -> dict[str, str]:
    """The two forms ``azure_image`` takes, as regular expressions the Azure program checks an `imageId`
    set with `pulumi config` against (it cannot import this module): one truth for both routes."""
    return {"id": _inline(AZURE_IMAGE_ID), "urn": _inline(AZURE_IMAGE_URN)}


def azure_image(value: str) -> dict[str, str] | None:
    """The Azure imageReference fields for ``value`` (an ARM image id or a Marketplace URN); None for a value
    Azure takes in neither form. The Azure program's data and rule DEP015 both read this."""
    if AZURE_IMAGE_ID.fullmatch(value):
        return {"id": value}
    urn = AZURE_IMAGE_URN.fullmatch(value)
    return dict(urn.groupdict()) if urn else None


# MAAS refuses a tag name outside ^[a-zA-Z0-9_-]+$ (Tag._tag_name_regex in canonical/maas
# src/maasserver/models/tag.py); a rack name may hold '.' (docs/existing-site.md: "DH2.R{row:02}-...").
_NOT_IN_MAAS_TAG = re.compile(r"[^A-Za-z0-9_-]")


def maas_tag(cluster_name: str, *parts: object) -> str:
    """The MAAS tag name for ``parts`` of the cluster: joined by '-', any character MAAS refuses as '-'. The
    MAAS program's tags and rule DEP014 (two racks, one tag) both come from here."""
    return _NOT_IN_MAAS_TAG.sub("-", "-".join([cluster_name, *(str(p) for p in parts)]))


def maas_rack_tags(cluster_name: str, racks: Iterable[str]) -> dict[str, list[str]]:
    """MAAS rack tag -> the racks it names (sorted): more than one rack and MAAS cannot tell them apart."""
    out: dict[str, set[str]] = {}
    for rack in racks:
        out.setdefault(maas_tag(cluster_name, "rack", rack), set()).add(rack)
    return {tag: sorted(names) for tag, names in out.items()}


class MaasSettings(Model):
    api_url_config: str = Field(default="maas:apiUrl", pattern=r"^[a-zA-Z][a-zA-Z0-9:_-]{0,63}$")
    """Pulumi config key holding the MAAS API URL"""
    management_cidr: str = Field(default="10.0.0.0/16", pattern=CIDR_PATTERN)
    """management network; hosts get addresses from it"""
    zone: SafeName | None = None
    """MAAS availability zone"""
    compute_cidr: str = Field(
        default="10.100.0.0/16",
        pattern=CIDR_PATTERN,
        description="IPoIB/RoCE addresses of the compute fabric, split into one subnet per rail",
    )
    storage_cidr: str = Field(
        default="10.200.0.0/16", pattern=CIDR_PATTERN, description="addresses of the storage fabric"
    )
    resource_pool: SafeName | None = Field(
        default=None, description="MAAS resource pool the machines are allocated from"
    )
    vlan_base: int = Field(
        default=100,
        ge=1,
        le=3900,
        description=(
            "MAAS VLAN ids: compute rail r = vlan_base + r, storage = vlan_base + 100 (bookkeeping only on "
            "InfiniBand, where IPoIB carries no 802.1Q tag)"
        ),
    )
    distro_series: VersionStr | None = Field(
        default=None,
        description="MAAS image to deploy (jammy, noble, or a custom image name); default from software.os",
    )


class AccessSettings(Model):
    """How the operator's Ansible controller reaches the private nodes (`blueprint inventory` writes it)."""

    via: Literal["ssm", "iap", "bastion", "vpn"]
    """ssm (AWS Session Manager), iap (Google IAP TCP forwarding), bastion (an SSH jump host), vpn (direct)"""
    bastion: str | None = Field(
        default=None,
        pattern=r"^([a-z_][a-z0-9_-]{0,31}@)?[A-Za-z0-9.-]{1,253}(:[0-9]{1,5})?$",
        description="the jump host for via: bastion, as OpenSSH ProxyJump takes it: [user@]host[:port]",
    )

    @model_validator(mode="after")
    def _bastion(self) -> "AccessSettings":
        if (self.via == "bastion") != (self.bastion is not None):
            raise ValueError("`bastion: [user@]host[:port]` goes with `via: bastion` (and only with it)")
        port = self.bastion.rpartition(":")[2] if self.bastion and ":" in self.bastion else None
        if port is not None and not 1 <= int(port) <= 65535:
            # OpenSSH refuses the whole ProxyJump ("Invalid ProxyJump"), and so every Ansible connection
            raise ValueError(f"bastion port {port} is not a TCP port (1-65535)")
        return self


class CloudSettings(Model):
    region: VersionStr
    """cloud region, e.g. us-east-1"""
    zone: VersionStr | None = None
    """availability zone (where the provider needs one)"""
    capacity: Literal["on-demand", "reservation", "capacity-block", "spot"] = "on-demand"
    """how GPU capacity is obtained: on-demand, reservation, capacity-block or spot"""
    reservation_id: str | None = Field(default=None, pattern=r"^[A-Za-z0-9._:/-]{1,200}$")
    """reservation / capacity block / cluster placement id to launch into"""
    efa_only_cards: bool = Field(default=True, description="AWS: secondary cards as efa-only interfaces")
    image: str | None = Field(
        default=None,
        pattern=IMAGE_PATTERN,
        description=(
            "machine image (default: the provider's GPU image): an AMI id or OCI OCID; on GCP an image or "
            "family name, projects/<project>/global/images/[family/]<name> or its https://www.googleapis.com/"
            "compute/v1/ self link; on Azure an ARM image id or a Marketplace URN publisher:offer:sku:version"
        ),
    )
    ssh_key_config: str = Field(default="sshPublicKey", pattern=r"^[a-zA-Z][a-zA-Z0-9_-]{0,63}$")
    """Pulumi config key holding the SSH public key"""
    network_cidr: str = Field(
        default="10.0.0.0/16",
        pattern=CIDR_PATTERN,
        description="VPC / VNet / VCN address space for host (TCP) networking",
    )
    gpu_network_cidr: str = Field(
        default="192.168.0.0/16",
        pattern=CIDR_PATTERN,
        description="GCP: carved into one subnet per GPU NIC network",
    )
    managed_storage: Literal["lustre", "nfs"] = Field(
        default="lustre",
        description="what `kind: managed` storage becomes: the cloud's managed Lustre or its NFS service",
    )
    capacity_hours: int | None = Field(
        default=None,
        ge=24,
        le=4368,
        description="AWS capacity-block length to purchase when no reservation_id is given",
    )
    boot_disk_gb: int = Field(default=512, ge=64, le=16384, description="boot / root volume per instance")
    access: AccessSettings | None = Field(
        default=None,
        description="how Ansible reaches the nodes; default: ssm on AWS, iap on GCP, vpn (direct) elsewhere",
    )

    @model_validator(mode="after")
    def _hours(self) -> "CloudSettings":
        if self.capacity_hours is not None and self.capacity_hours % 24:
            raise ValueError("capacity_hours is sold in whole days: use a multiple of 24")
        return self


class Deployment(Model):
    target: TargetName = Field(
        default=NO_TARGET, description=f"where to deploy: {', '.join(_NAMES[:-1])} or {_NAMES[-1]}"
    )
    maas: MaasSettings | None = None
    """MAAS settings (target maas)"""
    cloud: CloudSettings | None = None
    """cloud settings (cloud targets)"""

    @model_validator(mode="after")
    def _settings(self) -> "Deployment":
        if is_provider(self.target) and self.cloud is None:
            raise ValueError(f"target {self.target} needs a `cloud:` section (at least `region`)")
        if self.target != NO_TARGET and not is_provider(self.target) and self.cloud is not None:
            raise ValueError(f"target {self.target} takes a `{self.target}:` section, not `cloud:`")
        via = self.cloud.access.via if self.cloud and self.cloud.access else None
        owner = access_owner(via) if via else None  # Session Manager is AWS's, IAP TCP forwarding Google's
        if owner is not None and self.target != owner:
            raise ValueError(f"access via {via} works on target {owner} only: use bastion or vpn")
        return self
