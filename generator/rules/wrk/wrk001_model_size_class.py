from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.sizing import params_text

TRAINING = ("pretrain", "full-finetune")
SCOPE_TEXT = {"gpu": "one GPU", "node": "one node with several GPUs", "nodes": "several nodes"}


class ModelSizeClass(Rule):
    """The cluster is smaller than the article's class for the model size.

    The article's selection by model size: below 7B parameters one GPU; 7B–70B one node with several
    GPUs; above 70B several nodes (training-time targets and budget refine the choice). A cluster below
    the class for a pre-training or full fine-tune is a warning; for LoRA, QLoRA and inference, which
    the article fits on a single node up to 70B, it is information. The memory rule (WRK002) checks the
    actual bytes.
    """

    id = "WRK001"
    severity = Severity.WARNING
    title = "cluster smaller than the article's class for the model size"
    rationale = "The article: <7B one GPU, 7–70B one multi-GPU node, >70B several nodes."
    fix = (
        "add GPUs or nodes to reach the model's class, or choose a smaller model or a lighter mode "
        "(LoRA/QLoRA)"
    )
    tags = ("workload", "article")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        from blueprints.catalog.workload import workload_factors

        cluster = ctx.cluster
        wl = cluster.blueprint.workload
        if wl is None or cluster.gpu_count == 0:
            return
        cls = workload_factors().size_class(wl.params)
        max_gpus = max(p.server.gpus for p in cluster.gpu_pools)
        have = {"gpu": True, "node": max_gpus >= 2, "nodes": cluster.gpu_node_count >= 2}[cls.scope]
        if have:
            return
        shape = (
            f"{cluster.gpu_node_count} node(s) with up to {max_gpus} GPU(s) each ({cluster.gpu_count} GPUs)"
        )
        bound = {"gpu": "below 7B", "node": "7B–70B", "nodes": "above 70B"}[cls.scope]
        yield self.finding(
            f"{wl.mode} of a {params_text(wl.params)} model ({bound}): the article's class is "
            f"{SCOPE_TEXT[cls.scope]}; "
            f"the cluster has {shape}",
            ("workload", "params"),
            severity=self.severity if wl.mode in TRAINING else Severity.INFO,
        )
