from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.resolve.software import version_key
from generator.rules.base import Rule, RuleContext


class CudaNeedsNewerDriver(Rule):
    """The pinned driver branch is older than the pinned CUDA toolkit's minimum driver.

    NVIDIA's CUDA Toolkit Release Notes list the minimum Linux driver of every toolkit release. Within
    one CUDA major release, minor version compatibility lets most applications run on an older driver of
    the same major family, but features that need the newer driver (and PTX compiled by the newer
    toolkit) fail at run time, so this is a warning; across major releases the toolkit does not run.
    """

    id = "SFT002"
    severity = Severity.WARNING
    title = "driver branch older than the CUDA toolkit's minimum driver"
    rationale = "CUDA applications fail to start or lose features on a driver older than their toolkit needs."
    fix = "raise software.driver_branch to the CUDA release's driver branch, or pin an older CUDA"
    tags = ("software", "driver", "cuda")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        compat = cluster.catalog.software
        if compat is None or not cluster.gpu_pools:
            return
        sw = cluster.software
        known = sorted(compat.cuda_drivers, key=version_key)
        # the newest listed release not newer than the pinned one (12.6 is judged by 12.4's driver)
        release = next((r for r in reversed(known) if version_key(r) <= version_key(sw.cuda)), None)
        if release is None:
            return
        need = compat.cuda_drivers[release]
        branch = int(sw.driver_branch.split(".")[0])
        if branch >= need.branch:
            return
        major_gap = version_key(release)[0] > version_key(known[0])[0] and branch < min(
            d.branch for r, d in compat.cuda_drivers.items() if version_key(r)[0] == version_key(release)[0]
        )
        yield self.finding(
            f"software.cuda {sw.cuda} needs driver {need.min_driver} or newer (branch {need.branch}); "
            f"software.driver_branch is {branch} ({need.source})",
            ("software", "driver_branch"),
            severity=Severity.ERROR if major_gap else None,
        )
