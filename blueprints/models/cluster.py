"""The blueprint root."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from blueprints.models.base import Model, RuleId, SafeName, SafeText
from blueprints.models.deployment import Deployment
from blueprints.models.fabric import Fabrics
from blueprints.models.nodes import NodePool
from blueprints.models.site import Site
from blueprints.models.software import Software
from blueprints.models.storage import SharedStorage
from blueprints.models.workload import Workload

API_VERSION = "cluster-blueprint/v1"


class Suppression(Model):
    rule: RuleId
    reason: SafeText = Field(min_length=3, description="why the finding does not apply (mandatory)")


class Blueprint(Model):
    api_version: Literal["cluster-blueprint/v1"] = Field(alias="apiVersion")
    name: SafeName
    description: SafeText = ""
    catalog: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9._/-]{1,200}$",
        description="extra catalogue YAML, relative to this file",
    )
    site: Site = Field(default_factory=Site)
    pools: list[NodePool] = Field(min_length=1, max_length=64)
    fabrics: Fabrics = Field(default_factory=Fabrics)
    storage: list[SharedStorage] = Field(default_factory=list, max_length=32)
    software: Software = Field(default_factory=Software)
    deployment: Deployment = Field(default_factory=Deployment)
    workload: Workload | None = None
    suppress: list[Suppression] = Field(default_factory=list, max_length=256)

    @model_validator(mode="after")
    def _unique_names(self) -> Blueprint:
        for label, names in (
            ("pool", [p.name for p in self.pools]),
            ("storage", [s.name for s in self.storage]),
        ):
            seen: set[str] = set()
            for n in names:
                if n in seen:
                    raise ValueError(f"{label} name `{n}` is used twice")
                seen.add(n)
        return self
