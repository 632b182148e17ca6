from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.prf._model import step_of, system_of


class TrainingTime(Rule):
    """Predicted training time beyond the workload's ``target_days``.

    Compute per step is 6 FLOPs per parameter per token (4 for LoRA/QLoRA, whose frozen weights need no
    weight gradients; Kaplan et al. 2020) at the GPUs' dense BF16 peak times a model FLOPs utilisation of
    40 % (Llama 3 reports 38–43 % on H100), plus the gradient sync the backward pass cannot hide. The run
    takes ``tokens / global batch`` such steps. The article: training-time targets and budget refine the
    architecture choice — more GPUs or faster ones shorten the run.
    """

    id = "PRF003"
    severity = Severity.WARNING
    title = "predicted training time beyond target_days"
    rationale = "The cluster cannot train the workload's tokens within its target at realistic utilisation."
    fix = "add GPUs (or faster ones), lower the token count, or relax target_days"
    tags = ("performance", "workload")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        wl = ctx.cluster.blueprint.workload
        if wl is None or not wl.tokens or not wl.target_days:
            return
        st, system = step_of(ctx), system_of(ctx)
        if st is None or system is None:
            return
        if not st.layout.fits or st.train_days is None or st.train_days <= wl.target_days:
            return
        yield self.finding(
            f"{wl.tokens:.3g} tokens at {st.tokens_per_step:,.0f} tokens per {st.step_s:.2f} s step on "
            f"{st.layout.gpus} × {system.gpu.name} ({system.gpu.bf16_tflops:g} TFLOPS BF16, the step at "
            f"{st.model_flops_utilization:.0%} MFU) take "
            f"{st.train_days:.1f} days; the target is {wl.target_days:g}",
            ("workload", "target_days"),
        )
