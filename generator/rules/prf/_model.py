"""The performance model as the PRF rules see it: built once per rule context, None when not applicable."""

from __future__ import annotations

from generator.perf.system import PerfError, System, system_for
from generator.rules.base import RuleContext


def system_of(ctx: RuleContext) -> System | None:
    """The model of the largest GPU pool on its planned fabric; None without a GPU pool."""
    cached: System | None | bool = getattr(ctx, "_prf_system", False)
    if not isinstance(cached, bool):
        return cached
    try:
        system: System | None = system_for(ctx.cluster, ctx.plan)
    except PerfError:
        system = None
    ctx._prf_system = system  # type: ignore[attr-defined]
    return system
