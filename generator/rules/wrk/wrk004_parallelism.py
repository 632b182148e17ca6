from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class Parallelism(Rule):
    """Parallelism degrees that do not fit the cluster's GPUs.

    3D parallelism (the article's remedy for multi-node scale) splits the GPUs into tensor × pipeline ×
    data groups: the product must equal the GPUs used, and tensor × pipeline must divide the GPU count.
    Tensor parallelism exchanges activations in every layer and belongs inside one node's NVLink
    domain; a tensor degree above the GPUs per node puts those exchanges on the network (a warning).
    """

    id = "WRK004"
    severity = Severity.ERROR
    title = "parallelism degrees do not fit the GPUs"
    rationale = "tensor × pipeline × data must equal the GPUs; tensor parallelism should stay inside a node."
    fix = "choose degrees whose product is the GPU count, with tensor at most the GPUs per node"
    tags = ("workload", "parallelism")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        wl = cluster.blueprint.workload
        gpus = cluster.gpu_count
        if wl is None or gpus == 0:
            return
        par = wl.parallelism
        t, p, d = par.tensor, par.pipeline, par.data
        base = ("workload", "parallelism")
        if d is not None:  # an unstated degree is 1, as the training estimate reads it
            if (t or 1) * (p or 1) * d != gpus:
                yield self.finding(
                    f"tensor {t or 1} × pipeline {p or 1} × data {d} = {(t or 1) * (p or 1) * d:,} but the "
                    f"cluster has {gpus:,} GPUs",
                    (*base, "data"),
                )
        else:
            model = (t or 1) * (p or 1)
            if model > 1 and gpus % model:
                yield self.finding(
                    f"tensor {t or 1} × pipeline {p or 1} = {model} does not divide the {gpus:,} GPUs",
                    (*base, "tensor" if t else "pipeline"),
                )
        per_node = max(pool.server.gpus for pool in cluster.gpu_pools)
        if t is not None and t > per_node:
            yield self.finding(
                f"tensor parallelism {t} spans more than the {per_node} GPUs of a node: every layer's "
                "exchanges cross "
                "the network",
                (*base, "tensor"),
                "keep tensor ≤ GPUs per node; use pipeline parallelism across nodes",
                severity=Severity.WARNING,
            )
