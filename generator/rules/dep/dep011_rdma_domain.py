"""DEP011: a pool larger than one RDMA domain is split, and its parts cannot talk over RDMA."""

from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class RdmaDomainSplit(Rule):
    """On Azure, InfiniBand connects only the VMs of one scale set placement group, and a scale set with a
    single placement group holds a limited number of VMs (catalogue `rdma_domain_max_vms`). A larger pool
    is split into several scale sets (tagged as scalable units `su`); jobs that span two of them fall back
    to the Ethernet network. Keep jobs inside one unit (Slurm topology) or use smaller pools."""

    id = "DEP011"
    severity = Severity.WARNING
    title = "pool exceeds one cloud RDMA domain"
    rationale = "GPU traffic between RDMA domains leaves the InfiniBand fabric"
    fix = "size pools to the RDMA domain, or schedule jobs within one scalable unit"
    tags = ("deployment", "cloud", "fabric")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        if cluster.target != "azure":
            return
        from generator.deploy.rdma_layout import rdma_domains

        for pool in cluster.pools:
            if pool.cloud is None or not pool.cloud.rdma_domain_max_vms:
                continue
            parts = rdma_domains(pool.count, pool.cloud.rdma_domain_max_vms)
            if len(parts) > 1:
                yield self.finding(
                    f"pool `{pool.name}` has {pool.count} VMs but one InfiniBand domain (scale set "
                    "placement group) "
                    f"holds at most {pool.cloud.rdma_domain_max_vms}: it becomes {len(parts)} scale sets of "
                    f"{'/'.join(str(n) for n in parts)} VMs that cannot use InfiniBand between each other",
                    (*pool.source_path, "count"),
                )
