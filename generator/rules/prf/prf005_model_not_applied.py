"""PRF005: the performance model applies to the blueprint's GPU pool, or the report says why not."""

from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.sizing import server_path


class ModelNotApplied(Rule):
    """The performance model (the PRF rules, `blueprint estimate`, acceptance thresholds) refuses a GPU pool
    whose catalogue entries lack a fact it needs rather than guess it: a GPU with no host PCIe width when its
    GPUs would exchange over PCIe, an AMD GPU with no xGMI link count, a catalogue setting that names
    nothing. The other PRF rules are then silent; this finding says why, so their silence is not read as a
    pass."""

    id = "PRF005"
    severity = Severity.INFO
    title = "the performance model does not apply to the GPU pool"
    rationale = "a missing catalogue fact is declared, not assumed; the performance findings need it"
    fix = "add the fact the message names to the pool's catalogue entry (with its source)"
    tags = ("performance",)

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        from generator.perf.system import PerfError, job_pool  # late, as RuleContext.perf_system

        if ctx.perf_system is not None or not ctx.perf_error:
            return
        try:
            largest = job_pool(ctx.cluster)  # the pool the model was refused for
        except PerfError:  # no GPU pool: nothing the model was meant to apply to
            return
        yield self.finding(
            f"pool `{largest.name}`: performance findings skipped: {ctx.perf_error}",
            server_path(ctx.cluster, largest, "gpu"),
        )
