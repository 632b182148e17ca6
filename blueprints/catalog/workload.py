"""Workload memory factors (``data/workload.yaml``): bytes per parameter by mode, the article's size classes.

The numbers and their sources live in the YAML; this module only types and loads them, and turns a
parameter count into the memory a mode needs (``memory_need``).
"""

from dataclasses import dataclass
from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict

from blueprints.catalog.load import validated_file


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # built on first use


Adam = Literal["adam"]  # mixed-precision Adam's model states (WorkloadFactors.adam_state_bytes, summed)


class AdamStates(_Entry):
    """Bytes per parameter mixed-precision Adam keeps (ZeRO §3.1), in the order ZeRO's stages shard them."""

    params: float
    grads: float
    optimizer: float

    @property
    def total(self) -> float:
        return self.params + self.grads + self.optimizer


class ModeMemory(_Entry):
    weight_bytes_per_param: float | Adam | None  # None: the blueprint's precision decides
    adapter_fraction: float
    activations: bool
    kv_cache: bool


class SizeClass(_Entry):
    below_params: float | None  # None: everything above the previous class
    scope: Literal["gpu", "node", "nodes"]
    inclusive: bool = False


class WorkloadFactors(_Entry):
    modes: dict[str, ModeMemory]
    adapter_bytes_per_param: float | Adam
    adam_state_bytes: AdamStates
    precision_bytes: dict[str, float]
    activation_bytes_per_layer_token_hidden: float
    params_per_layer_hidden_squared: float
    hidden_per_layer: float
    kv_tensors: int
    kv_bytes_per_value: float
    size_classes: tuple[SizeClass, ...]

    def bytes_per_param(self, value: float | Adam) -> float:
        """A per-parameter figure of the file, ``adam`` read as Adam's states summed."""
        return self.adam_state_bytes.total if value == "adam" else float(value)

    @property
    def adapter_bytes(self) -> float:
        return self.bytes_per_param(self.adapter_bytes_per_param)

    def shape(self, params: float) -> tuple[float, float]:
        """(hidden size, layers) of a dense transformer with ``params`` parameters.

        N = c·L·h² with L = h / r gives h = (r·N / c)^(1/3).
        """
        hidden = (self.hidden_per_layer * params / self.params_per_layer_hidden_squared) ** (1 / 3)
        return hidden, hidden / self.hidden_per_layer

    def size_class(self, params: float) -> SizeClass:
        for cls in self.size_classes:
            if cls.below_params is None:
                return cls
            if params < cls.below_params or (cls.inclusive and params == cls.below_params):
                return cls
        return self.size_classes[-1]


@dataclass(frozen=True)
class MemoryNeed:
    """Bytes a workload needs: a part shared out over every GPU and a part each GPU holds itself."""

    weights: float  # model weights (+ gradients and optimizer state where the mode trains them all)
    adapters: float  # LoRA/QLoRA adapters with their gradients and optimizer state
    kv_cache: float  # inference: one batch of sequences
    activations_per_gpu: float  # training: one sequence per GPU, full recomputation
    weight_bytes_per_param: float

    @property
    def shared(self) -> float:
        return self.weights + self.adapters + self.kv_cache

    def total(self, gpus: int) -> float:
        return self.shared + self.activations_per_gpu * gpus


@cache
def workload_factors() -> WorkloadFactors:
    return validated_file(WorkloadFactors, "workload.yaml")


def memory_need(params: float, mode: str, precision: str, sequence_length: int, batch: int = 1) -> MemoryNeed:
    f = workload_factors()
    m = f.modes[mode]
    per_param = (
        f.bytes_per_param(m.weight_bytes_per_param)
        if m.weight_bytes_per_param is not None
        else f.precision_bytes[precision]
    )
    hidden, layers = f.shape(params)
    adapters = params * m.adapter_fraction * f.adapter_bytes
    act = (
        f.activation_bytes_per_layer_token_hidden * sequence_length * hidden * layers
        if m.activations
        else 0.0
    )
    kv = (
        f.kv_tensors * layers * hidden * f.kv_bytes_per_value * sequence_length * batch if m.kv_cache else 0.0
    )
    return MemoryNeed(params * per_param, adapters, kv, act, per_param)
