"""Pinned software versions."""

from typing import Literal

from pydantic import Field

from blueprints.models.base import Model, VersionStr


class OfedPin(Model):
    kind: Literal["doca", "mlnx", "inbox"] = "doca"
    """RDMA stack: doca (DOCA-OFED), mlnx (MLNX_OFED) or inbox (the distribution's)"""
    version: VersionStr = "2.9.1"
    """version of that stack, e.g. 2.9.1"""


class Software(Model):
    os: Literal["ubuntu-22.04", "ubuntu-24.04", "rhel-9", "rocky-9", "debian-12"] = "ubuntu-22.04"
    """operating system of the nodes"""
    # the branch's number alone: the nvidia_driver role names packages with it (cuda-drivers-<branch>,
    # nvidia-fabricmanager-<branch>) and compares it as a number, as the rules do with each architecture's and
    # CUDA release's minimum ("550-server" ended SFT001 in an internal error); driver_version is the release
    driver_branch: str = Field(
        default="550", pattern=r"^[0-9]{3,4}$", description="NVIDIA driver branch, e.g. 550 or 570"
    )
    driver_version: VersionStr | None = Field(default=None, description="exact version, e.g. 550.127.08")
    cuda: VersionStr = "12.4"
    """CUDA toolkit version, e.g. 12.4"""
    nccl: VersionStr = "2.21.5"
    """NCCL version, e.g. 2.21.5"""
    ofed: OfedPin = Field(default_factory=dict, validate_default=True)  # its defaults: base.py
    """RDMA stack and its version"""
    nccl_tests: VersionStr = "2.13.11"
    """nccl-tests version used for acceptance tests"""
