from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.sizing import server_path


class NodeMemoryClass(Rule):
    """GPU memory per node compared with the article's ~640 GB (8 × 80 GB) class.

    The article sizes single-node work (LoRA/QLoRA of 7B–70B models, training below ~10B) for a node of
    about 640 GB of GPU memory. Nodes with much more (8 × 141 GB H200 = 1,128 GB, 8 × 180 GB B200 =
    1,440 GB) hold larger models on one node than the article's advice assumes; the workload rules use
    the real figure. This is information, not a fault.
    """

    id = "GPU004"
    severity = Severity.INFO
    title = "GPU memory per node beyond the article's 640 GB class"
    rationale = "The article's single-node advice assumes about 640 GB (8 × 80 GB) of GPU memory per node."
    fix = "nothing to fix; size workloads with the node's real memory (the WRK rules do)"
    tags = ("gpu", "memory", "article")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        from blueprints.catalog.advice import advice

        cluster, limit = ctx.cluster, advice().node_memory_class_gb
        for pool in cluster.gpu_pools:
            mem = pool.gpu_memory_per_node_gb
            if pool.gpu is None or mem <= limit:
                continue
            yield self.finding(
                f"pool `{pool.name}`: {pool.server.gpus} × {pool.gpu.memory_gb:g} GB = {mem:,.0f} GB "
                "of GPU memory per node, "
                f"{mem / limit:.2f}× the article's {limit:g} GB (8 × 80 GB) class",
                server_path(cluster, pool, "gpu"),
            )
