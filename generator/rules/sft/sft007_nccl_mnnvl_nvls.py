from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class NcclWithoutNvlsAcrossTrays(Rule):
    """The pinned NCCL runs no NVLS inside an NVLink domain that spans nodes.

    On servers whose NVLink domain spans several nodes (GB200 NVL72: 18 trays of 4 GPUs), NCCL releases
    before 2.21 turn NVLink SHARP (NVLS) off for any communicator spanning trays unless IB SHARP (CollNet) is
    available: tuning.cc 2.20.3 ``if (comm->nNodes > 1 || comm->MNNVL) algoEnable[NVLS] = 0`` ("MNNVL: NVLS
    not yet supported"). From 2.21 (tuning.cc 2.21.5) a domain counts as one node and a job inside it runs
    NVLS (perf.yaml ``mnnvl_nvls_min_release``). Without it, all_reduce across trays runs rings bound by the
    NVLink bandwidth NCCL counts; published GB200/GB300 runs with NVLS on reach 607 GB/s at 128 MiB on two
    trays where the model's ring gives 424 (docs/performance.md). ``blueprint estimate`` shows the difference
    with ``--nccl-version``.
    """

    id = "SFT007"
    severity = Severity.WARNING
    title = "NCCL release runs no NVLS across the trays of an NVLink domain"
    rationale = "Collectives spanning trays of a multi-node NVLink domain run rings instead of NVLS."
    fix = "pin software.nccl to 2.21 or later (a release built for the pinned CUDA, see SFT004)"
    tags = ("software", "nccl", "nvlink", "performance")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        pools = [
            p
            for p in cluster.gpu_pools
            if p.gpu is not None and p.gpu.nvls and p.server.nodes_per_nvlink_domain > 1
        ]
        if not pools:
            return  # before importing the performance model: most blueprints have no multi-node NVLink domain
        from blueprints.catalog.perf import perf_data
        from generator.perf.system import ib_sharp, mnnvl_nvls, mnnvl_nvls_first_release

        perf = perf_data()
        version = cluster.software.nccl
        if mnnvl_nvls(version, perf) or ib_sharp(cluster):
            return
        first = mnnvl_nvls_first_release(perf)
        for pool in pools:
            server = pool.server
            nodes = server.nodes_per_nvlink_domain
            yield self.finding(
                f"software.nccl {version} predates NCCL {first}: pool `{pool.name}`'s NVLink domain of "
                f"{server.nvlink_domain_gpus} GPUs spans {nodes} nodes of {server.gpus}, and collectives "
                f"across them run rings, not NVLS (tuning.cc before {first}: "
                '"MNNVL: NVLS not yet supported")',
                ("software", "nccl"),
            )
