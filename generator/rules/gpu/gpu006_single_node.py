from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class SingleNode(Rule):
    """A cluster of one GPU node: the article's single-node limits apply.

    The article: one server holds 1–8 GPUs and about 640 GB of GPU memory, cannot scale past one box, and
    the box is a single point of failure. It fits LoRA/QLoRA fine-tuning of 7B–70B models, training below
    ~10B parameters, research and inference. Growing beyond it means a multi-node design with an
    InfiniBand or RoCE fabric. This is information: it states the limits with the node's own numbers.
    """

    id = "GPU006"
    severity = Severity.INFO
    title = "single node: limited scale, single point of failure"
    rationale = "One server cannot grow past its GPUs and memory, and its failure stops all work."
    fix = "for more scale or availability add nodes and a compute fabric (fabrics.compute)"
    tags = ("gpu", "article", "availability")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        pools = cluster.gpu_pools
        if cluster.gpu_node_count != 1 or not pools:
            return
        pool = pools[0]
        mem = pool.gpu_memory_per_node_gb
        yield self.finding(
            f"one node (`{pool.name}`): {pool.server.gpus} GPUs and {mem:,.0f} GB of GPU memory is the "
            "ceiling; "
            "it cannot scale past one box and is a single point of failure",
            (*pool.source_path, "count"),
        )
