from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.resolve.software import version_key
from generator.rules.base import Rule, RuleContext


class GpuNeedsNewerStack(Rule):
    """The pinned CUDA toolkit or driver branch is older than the GPU architecture supports.

    Each GPU architecture is first built by one CUDA release (Ampere 11.0, Ada and Hopper 11.8,
    Blackwell 12.8: NVIDIA's architecture compatibility guides), and each CUDA release needs a minimum
    driver (CUDA Toolkit Release Notes, "CUDA Toolkit and Corresponding Driver Versions"). A DGX B200
    pinned to driver 550 / CUDA 12.4 installs a stack that cannot run its GPUs. Blueprints that give no
    ``software:`` get the architecture's default pins instead (R570 / CUDA 12.8 for Blackwell).
    """

    id = "SFT001"
    severity = Severity.ERROR
    title = "software pins older than the GPU architecture needs"
    rationale = "The driver and CUDA must know the GPU; an older stack does not load on it."
    fix = "raise software.cuda and software.driver_branch to the architecture's minimum, or drop them"
    tags = ("software", "driver", "cuda")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        compat = cluster.catalog.software
        if compat is None:
            return
        sw = cluster.software
        seen: set[str] = set()
        for pool in cluster.gpu_pools:
            if pool.gpu is None or pool.gpu.vendor != "nvidia":
                continue
            found = compat.arch_of(pool.gpu.sm_arch)
            if found is None or found[0] in seen:
                continue
            name, arch = found
            seen.add(name)
            need = compat.cuda_drivers.get(arch.min_cuda)
            what = f"pool `{pool.name}` ({pool.gpu.name}, {name}, sm_{pool.gpu.sm_arch})"
            if version_key(sw.cuda) < version_key(arch.min_cuda):
                yield self.finding(
                    f"{what} needs CUDA {arch.min_cuda} or newer; software.cuda is {sw.cuda} ({arch.source})",
                    ("software", "cuda"),
                )
            if need is not None and int(sw.driver_branch.split(".")[0]) < need.branch:
                yield self.finding(
                    f"{what} needs driver branch {need.branch} or newer (CUDA {arch.min_cuda} needs "
                    f"{need.min_driver}); software.driver_branch is {sw.driver_branch} ({need.source})",
                    ("software", "driver_branch"),
                )
