from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.wrk.wrk002_memory_fit import memory_shortfall


class LayoutMemory(Rule):
    """The training layout holds more per GPU than a GPU has.

    WRK002 compares the whole model state with every GPU's memory, as if it were perfectly sharded. A job
    runs a layout: tensor × pipeline × data degrees, given in the blueprint or chosen by the training model
    (`blueprint estimate` prints it), and each GPU holds its shard of the weights, gradients and optimizer
    state (split over TP·PP, and over DP as far as ZeRO/FSDP shard them) plus its activations. When that
    shard is larger than the GPU's memory the layout cannot run, whatever the total says: `estimate` says
    "does not fit", and so does `validate`. Said once: not where WRK002 already refuses the workload.
    """

    id = "WRK005"
    severity = Severity.ERROR
    title = "the training layout does not fit GPU memory"
    rationale = "Each GPU holds its shard of the model state and its activations; a larger shard cannot run."
    fix = (
        "raise tensor or pipeline parallelism, shard the data-parallel state (sharding: zero1, zero2, zero3 "
        "or fsdp), or add GPUs"
    )
    tags = ("workload", "memory", "parallelism")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        wl = ctx.cluster.blueprint.workload
        if wl is None or ctx.perf_system is None or memory_shortfall(ctx) is not None:
            return
        from generator.perf.system import PerfError
        from generator.perf.training import TRAINING_MODES, choose_layout

        if wl.mode not in TRAINING_MODES:
            return  # inference: WRK003 places the served model on a node
        try:
            lay = choose_layout(wl, ctx.perf_system)
        except PerfError:
            return
        if lay.fits:
            return
        how = "given" if lay.given else "the split of the fewest model-parallel GPUs that holds the least"
        gpu = ctx.perf_system.gpu.name
        yield self.finding(
            f"TP {lay.tp} × PP {lay.pp} × DP {lay.dp} ({how}, sharding {lay.sharding}) holds "
            f"{lay.memory_per_gpu_gb:.1f} GB per GPU; the {gpu} has {lay.gpu_memory_gb:g} GB",
            ("workload", "parallelism") if lay.given else ("workload", "params"),
        )
