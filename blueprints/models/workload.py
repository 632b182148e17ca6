"""The workload the cluster is for (optional): checks model fit and communication time."""

from typing import Literal

from pydantic import Field, model_validator

from blueprints.models.base import Model


class Parallelism(Model):
    data: int | None = Field(default=None, ge=1, le=1_000_000)
    """data-parallel degree"""
    tensor: int | None = Field(default=None, ge=1, le=1024)
    """tensor-parallel degree"""
    pipeline: int | None = Field(default=None, ge=1, le=1024)
    """pipeline-parallel degree"""
    virtual_stages: int | None = Field(default=None, ge=1, le=128)
    """model chunks each pipeline rank holds: Megatron's interleaved 1F1B schedule
    (--num-virtual-stages-per-pipeline-rank, NeMo's VP); the bubble shrinks and the stage sends grow by it.
    Default: 1 (no interleaving) with given degrees; costed like the degrees when they are chosen"""
    sharding: Literal["none", "zero1", "zero2", "zero3", "fsdp"] = "none"
    """data-parallel sharding of model state: ZeRO stage 1 (optimizer), 2 (+gradients), 3 / FSDP
    full-shard (+parameters, an extra parameter all-gather per step)"""


class Workload(Model):
    params: float = Field(gt=0, le=1e14, description="model parameters, e.g. 70e9")
    mode: Literal["pretrain", "full-finetune", "lora", "qlora", "inference"] = "pretrain"
    """what the GPUs do: pretrain, full-finetune, lora, qlora or inference"""
    precision: Literal["fp32", "bf16", "fp16", "fp8", "int8", "int4"] = "bf16"
    """number format of weights and compute"""
    tokens: float | None = Field(default=None, gt=0, le=1e16, description="training tokens")
    global_batch_tokens: float | None = Field(default=None, gt=0, le=1e9)
    """tokens per optimizer step across all data-parallel ranks"""
    target_days: float | None = Field(default=None, gt=0, le=3650)
    """wanted training time in days"""
    sequence_length: int = Field(default=4096, ge=128, le=10_000_000)
    """tokens per sequence"""
    inference_batch: int = Field(default=1, ge=1, le=100_000)
    """sequences served at once (inference)"""
    parallelism: Parallelism = Field(default_factory=dict, validate_default=True)  # its defaults: base.py
    """parallelism degrees (default: chosen to fit)"""

    @model_validator(mode="after")
    def _batch_holds_a_sequence(self) -> "Workload":
        # a step trains whole sequences: a global batch below one sequence_length cannot be run (the training
        # estimate charged compute for the batch's tokens while every rank ran a whole sequence)
        if self.global_batch_tokens is not None and self.global_batch_tokens < self.sequence_length:
            raise ValueError(
                f"global_batch_tokens {self.global_batch_tokens:g} is less than one sequence "
                f"(sequence_length {self.sequence_length:,}): a step trains whole sequences"
            )
        return self
