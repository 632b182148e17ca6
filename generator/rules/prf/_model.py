"""The performance model as the PRF rules see it: built once per rule context, None when not applicable."""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator.rules.base import RuleContext

if TYPE_CHECKING:  # the model is imported when a rule asks for it (validate of a one-node blueprint never)
    from generator.perf.system import System
    from generator.perf.training import StepEstimate


def system_of(ctx: RuleContext) -> System | None:
    """The model of the largest GPU pool on its planned fabric; None without a GPU pool."""
    return ctx.perf_system


def step_of(ctx: RuleContext) -> StepEstimate | None:
    """The training step of the blueprint's workload on the model; None without a training workload or a
    model, or for a layout the model refuses (the WRK rules report layouts the cluster cannot hold)."""
    wl = ctx.cluster.blueprint.workload
    if wl is None:
        return None  # before importing the training model (~4 ms): most fabric blueprints have no workload
    from generator.perf.system import PerfError
    from generator.perf.training import TRAINING_MODES, training_step

    if wl.mode not in TRAINING_MODES:
        return None
    system = system_of(ctx)
    if system is None:
        return None
    try:
        return training_step(wl, system)
    except PerfError:
        return None
