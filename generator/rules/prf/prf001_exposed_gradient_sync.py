from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.prf._model import step_of


class ExposedGradientSync(Rule):
    """Predicted gradient synchronisation that training cannot hide.

    The model (``blueprint estimate`` shows the numbers) takes the workload's parameters, precision and
    parallel degrees (tensor inside the node, pipeline across nodes, chosen to fit memory when absent),
    predicts the data-parallel gradient all_reduce with NCCL's algorithms on this cluster's NVLink, NICs and
    fabric, and overlaps it with the backward pass of the last micro-batch (gradients accumulate and are
    reduced only then; the last DDP bucket never hides). When the part left over is more than the policy
    share of the step (``data/perf.yaml`` policy.exposed_sync_share, 15 %), communication is a first-order
    cost of this design: the article's remedies are overlapping communication with compute, gradient
    compression, topology-aware placement, and more network bandwidth per GPU.
    """

    id = "PRF001"
    severity = Severity.WARNING
    title = "gradient sync exposed beyond its share of the step"
    rationale = "Gradient all_reduce time the backward pass cannot hide adds directly to every step."
    fix = (
        "add NIC bandwidth per GPU or IB SHARP, raise the global batch (more micro-batches to hide behind), "
        "or shard gradients (ZeRO/FSDP reduce-scatter)"
    )
    tags = ("performance", "nccl", "workload")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        wl = ctx.cluster.blueprint.workload
        st = step_of(ctx)
        if wl is None or st is None:
            return
        if not st.layout.fits or st.sync is None:
            return
        from blueprints.catalog.perf import perf_data  # after the model: a blueprint without one needs none

        limit = perf_data().policy.exposed_sync_share.value
        if st.exposed_share <= limit:
            return
        lay = st.layout
        what = (
            f"sync ({lay.sharding}: reduce-scatter + all-gather)" if lay.sharding != "none" else "all_reduce"
        )
        yield self.finding(
            f"gradient {what}"
            f" of {st.grad_bytes / 1e9:.2f} GB per rank over {lay.dp} data-parallel ranks "
            f"(TP {lay.tp} × PP {lay.pp}) takes {st.sync_s:.3f} s at {st.sync.busbw_gbytes:.1f} GB/s busbw "
            f"({st.sync.algorithm}, limited by {st.sync.bottleneck}); {st.overlapped_fraction:.0%} hides "
            "behind "
            f"backward, {st.exposed_s:.3f} s is exposed = {st.exposed_share:.0%} of the {st.step_s:.3f} s "
            "step "
            f"(policy {limit:.0%})",
            ("workload",),
        )
