"""Pinned software versions."""

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from blueprints.models.base import Model, VersionStr

# A package name a blueprint declares where the catalogue knows none (Debian policy 5.6.1: lower case,
# digits, '+', '-', '.', starting alphanumeric), bounded: it reaches apt/dnf through Ansible as data.
PackageName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9.+-]*$", max_length=100)]


class OfedPin(Model):
    kind: Literal["doca", "mlnx", "inbox"] = "doca"
    """RDMA stack: doca (DOCA-OFED), mlnx (MLNX_OFED) or inbox (the distribution's)"""
    version: VersionStr = "2.9.1"
    """version of that stack, e.g. 2.9.1"""


class Software(Model):
    os: Literal["ubuntu-22.04", "ubuntu-24.04", "rhel-9", "rocky-9", "debian-12"] = "ubuntu-22.04"
    """operating system of the nodes"""
    # the branch's number alone: the nvidia_driver role names packages with it (cuda-drivers-<branch>,
    # nvidia-imex-<branch>) and compares it as a number, as the rules do with each architecture's and
    # CUDA release's minimum ("550-server" ended SFT001 in an internal error); driver_version is the release
    driver_branch: str = Field(
        default="550", pattern=r"^[0-9]{3,4}$", description="NVIDIA driver branch, e.g. 550 or 570"
    )
    driver_version: VersionStr | None = Field(default=None, description="exact version, e.g. 550.127.08")
    # multi-node NVLink domains (GB200 NVL72) only: the catalogue names the IMEX package of the branches a
    # public source names (data/software.yaml imex:); for another branch the blueprint says it (SFT010)
    imex_package: PackageName | None = Field(
        default=None,
        description="NVIDIA IMEX package of driver_branch in NVIDIA's repository, e.g. nvidia-imex; "
        "where the catalogue does not know it",
    )
    # NVSwitch systems only: the catalogue names Fabric Manager and NSCQ for the branches a public source
    # names (data/software.yaml driver_packages[].fabricmanager / nscq); for another branch the blueprint
    # says them (SFT011)
    fabricmanager_package: PackageName | None = Field(
        default=None,
        description="NVIDIA Fabric Manager package of driver_branch in NVIDIA's repository for software.os, "
        "e.g. nvidia-fabricmanager; where the catalogue does not know it",
    )
    nscq_package: PackageName | None = Field(
        default=None,
        description="NVIDIA NSCQ library package of driver_branch in NVIDIA's repository for software.os, "
        "e.g. libnvidia-nscq; where the catalogue does not know it",
    )
    # the Slurm files depend on the release: Slurm gives each job its own IMEX channel from the release of
    # catalog:software.imex.slurm_switch on; unknown, the build cannot configure it (SLM001)
    slurm: VersionStr | None = Field(
        default=None, description="Slurm release the cluster runs, e.g. 24.11.1; None: not known"
    )
    # multi-node NVLink domains only: per-job isolates jobs' memory imports; shared is NVIDIA's setting for
    # a trusted, single-user cluster (driver parameter NVreg_CreateImexChannel0)
    imex_channels: Literal["per-job", "shared"] = Field(
        default="per-job",
        description="IMEX channels of multi-node NVLink domains: per-job (Slurm gives each job its own, "
        "from the release in the catalogue) or shared (channel 0 for every job, a trusted single-user site)",
    )
    cuda: VersionStr = "12.4"
    """CUDA toolkit version, e.g. 12.4"""
    nccl: VersionStr = "2.21.5"
    """NCCL version, e.g. 2.21.5"""
    ofed: OfedPin = Field(default_factory=dict, validate_default=True)  # its defaults: base.py
    """RDMA stack and its version"""
    nccl_tests: VersionStr = "2.13.11"
    """nccl-tests version used for acceptance tests"""
