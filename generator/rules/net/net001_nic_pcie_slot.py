from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.sizing import adapters, nic_path


def _needed_slot(ctx: RuleContext, gbytes: float, lanes: int) -> str:
    """The oldest PCIe generation whose ``lanes`` carry ``gbytes`` per direction."""
    for gen, spec in sorted(ctx.cluster.catalog.interconnects.pcie.items()):
        if spec.gbytes_per_dir(lanes) >= gbytes:
            return f"PCIe Gen{gen} x{lanes} ({spec.gbytes_per_dir(lanes):g} GB/s per direction)"
    return f"more than any PCIe x{lanes} slot in the catalogue"


class NicPcieSlot(Rule):
    """A NIC whose line rate is above what its PCIe slot can carry.

    A NIC moves at most its host link: NDR 400 Gb/s = 50 GB/s per direction needs PCIe Gen5 x16
    (63 GB/s); in a Gen4 x16 slot (31.5 GB/s) it tops out near 250 Gb/s. The slot is the lower of the
    NIC's own PCIe generation and the server's, or what the spec's ``nics[].pcie`` states. Dual-port
    adapters share one slot, so both ports' rates count. PCIe figures are the catalogue's
    ``interconnects.pcie`` (PCI-SIG rates, per direction).
    """

    id = "NET001"
    severity = Severity.WARNING
    title = "NIC line rate above its PCIe slot"
    rationale = "A NIC cannot send faster than its PCIe host link; the rest of the line rate is wasted."
    fix = "put the NIC in a slot of a newer PCIe generation or more lanes, or lower its speed"
    tags = ("nic", "pcie", "bandwidth")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        for pool in cluster.pools:
            if pool.cloud is not None:
                continue
            seen: set[int] = set()
            for ad in adapters(cluster, pool):
                if not ad.ports or ad.nic_index in seen:
                    continue
                port = ad.ports[0]
                need = ad.line_gbps / 8
                if need <= port.pcie_gbytes_per_dir + 1e-9:
                    continue
                seen.add(ad.nic_index)  # one finding per NIC entry, not per adapter copy
                rate = (
                    f"{len(ad.ports)} × {port.speed_gbps:g} Gb/s = {ad.line_gbps:g} Gb/s"
                    if len(ad.ports) > 1
                    else f"{ad.line_gbps:g} Gb/s"
                )
                yield self.finding(
                    f"pool `{pool.name}`: {ad.snic.model} {rate} = {need:g} GB/s needs "
                    f"{_needed_slot(ctx, need, port.pcie_lanes)}; the slot is PCIe Gen{port.pcie_gen} "
                    f"x{port.pcie_lanes} = {port.pcie_gbytes_per_dir:g} GB/s",
                    nic_path(cluster, pool, ad.nic_index, "pcie"),
                )
