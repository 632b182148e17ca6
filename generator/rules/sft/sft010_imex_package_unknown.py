from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.platform.ports import ships_driver
from generator.rules.base import Rule, RuleContext


class ImexPackageUnknown(Rule):
    """No known NVIDIA IMEX package for the driver branch of a multi-node NVLink domain.

    Pools whose NVLink domain spans nodes (GB200 NVL72: 18 trays of 4 GPUs) run NVIDIA IMEX, which the
    ``nvidia_imex`` role installs from NVIDIA's CUDA repository at the driver's exact version. The package's
    name depends on the driver branch: ``nvidia-imex-<branch>`` up to 579 and ``nvidia-imex`` from 580
    (NVIDIA/gpu-driver-container ``imex_install``, catalogue ``data/software.yaml`` ``imex:``). For a branch
    outside the ranges a public source names, the generator does not guess: the blueprint names the
    package in ``software.imex_package``, or the role would stop at the install. Pools on a platform image
    that ships the driver keep the image's IMEX and need no name.
    """

    id = "SFT010"
    severity = Severity.ERROR
    title = "IMEX package of the driver branch unknown"
    rationale = (
        "The IMEX package name changed with the driver branch; an unrecorded branch has no known name."
    )
    fix = "set software.imex_package to the IMEX package of software.driver_branch in NVIDIA's repository"
    tags = ("software", "driver", "imex", "nvlink")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        compat = cluster.catalog.software
        sw = cluster.software
        if compat is None or compat.imex is None or sw.imex_package:
            return
        pools = sorted(
            p.name
            for p in cluster.gpu_pools
            if p.server.nodes_per_nvlink_domain > 1 and not ships_driver(cluster.catalog, p.server_id)
        )
        if not pools or compat.imex.package_for(sw.driver_branch) is not None:
            return
        known = ", ".join(f"{p.first} to {p.last}: {p.name}" for p in compat.imex.packages)
        yield self.finding(
            f"software.driver_branch {sw.driver_branch}: no IMEX package is recorded for it, and the pools "
            f"whose NVLink domain spans nodes ({', '.join(pools)}) install IMEX at the driver version "
            f"(catalog:software.imex knows branches {known})",
            ("software", "driver_branch"),
        )
