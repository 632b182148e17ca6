"""The blueprint root."""

from typing import Literal

from pydantic import Field, field_validator, model_validator

from blueprints.models.appliance import Appliance
from blueprints.models.base import Model, RuleId, SafeName, SafeText, empty_list
from blueprints.models.deployment import Deployment
from blueprints.models.fabric import Fabrics
from blueprints.models.nodes import NodePool
from blueprints.models.site import Site
from blueprints.models.software import Software
from blueprints.models.storage import SharedStorage
from blueprints.models.workload import Workload


class Suppression(Model):
    rule: RuleId
    """id of the rule whose findings are suppressed, e.g. TOP005 (`blueprint explain --list`)"""
    reason: SafeText = Field(min_length=3, description="why the finding does not apply (mandatory)")


class Blueprint(Model):
    api_version: Literal["cluster-blueprint/v1"] = Field(alias="apiVersion")
    """schema version of this file: cluster-blueprint/v1 (see docs/schema-versions.md; `blueprint migrate` upgrades)"""  # noqa: E501
    name: SafeName
    """cluster name: lower-case letters, digits and dashes; it prefixes generated names and files"""
    description: SafeText = ""
    """free text shown in reports"""
    catalog: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9._/-]{1,200}$",
        description="extra catalogue YAML, relative to this file",
    )
    site: Site = Field(default_factory=dict, validate_default=True)  # its defaults: base.py
    """the data-centre site: rows, racks, power and cabling geometry"""
    pools: list[NodePool] = Field(min_length=1, max_length=64)
    """node pools: groups of identical servers (GPU nodes, storage, login, management)"""
    fabrics: Fabrics = Field(default_factory=dict, validate_default=True)  # its defaults: base.py
    """the compute, storage and management networks"""
    appliances: list[Appliance] = Field(default_factory=empty_list, max_length=64)
    """devices cabled to fabric switch ports besides the pools' nodes: UFM appliances, a spare host"""
    storage: list[SharedStorage] = Field(default_factory=empty_list, max_length=32)
    """shared file systems the nodes mount"""
    software: Software = Field(default_factory=dict, validate_default=True)  # its defaults: base.py
    """pinned software versions (driver, CUDA, NCCL, OFED, OS)"""
    deployment: Deployment = Field(default_factory=dict, validate_default=True)  # its defaults: base.py
    """where the cluster is stood up: bare metal with MAAS, a cloud, or none"""
    workload: Workload | None = None
    """the model the cluster is for (optional): checks memory fit and communication time"""
    suppress: list[Suppression] = Field(default_factory=empty_list, max_length=256)
    """findings that do not apply, each with its rule id and a reason"""

    @model_validator(mode="after")
    def _unique_names(self) -> "Blueprint":
        for label, names in (
            ("pool", [p.name for p in self.pools]),
            ("storage", [s.name for s in self.storage]),
            ("appliance", [a.name for a in self.appliances]),
        ):
            seen: set[str] = set()
            for n in names:
                if n in seen:
                    raise ValueError(f"{label} name `{n}` is used twice")
                seen.add(n)
        return self

    @field_validator("storage")
    @classmethod
    def _one_storage_a_mount_point(cls, storage: list[SharedStorage]) -> list[SharedStorage]:
        """One fstab line per mount point: a second storage on the same point replaced the first one's."""
        mounts: dict[str, str] = {}
        for st in storage:
            if st.mount in mounts:
                raise ValueError(f"storage `{st.name}` mounts on `{st.mount}`, as `{mounts[st.mount]}` does")
            mounts[st.mount] = st.name
        return storage
