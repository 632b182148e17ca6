"""Day-2 changes: compare two plans (``compare``) and say what it means on the floor (``render``,
``workorder``)."""

from __future__ import annotations

from generator.diff.compare import compare
from generator.diff.model import CableChange, CableMove, PlanDiff, PortSpeed, Relocation, Replacement

__all__ = ["CableChange", "CableMove", "PlanDiff", "PortSpeed", "Relocation", "Replacement", "compare"]
