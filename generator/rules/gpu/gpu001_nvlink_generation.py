from __future__ import annotations

from collections.abc import Iterator

from blueprints.catalog.schema import Gpu
from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.sizing import server_path


class NvlinkGeneration(Rule):
    """The GPU interconnect a server claims must be one its GPU has.

    NVLink generations are tied to GPU generations: V100 uses NVLink 2.0, A100 NVLink 3.0, H100 and H200
    NVLink 4.0, B200 and GB200 NVLink 5.0 (the catalogue's ``gpus.*.nvlink.generation``). A PCIe-only
    GPU (L40S, H100 PCIe) has no NVLink fabric at all, an AMD GPU uses Infinity Fabric, and an NVIDIA GPU
    cannot use Infinity Fabric. The per-GPU bandwidth the other rules and the performance model use comes
    from this generation, so a wrong one makes every intra-node figure wrong.
    """

    id = "GPU001"
    severity = Severity.ERROR
    title = "GPU interconnect does not match the GPU"
    rationale = (
        "Each GPU supports exactly one NVLink generation (or none); a mismatch misstates "
        "intra-node bandwidth."
    )
    fix = (
        "set gpu_interconnect to the GPU's own NVLink generation (V100 nvlink2, A100 nvlink3, "
        "H100/H200 nvlink4, B200/GB200 nvlink5) or its PCIe generation"
    )
    tags = ("gpu", "nvlink")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        nvlink = cluster.catalog.interconnects.nvlink
        for pool in cluster.gpu_pools:
            gpu, ic = pool.gpu, pool.server.gpu_interconnect
            if gpu is None or pool.cloud is not None:
                continue
            path = server_path(cluster, pool, "gpu_interconnect")
            name = f"pool `{pool.name}`: {gpu.name}"
            if ic.startswith("nvlink"):
                gen = int(ic[6:])
                if gpu.nvlink is None:
                    yield self.finding(
                        f"{name} has no NVLink ({_pcie_part(gpu)}) but the interconnect is "
                        f"NVLink {gen}.0"
                        + (
                            f" ({nvlink[gen].article_per_gpu_gbytes:g} GB/s per GPU)" if gen in nvlink else ""
                        ),
                        path,
                        "use infinity-fabric (AMD's GPU link)" if gpu.vendor == "amd" else _pcie_hint(gpu),
                    )
                elif gpu.nvlink.generation != gen:
                    have = nvlink.get(gpu.nvlink.generation)
                    have_text = f", {have.article_per_gpu_gbytes:g} GB/s per GPU" if have else ""
                    yield self.finding(
                        f"{name} uses NVLink {gpu.nvlink.generation}.0 ({gpu.nvlink.links} links{have_text}) "
                        f"but the interconnect says NVLink {gen}.0"
                        + (f" ({nvlink[gen].article_per_gpu_gbytes:g} GB/s)" if gen in nvlink else ""),
                        path,
                        f"set gpu_interconnect: nvlink{gpu.nvlink.generation}",
                    )
            elif ic == "infinity-fabric" and gpu.vendor != "amd":
                yield self.finding(
                    f"{name} is an NVIDIA GPU; Infinity Fabric is AMD's GPU interconnect",
                    path,
                    f"use nvlink{gpu.nvlink.generation}" if gpu.nvlink else _pcie_hint(gpu),
                )
            elif gpu.vendor == "amd" and ic != "infinity-fabric" and not ic.startswith("pcie"):
                yield self.finding(
                    f"{name} is an AMD GPU; it has no {ic}", path, "use infinity-fabric or pcie5"
                )


def _pcie_part(gpu: Gpu) -> str:
    return f"a PCIe {gpu.pcie_gen}.0 part" if gpu.pcie_gen else "the catalogue gives it no PCIe generation"


def _pcie_hint(gpu: Gpu) -> str:
    """What to use for a GPU without NVLink: its PCIe generation, or, where none is catalogued, declare it."""
    if gpu.pcie_gen:
        return f"use pcie{gpu.pcie_gen} for this GPU"
    return "declare the GPU's pcie_gen in the blueprint's catalog file and use that PCIe generation"
