from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class OfedDoesNotDriveNic(Rule):
    """The pinned OFED stack does not support a NIC the cluster uses.

    NVIDIA's DOCA documentation (v2.9.2, "Changes and New Features" and "General Support"): BlueField-3
    needs DOCA-Host (MLNX_OFED does not support it), ConnectX-7 is the last ConnectX MLNX_OFED supports,
    and the DOCA 2.9 LTS line does not support ConnectX-8. A node with such a NIC would come up
    without its RDMA devices.
    """

    id = "SFT003"
    severity = Severity.ERROR
    title = "OFED stack does not support a NIC in the cluster"
    rationale = "Without a driver for the adapter the host has no RDMA device on that port."
    fix = "pin software.ofed to a DOCA-Host release that supports the NIC (kind: doca)"
    tags = ("software", "ofed")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        compat = cluster.catalog.software
        if compat is None:
            return
        ofed = cluster.software.ofed
        models = {p.model for pool in cluster.pools for p in pool.ports}
        for limit in compat.ofed_nic_limits:
            if limit.ofed != ofed.kind or limit.nic not in models:
                continue
            if limit.version_prefix and not (
                ofed.version == limit.version_prefix or ofed.version.startswith(limit.version_prefix + ".")
            ):
                continue
            pools = sorted(
                pool.name for pool in cluster.pools if any(p.model == limit.nic for p in pool.ports)
            )
            nic = cluster.catalog.nics.get(limit.nic)
            yield self.finding(
                f"software.ofed {ofed.kind} {ofed.version} does not support {nic.name if nic else limit.nic} "
                f"(pools {', '.join(pools)}): {limit.source}",
                ("software", "ofed", "kind" if limit.version_prefix is None else "version"),
            )
