from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.sizing import server_path


class InjectionVsNvlink(Rule):
    """Network injection bandwidth per GPU compared with its NVLink bandwidth.

    Collectives that span nodes (data-parallel AllReduce, pipeline sends) run at the network's speed;
    collectives inside an NVLink domain run at NVLink's. The ratio of the two tells how much slower
    inter-node communication is: a DGX H100 has 450 GB/s of NVLink 4 per GPU per direction and one NDR
    NIC per GPU (400 Gb/s = 50 GB/s), 9:1. Designs above that ratio (e.g. DGX A100 with HDR: 300 GB/s
    vs 25 GB/s = 12:1) lean harder on keeping tensor parallelism inside the node and on overlapping
    communication with compute. Information, with the ratio.
    """

    id = "NET003"
    severity = Severity.INFO
    title = "network injection per GPU far below NVLink"
    rationale = (
        "Inter-node collectives run at the network's speed; a large NVLink:network ratio makes "
        "them the bottleneck."
    )
    fix = (
        "keep tensor parallelism inside the NVLink domain, overlap communication, or add NIC "
        "bandwidth per GPU"
    )
    tags = ("bandwidth", "nvlink", "nic")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        from blueprints.catalog.advice import advice

        cluster = ctx.cluster
        if "compute" not in cluster.fabrics:
            return
        limit = advice().nvlink_to_injection_ratio
        for pool in cluster.gpu_pools:
            ports = pool.ports_for("compute")
            nv = pool.nvlink_gbytes_per_gpu_dir
            if not ports or nv <= 0 or pool.server.gpus == 0:
                continue
            inj_gbit = sum(p.speed_gbps for p in ports) / pool.server.gpus
            inj = inj_gbit / 8
            ratio = nv / inj
            if ratio <= limit + 1e-9:
                continue
            yield self.finding(
                f"pool `{pool.name}`: {inj_gbit:g} Gb/s = {inj:g} GB/s of network injection per GPU vs "
                f"{nv:g} GB/s NVLink {pool.nvlink_generation}.0 per direction: {ratio:.1f}:1 "
                f"(a DGX H100 on NDR is {limit:g}:1)",
                server_path(cluster, pool, "nics"),
            )
