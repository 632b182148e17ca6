from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.sizing import server_path


class PcieGeneration(Rule):
    """A PCIe GPU interconnect faster than the GPU's own PCIe generation.

    A PCIe link trains to the lower generation of its two ends. An L40S is a PCIe 4.0 device: in a
    PCIe 5.0 server it still moves 31.5 GB/s per direction on x16, not 63 GB/s (PCI-SIG rates in the
    catalogue's ``interconnects.pcie``). Stating pcie5 overstates GPU-to-GPU bandwidth by 2×.
    """

    id = "GPU005"
    severity = Severity.WARNING
    title = "PCIe interconnect newer than the GPU supports"
    rationale = "PCIe links run at the lower generation of the two ends."
    fix = "set gpu_interconnect to the GPU's PCIe generation"
    tags = ("gpu", "pcie")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        pcie = cluster.catalog.interconnects.pcie
        for pool in cluster.gpu_pools:
            gpu, ic = pool.gpu, pool.server.gpu_interconnect
            if gpu is None or not ic.startswith("pcie"):
                continue
            gen = int(ic[4:])
            if gpu.pcie_gen is None:
                # no vendor text gives one (GB200's host link is NVLink-C2C): nothing to check against,
                # and the performance model refuses the PCIe path (PRF005 says so)
                yield self.finding(
                    f"pool `{pool.name}`: the catalogue gives {gpu.name} no PCIe generation (gpus.yaml "
                    f"pcie_gen), so PCIe {gen}.0 between its GPUs cannot be checked",
                    server_path(cluster, pool, "gpu_interconnect"),
                    "declare the GPU's pcie_gen in the blueprint's catalog file, or use its own interconnect",
                )
                continue
            if gen <= gpu.pcie_gen:
                continue
            lanes = gpu.pcie_lanes
            rates = (
                f" ({pcie[gpu.pcie_gen].gbytes_per_dir(lanes):g} GB/s per direction on x{lanes})"
                if lanes
                else ""
            )
            said = f" ({pcie[gen].gbytes_per_dir(lanes):g} GB/s)" if lanes else ""
            yield self.finding(
                f"pool `{pool.name}`: {gpu.name} is a PCIe {gpu.pcie_gen}.0 device{rates} but the "
                f"interconnect says PCIe {gen}.0{said}",
                server_path(cluster, pool, "gpu_interconnect"),
                f"set gpu_interconnect: pcie{gpu.pcie_gen}",
            )
