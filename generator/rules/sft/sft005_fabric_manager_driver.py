from __future__ import annotations

from collections.abc import Iterator

from blueprints.catalog.schema import SoftwareCompat, for_branch
from blueprints.models.software import Software
from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class FabricManagerCannotMatchDriver(Rule):
    """An exact driver version outside the pinned driver branch, on an NVSwitch system.

    NVSwitch systems (HGX/DGX baseboards) need Fabric Manager at exactly the installed driver's version
    (NVIDIA/yum-packaging-fabric-manager), installed from the package of the pinned branch (the catalogue's
    ``driver_packages[].fabricmanager`` per OS family and branch range, e.g. ``nvidia-fabricmanager-570`` on
    Ubuntu). With ``driver_version`` 550.127.08 and ``driver_branch`` 570 the role would ask for
    ``nvidia-fabricmanager-570`` at 550.127.08, which does not exist: Fabric Manager does not start and the
    GPUs stay uninitialised.
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
        package, source = _fabric_manager(sw, compat, branch)
        yield self.finding(
            f"software.driver_version {sw.driver_version} is not a release of driver branch {branch}: "
            f"the NVSwitch pools ({', '.join(pools)}) need {package} (software.os {sw.os}) at exactly "
            f"{sw.driver_version}, which is not published ({source}; {compat.fabric_manager.source})",
            ("software", "driver_version"),
        )


def _fabric_manager(sw: Software, compat: SoftwareCompat, branch: str) -> tuple[str, str]:
    """The Fabric Manager package of ``branch`` for the blueprint's OS and its source: the blueprint's
    software.fabricmanager_package, else the catalogue's range for the branch (driver_packages), else a
    description (SFT011 asks for the name)."""
    if sw.fabricmanager_package:
        return sw.fabricmanager_package, "software.fabricmanager_package"
    pkgs = compat.driver_packages_for(sw.os)
    entry = pkgs.nvswitch_for("fabricmanager", branch) if pkgs is not None else None
    if entry is None:
        return f"the Fabric Manager package of branch {branch}", "no name recorded for it: SFT011"
    return for_branch(entry.name, branch), entry.source
