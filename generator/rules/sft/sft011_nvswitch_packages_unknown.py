from __future__ import annotations

from collections.abc import Iterator

from blueprints.catalog.schema import NvswitchPackage
from generator.findings import Finding, Severity
from generator.platform.ports import ships_driver
from generator.rules.base import Rule, RuleContext

NVSWITCH_PACKAGES: tuple[NvswitchPackage, ...] = ("fabricmanager", "nscq")


class NvswitchPackagesUnknown(Rule):
    """No known Fabric Manager or NSCQ package for the driver branch of an NVSwitch system.

    NVSwitch baseboards (HGX/DGX H100, H200, B200) need Fabric Manager and the NSCQ library, which the
    ``nvidia_driver`` role installs from NVIDIA's CUDA repository at the driver's exact version. Their names
    depend on the OS family and the driver branch: on Ubuntu ``nvidia-fabricmanager-<branch>`` up to 579 and
    ``nvidia-fabricmanager`` from 580 (NVIDIA/gpu-driver-container ``fabricmanager_install``; catalogue
    ``data/software.yaml`` ``driver_packages[].fabricmanager`` / ``nscq``). For a branch outside the ranges a
    public source names, the generator does not guess: the blueprint names the packages in
    ``software.fabricmanager_package`` / ``software.nscq_package``, or the role would stop before the
    install. Pools on a platform image that ships the driver keep the image's Fabric Manager and need no name.
    """

    id = "SFT011"
    severity = Severity.ERROR
    title = "Fabric Manager / NSCQ package of the driver branch unknown"
    rationale = (
        "NVIDIA renamed Fabric Manager and NSCQ between branches; an unrecorded branch has no known name."
    )
    fix = (
        "set software.fabricmanager_package / software.nscq_package to the packages of "
        "software.driver_branch in NVIDIA's repository for software.os"
    )
    tags = ("software", "driver", "fabric-manager", "nvswitch")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        compat = cluster.catalog.software
        sw = cluster.software
        pkgs = compat.driver_packages_for(sw.os) if compat is not None else None
        if pkgs is None:
            return
        pools = sorted(
            p.name
            for p in cluster.gpu_pools
            if p.server.nvswitches > 0 and not ships_driver(cluster.catalog, p.server_id)
        )
        declared = {"fabricmanager": sw.fabricmanager_package, "nscq": sw.nscq_package}
        missing = [
            which
            for which in NVSWITCH_PACKAGES
            if not declared[which] and pkgs.nvswitch_for(which, sw.driver_branch) is None
        ]
        if not pools or not missing:
            return
        known = "; ".join(
            f"{which}: " + ", ".join(f"{p.first} to {p.last} {p.name}" for p in getattr(pkgs, which))
            for which in missing
        )
        yield self.finding(
            f"software.driver_branch {sw.driver_branch}: no {' or '.join(missing)} package is recorded "
            f"for it on {sw.os}, and the NVSwitch pools ({', '.join(pools)}) install them at the driver "
            "version "
            f"(catalog:software.driver_packages knows branches {known}); set "
            + " and ".join(f"software.{which}_package" for which in missing),
            ("software", "driver_branch"),
        )
