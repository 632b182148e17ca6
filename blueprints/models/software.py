"""Pinned software versions."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from blueprints.models.base import Model, VersionStr


class OfedPin(Model):
    kind: Literal["doca", "mlnx", "inbox"] = "doca"
    version: VersionStr = "2.9.1"


class Software(Model):
    os: Literal["ubuntu-22.04", "ubuntu-24.04", "rhel-9", "rocky-9", "debian-12"] = "ubuntu-22.04"
    driver_branch: VersionStr = Field(default="550", description="NVIDIA driver branch, e.g. 550 or 570")
    driver_version: VersionStr | None = Field(default=None, description="exact version, e.g. 550.127.08")
    cuda: VersionStr = "12.4"
    nccl: VersionStr = "2.21.5"
    ofed: OfedPin = Field(default_factory=OfedPin)
    nccl_tests: VersionStr = "2.13.11"
