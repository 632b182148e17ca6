"""The advisor's records: what was asked (``Request``), each candidate design (``Option``) and the answer
(``Advice``), with the words a request may use. `generator.perf.advisor` fills them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from blueprints.starter import STARTER_GPU
from generator.perf.system import System
from generator.perf.training import StepEstimate

SCOPES = ("gpu", "node", "nodes")


BUDGETS = ("high", "medium", "low", "minimal")


PREFERENCES = ("cost", "non-blocking")


MODES = ("pretrain", "full-finetune", "lora", "qlora", "inference")


@dataclass(frozen=True)
class Request:
    params: float
    mode: str = "pretrain"
    gpus: int | None = None
    gpu: str = STARTER_GPU
    budget: str | None = None
    prefer: str = "cost"
    precision: str | None = None
    tokens: float | None = None
    target_days: float | None = None
    sequence_length: int = 4096
    name: str = "starter"


@dataclass
class Option:
    """One buildable design (a topology for the chosen nodes), with what it costs and what it delivers."""

    label: str
    blueprint: dict[str, Any]
    switches: int = 0
    cables: int = 0
    transceivers: int = 0
    bisection_gbps: float = 0.0
    allreduce_busbw: float = 0.0
    allreduce_scattered_busbw: float = 0.0
    alltoall_busbw: float = 0.0
    bottleneck: str = ""
    error: str | None = None
    system: System | None = field(default=None, repr=False, compare=False)  # the planned option, for the step

    def as_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "switches": self.switches,
            "cables": self.cables,
            "transceivers": self.transceivers,
            "bisection_gbps": self.bisection_gbps,
            "all_reduce_busbw_gbytes": round(self.allreduce_busbw, 2),
            "all_reduce_scattered_busbw_gbytes": round(self.allreduce_scattered_busbw, 2),
            "alltoall_busbw_gbytes": round(self.alltoall_busbw, 2),
            "bottleneck": self.bottleneck,
            "error": self.error,
        }


@dataclass
class Advice:
    request: Request
    article_scope: str
    memory_scope: str
    scope: str
    memory_gb: float
    memory_gpus: int
    gpus: int
    nodes: int
    gpu_id: str
    server_id: str
    budget: str
    technology: str | None
    topology_rule: str
    options: list[Option] = field(default_factory=list)
    chosen: int = 0
    reasons: list[str] = field(default_factory=list)
    training: StepEstimate | None = None

    @property
    def starter(self) -> dict[str, Any]:
        return self.options[self.chosen].blueprint

    def as_dict(self) -> dict[str, Any]:
        r = self.request
        return {
            "request": {
                "params": r.params,
                "mode": r.mode,
                "gpus": r.gpus,
                "gpu": r.gpu,
                "budget": r.budget,
                "prefer": r.prefer,
                "tokens": r.tokens,
                "target_days": r.target_days,
                "precision": r.precision,
                "sequence_length": r.sequence_length,
            },
            "article_scope": self.article_scope,
            "memory_scope": self.memory_scope,
            "scope": self.scope,
            "memory_gb": round(self.memory_gb, 1),
            "memory_min_gpus": self.memory_gpus,
            "gpus": self.gpus,
            "nodes": self.nodes,
            "gpu": self.gpu_id,
            "server": self.server_id,
            "budget": self.budget,
            "technology": self.technology,
            "topology_rule": self.topology_rule,
            "options": [o.as_dict() for o in self.options],
            "chosen": self.options[self.chosen].label,
            "reasons": self.reasons,
            "training": self.training.as_dict() if self.training else None,
        }


class AdviceError(ValueError):
    pass
