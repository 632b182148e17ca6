"""The performance model as the PRF rules see it: built once per rule context, None when not applicable."""

from __future__ import annotations

from generator.perf.system import PerfError, System
from generator.perf.training import TRAINING_MODES, StepEstimate, training_step
from generator.rules.base import RuleContext


def system_of(ctx: RuleContext) -> System | None:
    """The model of the largest GPU pool on its planned fabric; None without a GPU pool."""
    return ctx.perf_system


def step_of(ctx: RuleContext) -> StepEstimate | None:
    """The training step of the blueprint's workload on the model; None without a training workload or a
    model, or for a layout the model refuses (the WRK rules report layouts the cluster cannot hold)."""
    wl = ctx.cluster.blueprint.workload
    if wl is None or wl.mode not in TRAINING_MODES:
        return None
    system = system_of(ctx)
    if system is None:
        return None
    try:
        return training_step(wl, system)
    except PerfError:
        return None
