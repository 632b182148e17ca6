from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class Parallelism(Rule):
    """Parallelism degrees that do not fit the cluster's GPUs.

    3D parallelism (the article's remedy for multi-node scale) splits the GPUs into tensor × pipeline ×
    data groups: the product must equal the GPUs used, and tensor × pipeline must divide the GPU count.
    Tensor parallelism exchanges activations in every layer and belongs inside one NVLink domain (a node,
    or an NVL72 rack); a tensor degree above it puts those exchanges on the network (a warning). The GPUs
    counted are those of the pool the job runs on, as the training estimate counts them: the GPU pool with
    the most GPUs.
    """

    id = "WRK004"
    severity = Severity.ERROR
    title = "parallelism degrees do not fit the GPUs"
    rationale = "tensor × pipeline × data must equal the GPUs; tensor parallelism should stay inside a node."
    fix = "choose degrees whose product is the GPU count, with tensor at most the GPUs per node"
    tags = ("workload", "parallelism")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        from generator.perf.system import PerfError, job_pool  # the pool the training model runs the job on

        cluster = ctx.cluster
        wl = cluster.blueprint.workload
        if wl is None:
            return
        try:
            pool = job_pool(cluster)
        except PerfError:
            return
        gpus = pool.count * pool.server.gpus
        where = (
            "the cluster has"
            if gpus == cluster.gpu_count
            else f"pool `{pool.name}`, the GPU pool with the most GPUs, where the job runs, has"
        )
        par = wl.parallelism
        t, p, d = par.tensor, par.pipeline, par.data
        base = ("workload", "parallelism")
        if d is not None:  # an unstated degree is 1, as the training estimate reads it
            if (t or 1) * (p or 1) * d != gpus:
                yield self.finding(
                    f"tensor {t or 1} × pipeline {p or 1} × data {d} = {(t or 1) * (p or 1) * d:,} but "
                    f"{where} {gpus:,} GPUs",
                    (*base, "data"),
                )
        else:
            model = (t or 1) * (p or 1)
            if model > 1 and gpus % model:
                yield self.finding(
                    f"tensor {t or 1} × pipeline {p or 1} = {model} does not divide the {gpus:,} GPUs of "
                    f"pool `{pool.name}`",
                    (*base, "tensor" if t else "pipeline"),
                )
        # an NVLink domain may span nodes (an NVL72 rack's 18 trays): tensor parallelism inside it stays on
        # NVLink
        domain = max(pool.server.gpus, pool.server.nvlink_domain_gpus)
        if t is not None and t > domain:
            yield self.finding(
                f"tensor parallelism {t} spans more than the {domain} GPUs of an NVLink domain: every "
                "layer's exchanges cross the network",
                (*base, "tensor"),
                "keep tensor ≤ the GPUs of an NVLink domain; use pipeline parallelism across domains",
                severity=Severity.WARNING,
            )
        yield from self._virtual_stages(ctx, base)

    def _virtual_stages(self, ctx: RuleContext, base: tuple[str, ...]) -> Iterator[Finding]:
        """More model chunks per pipeline rank than the layers a rank holds (Megatron gives each chunk at
        least one layer): the estimate's bubble would shrink past what the run can do."""
        from generator.perf.training import model_layers, most_virtual_stages

        wl = ctx.cluster.blueprint.workload
        assert wl is not None
        v, p = wl.parallelism.virtual_stages, wl.parallelism.pipeline
        layers = model_layers(wl.params)
        if p is not None and p > layers:
            yield self.finding(
                f"pipeline {p} stages, but the model has ~{layers} layers (the catalogue's estimate from "
                f"{wl.params:.3g} parameters): each stage needs at least one layer",
                (*base, "pipeline"),
                "give at most as many pipeline stages as the model has layers",
            )
            return
        if v is None or v == 1 or p is None:
            return
        most = most_virtual_stages(layers, p)
        if v > most:
            yield self.finding(
                f"{v} virtual stages per pipeline rank, but a rank of pipeline {p} holds about {most} of "
                f"the model's ~{layers} layers (the catalogue's estimate from {wl.params:.3g} "
                "parameters): each chunk needs at least one layer",
                (*base, "virtual_stages"),
                "give at most as many virtual stages as the layers a pipeline rank holds",
            )
