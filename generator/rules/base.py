"""The rule API: one small class per rule, found by subclass discovery (no central list)."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

from generator.findings import Finding, Path, Severity

if TYPE_CHECKING:
    from generator.plan.model import Plan
    from generator.resolve import ResolvedCluster


@dataclass
class RuleContext:
    """What a rule may read: the resolved cluster and, built on demand, the plan."""

    cluster: ResolvedCluster
    _plan: Any = field(default=None, repr=False)
    plan_error: str | None = None
    plan_error_path: tuple[str | int, ...] = ()

    @cached_property
    def plan(self) -> Plan | None:
        """The physical plan, or None when it cannot be built (the reason is in ``plan_error``)."""
        if self._plan is not None:
            return self._plan
        from generator.plan.build import build_plan  # late: rules that need no plan never pay for it

        try:
            return build_plan(self.cluster)
        except Exception as exc:  # reported as a finding by rule PLN001, not raised here
            self.plan_error = (
                "out of memory while building it; the design is too large for this machine"
                if isinstance(exc, MemoryError)
                else str(exc) or type(exc).__name__
            )
            self.plan_error_path = tuple(getattr(exc, "path", ()))
            return None


class Rule:
    """Subclass with the class attributes below and a ``check`` generator; the docstring is the doc text."""

    id: ClassVar[str]
    severity: ClassVar[Severity]
    title: ClassVar[str]
    rationale: ClassVar[str]
    fix: ClassVar[str]
    tags: ClassVar[tuple[str, ...]] = ()
    lifecycle: ClassVar[str] = "stable"

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        raise NotImplementedError

    def finding(
        self, message: str, path: Path, hint: str | None = None, severity: Severity | None = None
    ) -> Finding:
        return Finding(
            self.id,
            severity if severity is not None else self.severity,
            message,
            path,
            hint if hint is not None else self.fix,
        )

    @classmethod
    def doc(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")
