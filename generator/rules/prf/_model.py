"""The performance model as the PRF rules see it: built once per rule context, None when not applicable."""

from __future__ import annotations

from generator.perf.system import System
from generator.rules.base import RuleContext


def system_of(ctx: RuleContext) -> System | None:
    """The model of the largest GPU pool on its planned fabric; None without a GPU pool."""
    return ctx.perf_system
