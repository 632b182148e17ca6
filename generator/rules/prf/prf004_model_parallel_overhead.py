from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.prf._model import step_of

_INTERLEAVE = "interleave the pipeline (parallelism.virtual_stages), "
_OTHER_FIXES = (
    "use fewer pipeline stages, keep tensor parallelism inside the NVLink domain, or shard with ZeRO/FSDP "
    "instead of splitting the model"
)


class ModelParallelOverhead(Rule):
    """Tensor- and pipeline-parallel costs beyond their share of the training step.

    Model parallelism is not free on the fabric the blueprint describes. Tensor parallelism (Megatron-LM)
    all-reduces the activations four times per layer and micro-batch — cheap on NVLink, costly once a TP
    group leaves the NVLink domain. Pipeline parallelism sends activations and their gradients across every
    stage boundary (over the NICs when stages sit on different nodes) and idles for the 1F1B bubble,
    (p−1)/m of the compute with p stages and m micro-batches (Narayanan et al. 2021 §2.2). The model costs
    all three for the workload's degrees (or the layout it chooses) on this cluster; when together they
    exceed the policy share of the step (``data/perf.yaml`` policy.model_parallel_share, 25 %), the layout
    wastes the cluster.
    """

    id = "PRF004"
    severity = Severity.WARNING
    title = "tensor/pipeline parallel overhead beyond its share of the step"
    rationale = (
        "TP all-reduces, pipeline sends and the pipeline bubble add to every step; the layout decides them."
    )
    fix = f"raise the global batch (more micro-batches shrink the bubble), {_INTERLEAVE}{_OTHER_FIXES}"
    tags = ("performance", "nccl", "workload")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        from blueprints.catalog.perf import perf_data

        wl = ctx.cluster.blueprint.workload
        st = step_of(ctx)
        if wl is None or st is None:
            return
        overhead = st.tp_s + st.pp_s + st.bubble_s
        limit = perf_data().policy.model_parallel_share.value
        if not st.layout.fits or st.step_s <= 0 or overhead <= limit * st.step_s:
            return
        lay = st.layout
        chunks = f", {lay.virtual_stages} virtual stages," if lay.virtual_stages > 1 else ""
        yield self.finding(
            f"TP {lay.tp} × PP {lay.pp} × DP {lay.dp}{chunks} with {st.micro_batches} micro-batches: "
            "tensor-parallel "
            f"all-reduces {st.tp_s:.3f} s, pipeline sends {st.pp_s:.3f} s and the pipeline bubble "
            f"{st.bubble_s:.3f} s take {overhead / st.step_s:.0%} of the {st.step_s:.3f} s step (policy "
            f"{limit:.0%})",
            ("workload", "parallelism")
            if wl.parallelism.tensor or wl.parallelism.pipeline
            else ("workload",),
            # the pipeline already interleaves: the fix without that step
            f"raise the global batch (more micro-batches shrink the bubble), {_OTHER_FIXES}"
            if lay.virtual_stages > 1
            else None,
        )
