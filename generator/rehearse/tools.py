"""The external programs a rehearsal runs, and the Debian package each comes from.

Package contents: Debian's ``frr`` installs zebra/bgpd under /usr/lib/frr and ``vtysh``;
``ibsim-utils`` installs ``ibsim`` and the umad2sim preload library; ``opensm`` the subnet manager;
``infiniband-diags`` ``ibnetdiscover`` and ``smpquery``; ``iproute2`` ``ip`` (packages.debian.org file lists).
"""

from __future__ import annotations

import glob
import os
import shutil
from pathlib import Path

FRR_DIR = Path("/usr/lib/frr")
SBIN = ("/usr/sbin", "/sbin")

# tool -> Debian package
ETHERNET_TOOLS = {"ip": "iproute2", "vtysh": "frr", "zebra": "frr", "bgpd": "frr"}
INFINIBAND_TOOLS = {
    "ip": "iproute2",
    "ibsim": "ibsim-utils",
    "libumad2sim.so": "ibsim-utils",
    "opensm": "opensm",
    "ibnetdiscover": "infiniband-diags",
    "smpquery": "infiniband-diags",
}


def umad2sim() -> str | None:
    """The umad2sim preload library of ibsim-utils (its directory is multiarch: /usr/lib/<triplet>/)."""
    hits = sorted(glob.glob("/usr/lib/*/umad2sim/libumad2sim.so")) + sorted(
        glob.glob("/usr/lib*/umad2sim/libumad2sim.so")
    )
    return hits[0] if hits else None


def tool(name: str) -> str | None:
    """Absolute path of a tool, or None. FRR's daemons are not on PATH (Debian: /usr/lib/frr)."""
    if name in ("zebra", "bgpd"):
        return str(FRR_DIR / name) if (FRR_DIR / name).exists() else None
    if name == "libumad2sim.so":
        return umad2sim()
    found = shutil.which(name)
    if found:
        return found
    return next((str(Path(d, name)) for d in SBIN if Path(d, name).exists()), None)


def must(name: str) -> str:
    path = tool(name)
    if path is None:
        raise RuntimeError(f"{name} is not installed")
    return path


def missing(tools: dict[str, str]) -> list[tuple[str, str]]:
    """(tool, Debian package) for every tool not found."""
    return [(name, package) for name, package in tools.items() if tool(name) is None]


def install_hint(absent: list[tuple[str, str]]) -> str:
    packages = sorted({p for _, p in absent})
    names = ", ".join(name for name, _ in absent)
    return f"not installed: {names}; install them with: apt-get install {' '.join(packages)}"


def is_root() -> bool:
    return os.geteuid() == 0
