"""The outcome of a rehearsal: per fabric, named checks that hold or fail with precise reasons."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from generator.rehearse.limits import LimitChange

MAX_REASONS = 20  # reasons printed per failed check (all of them are in the JSON)


@dataclass
class Check:
    name: str  # "bgp sessions", "reachability", ... ; "(after --fail X)" appended per step
    ok: bool
    detail: str  # one line: what was checked and found
    reasons: list[str] = field(default_factory=list)  # each failure, precise

    def as_dict(self) -> dict[str, Any]:
        return {"check": self.name, "ok": self.ok, "detail": self.detail, "reasons": self.reasons}


@dataclass
class FabricVerdict:
    fabric: str
    technology: str  # ethernet | infiniband
    size: str  # "20 switches, 512 cables"
    notes: list[str] = field(default_factory=list)  # sampled, simulated speed, ...
    checks: list[Check] = field(default_factory=list)
    converge_s: dict[str, float] = field(default_factory=dict)  # step -> seconds

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(c.ok for c in self.checks)

    def add(self, name: str, reasons: list[str], detail: str) -> bool:
        self.checks.append(Check(name, not reasons, detail, reasons))
        return not reasons

    def as_dict(self) -> dict[str, Any]:
        return {
            "fabric": self.fabric,
            "technology": self.technology,
            "size": self.size,
            "ok": self.ok,
            "notes": self.notes,
            "converge_seconds": {k: round(v, 1) for k, v in self.converge_s.items()},
            "checks": [c.as_dict() for c in self.checks],
        }


@dataclass
class Rehearsal:
    build: str
    fabrics: list[FabricVerdict] = field(default_factory=list)
    limits: list[LimitChange] = field(default_factory=list)
    limits_restored: bool = True
    seconds: float = 0.0
    nothing: str = ""  # why there is nothing to rehearse (no switch anywhere): a pass

    @property
    def ok(self) -> bool:
        if self.nothing:
            return not self.fabrics
        return bool(self.fabrics) and all(f.ok for f in self.fabrics)

    def to_json(self) -> str:
        doc = {
            "build": self.build,
            "ok": self.ok,
            **({"nothing_to_rehearse": self.nothing} if self.nothing else {}),
            "seconds": round(self.seconds, 1),
            "kernel_limits": [c.as_dict() for c in self.limits],
            "kernel_limits_restored": self.limits_restored,
            "fabrics": [f.as_dict() for f in self.fabrics],
        }
        return json.dumps(doc, indent=2) + "\n"
