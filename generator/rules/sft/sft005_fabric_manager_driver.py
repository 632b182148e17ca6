from __future__ import annotations

from collections.abc import Iterator

from blueprints.catalog.schema import for_branch
from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class FabricManagerCannotMatchDriver(Rule):
    """An exact driver version outside the pinned driver branch, on an NVSwitch system.

    NVSwitch systems (HGX/DGX baseboards) need Fabric Manager at exactly the installed driver's version;
    NVIDIA packages it per driver branch (``nvidia-fabricmanager-<branch>``, the branch being the first
    field of the driver version: NVIDIA/yum-packaging-fabric-manager). With ``driver_version`` 550.127.08
    and ``driver_branch`` 570 the role would ask for ``nvidia-fabricmanager-570`` at 550.127.08, which
    does not exist: Fabric Manager does not start and the GPUs stay uninitialised.
    """

    id = "SFT005"
    severity = Severity.ERROR
    title = "driver version and branch disagree: Fabric Manager cannot match the driver"
    rationale = "Fabric Manager must be the driver's exact version and is packaged per driver branch."
    fix = "make software.driver_version a release of software.driver_branch (or drop driver_version)"
    tags = ("software", "driver", "fabric-manager")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        compat = cluster.catalog.software
        sw = cluster.software
        if compat is None or compat.fabric_manager is None or not sw.driver_version:
            return
        branch = sw.driver_branch.split(".")[0]
        if sw.driver_version.split(".")[0] == branch:
            return
        pools = sorted(p.name for p in cluster.gpu_pools if p.server.nvswitches > 0)
        if not pools:
            return
        fm = compat.fabric_manager
        # the package of the blueprint's OS family (the same name on Debian and RedHat today, but sourced per
        # family in the catalogue's driver_packages); the Debian prefix where the OS has no entry
        pkgs = compat.driver_packages_for(sw.os)
        package = for_branch(pkgs.fabricmanager, branch) if pkgs else f"{fm.package_prefix}{branch}"
        source = f"{pkgs.source}; {fm.source}" if pkgs else fm.source
        yield self.finding(
            f"software.driver_version {sw.driver_version} is not a release of driver branch {branch}: "
            f"the NVSwitch pools ({', '.join(pools)}) need {package} (software.os {sw.os}) at exactly "
            f"{sw.driver_version}, which is not published ({source})",
            ("software", "driver_version"),
        )
