"""Shared storage the cluster mounts."""

import re
from typing import Literal

from pydantic import Field, model_validator

from blueprints.models.base import HostStr, Model, PathStr, SafeName, empty_list

# A mount option as /etc/fstab holds it (fstab(5): fields split at blanks, options at commas, `#` opens a
# comment where ansible.posix.mount reads a line back): the characters real options use (noatime,
# vers=4.1, x-systemd.requires=weka-agent.service, net=mlx5_0/10.0.0.1/24, cfgFile=/etc/beegfs/...)
_MOUNT_OPTION = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.=:/+@~-]{0,255}", re.ASCII)
# Directories the operating system itself lives in (Filesystem Hierarchy Standard 3.0, "The Root Filesystem"
# and the Linux annex's /proc, /sys and /lib<qual>): the generated playbook makes the mount point mode 0755
# and writes its fstab line, so a storage mounted on one replaced the root's fstab entry (`/`) or made /tmp
# root-only. /home, /opt, /srv, /mnt and /media are where shared storage goes.
SYSTEM_DIRECTORIES = frozenset(
    {"/", "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/root", "/run"}
    | {"/sbin", "/sys", "/tmp", "/usr", "/var"}
)


def mount_point_problem(path: str) -> str | None:
    """Why ``path`` (already an absolute path of safe characters) is not a mount point to write, or None."""
    parts = path.split("/")[1:]
    if path != "/" and ("" in parts or "." in parts or ".." in parts):
        return "write it plainly: no `.` or `..` parts, no `//`, no trailing `/`"
    if path in SYSTEM_DIRECTORIES:
        return "the system lives there (FHS 3.0): mount shared storage under /home, /opt, /srv or /mnt"
    return None


class SharedStorage(Model):
    name: SafeName
    """storage name: lower-case letters, digits and dashes"""
    kind: Literal["nfs", "lustre", "beegfs", "weka", "gpfs", "vast", "managed"] = Field(
        description="`managed` = the cloud's own (FSx for Lustre, Azure Managed Lustre, Filestore, OCI FSS)"
    )
    mount: PathStr
    """absolute mount point on the nodes, e.g. /lustre/scratch"""
    server: HostStr | None = Field(default=None, description="NFS server, Lustre MGS NID host, BeeGFS mgmtd")
    export: PathStr | None = Field(default=None, description="NFS export path")
    filesystem: SafeName | None = Field(default=None, description="Lustre fsname / BeeGFS instance")
    options: list[str] = Field(default_factory=empty_list, max_length=32)
    """mount options, e.g. [noatime, flock]"""
    capacity_tib: float | None = Field(default=None, gt=0, le=1_000_000)
    """usable capacity in TiB (cloud managed storage is sized from it)"""
    throughput_gbytes: float | None = Field(default=None, gt=0, le=100_000)
    """aggregate throughput in GB/s"""
    pool: SafeName | None = Field(default=None, description="storage node pool that serves it (on-prem)")

    @model_validator(mode="after")
    def _needs(self) -> "SharedStorage":
        problem = mount_point_problem(self.mount)
        if problem:
            raise ValueError(f"mount `{self.mount}`: {problem}")
        if self.kind == "nfs" and self.export is None:
            raise ValueError("an nfs storage needs `export` (the exported path)")
        if self.kind in ("nfs", "lustre", "beegfs") and self.server is None and self.pool is None:
            raise ValueError(f"a {self.kind} storage needs `server` or `pool`")
        for opt in self.options:
            if not _MOUNT_OPTION.fullmatch(opt):
                shown = opt if opt.isascii() and opt.isprintable() else ascii(opt)
                raise ValueError(
                    f"mount option `{shown[:80]}` is not one fstab can hold: letters, digits and "
                    "_ . = : / + @ ~ - (no spaces, quotes, commas, `#`, control characters or templating)"
                )
        return self
