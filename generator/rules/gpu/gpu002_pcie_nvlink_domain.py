from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.sizing import server_path


class PcieNvlinkDomain(Rule):
    """A PCIe-only GPU cannot be part of an NVLink domain larger than its bridge allows.

    PCIe cards such as the L40S have no NVLink; the H100 PCIe joins at most 2 GPUs with an NVLink bridge
    (the catalogue's ``nvlink_bridge_gpus``). A server built from them has NVLink domains of 1 (or 2)
    GPUs, and everything else crosses PCIe (64 GB/s for PCIe 4.0 x16, 128 GB/s for PCIe 5.0 x16 in the
    article's bidirectional figures) instead of hundreds of GB/s. Tensor parallelism sized for an 8-GPU
    NVLink domain will run at PCIe speed.
    """

    id = "GPU002"
    severity = Severity.ERROR
    title = "PCIe-only GPUs with an NVLink domain they cannot have"
    rationale = (
        "PCIe cards reach each other over PCIe (tens of GB/s), not an NVSwitch domain (hundreds of GB/s)."
    )
    fix = "set nvlink_domain_gpus to the bridge size (1 without a bridge, 2 for bridged H100 PCIe pairs)"
    tags = ("gpu", "nvlink", "pcie")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        for pool in cluster.gpu_pools:
            gpu, server = pool.gpu, pool.server
            if gpu is None or gpu.nvlink is not None or gpu.vendor != "nvidia" or pool.cloud is not None:
                continue
            allowed = max(gpu.nvlink_bridge_gpus, 1)
            if server.nvlink_domain_gpus > allowed:
                pcie = cluster.catalog.interconnects.pcie.get(gpu.pcie_gen) if gpu.pcie_gen else None
                pcie_text = (
                    f"; its GPUs talk over PCIe {gpu.pcie_gen}.0 x{gpu.pcie_lanes} "
                    f"({pcie.gbytes_per_dir(gpu.pcie_lanes):g} GB/s per direction)"
                    if pcie and gpu.pcie_lanes
                    else f"; its GPUs talk over PCIe {gpu.pcie_gen}.0"
                    if gpu.pcie_gen
                    else "; its GPUs talk over PCIe"
                )
                bridge = (
                    f"an NVLink bridge joins at most {gpu.nvlink_bridge_gpus} GPUs"
                    if gpu.nvlink_bridge_gpus
                    else "it has no NVLink"
                )
                yield self.finding(
                    f"pool `{pool.name}`: {gpu.name} is a PCIe card ({bridge}) but the NVLink domain is "
                    f"{server.nvlink_domain_gpus} GPUs{pcie_text}",
                    server_path(cluster, pool, "nvlink_domain_gpus"),
                    f"set nvlink_domain_gpus: {allowed}",
                )
