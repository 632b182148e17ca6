"""Where the cluster is stood up: on-prem bare metal (MAAS) or a cloud."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from blueprints.models.base import HostStr, Model, SafeName, VersionStr


class MaasSettings(Model):
    api_url_config: str = Field(default="maas:apiUrl", pattern=r"^[a-zA-Z][a-zA-Z0-9:_-]{0,63}$")
    management_cidr: str = Field(default="10.0.0.0/16", pattern=r"^\d{1,3}(\.\d{1,3}){3}/\d{1,2}$")
    zone: SafeName | None = None


class CloudSettings(Model):
    region: VersionStr
    zone: VersionStr | None = None
    capacity: Literal["on-demand", "reservation", "capacity-block", "spot"] = "on-demand"
    reservation_id: str | None = Field(default=None, pattern=r"^[A-Za-z0-9._:/-]{1,200}$")
    efa_only_cards: bool = Field(default=True, description="AWS: secondary cards as efa-only interfaces")
    image: HostStr | None = None
    ssh_key_config: str = Field(default="sshPublicKey", pattern=r"^[a-zA-Z][a-zA-Z0-9_-]{0,63}$")


class Deployment(Model):
    target: Literal["maas", "aws", "azure", "gcp", "oci", "none"] = "none"
    maas: MaasSettings | None = None
    cloud: CloudSettings | None = None

    @model_validator(mode="after")
    def _settings(self) -> Deployment:
        if self.target in ("aws", "azure", "gcp", "oci") and self.cloud is None:
            raise ValueError(f"target {self.target} needs a `cloud:` section (at least `region`)")
        if self.target == "maas" and self.cloud is not None:
            raise ValueError("target maas takes a `maas:` section, not `cloud:`")
        return self
