"""The rule API: one small class per rule, found by subclass discovery (no central list)."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, ClassVar

from generator.findings import Finding, Path, Severity

if TYPE_CHECKING:
    from generator.perf.system import System
    from generator.plan.model import Plan
    from generator.resolve import ResolvedCluster


@dataclass
class RuleContext:
    """What a rule may read: the resolved cluster and, built on demand, the plan and the performance model."""

    cluster: ResolvedCluster
    plan_error: str | None = None
    plan_error_path: tuple[str | int, ...] = ()
    perf_error: str | None = None  # why the performance model does not apply (``perf_system`` is None)

    @cached_property
    def plan(self) -> Plan | None:
        """The physical plan, or None when it cannot be built (the reason is in ``plan_error``)."""
        from generator.plan.build import PlanError, build_plan  # late: rules that need no plan never pay

        try:
            return build_plan(self.cluster)
        except PlanError as exc:  # reported as a finding by rule PLN001, not raised here
            self.plan_error = str(exc) or type(exc).__name__
            self.plan_error_path = exc.path
            return None
        except MemoryError:  # a design too large for this machine is a finding, not a crash
            self.plan_error = "out of memory while building it; the design is too large for this machine"
            self.plan_error_path = ()
            return None

    @cached_property
    def perf_system(self) -> System | None:
        """The performance model of the largest GPU pool on its planned fabric (the PRF rules read it);
        None without a GPU pool or when the model does not apply."""
        from generator.perf.system import PerfError, system_for  # late, as for the plan

        try:
            return system_for(self.cluster, self.plan)
        except PerfError as exc:  # reported as a finding by rule PRF005
            self.perf_error = str(exc)
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
    # False for the rules that keep hostile input out of the outputs (names that resolve to an address,
    # partitions that merge tenants): a `suppress:` entry cannot turn them off.
    suppressible: ClassVar[bool] = True

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
