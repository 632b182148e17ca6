"""The workload the cluster is for (optional): checks model fit and communication time."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from blueprints.models.base import Model


class Parallelism(Model):
    data: int | None = Field(default=None, ge=1, le=1_000_000)
    tensor: int | None = Field(default=None, ge=1, le=1024)
    pipeline: int | None = Field(default=None, ge=1, le=1024)
    sharding: Literal["none", "zero1", "zero2", "zero3", "fsdp"] = Field(
        default="none",
        description="data-parallel sharding of model state: ZeRO stage 1 (optimizer), 2 (+gradients), "
        "3 / FSDP full-shard (+parameters, an extra parameter all-gather per step)",
    )


class Workload(Model):
    params: float = Field(gt=0, le=1e14, description="model parameters, e.g. 70e9")
    mode: Literal["pretrain", "full-finetune", "lora", "qlora", "inference"] = "pretrain"
    precision: Literal["fp32", "bf16", "fp16", "fp8", "int8", "int4"] = "bf16"
    tokens: float | None = Field(default=None, gt=0, le=1e16, description="training tokens")
    global_batch_tokens: float | None = Field(default=None, gt=0, le=1e9)
    target_days: float | None = Field(default=None, gt=0, le=3650)
    sequence_length: int = Field(default=4096, ge=128, le=10_000_000)
    inference_batch: int = Field(default=1, ge=1, le=100_000)
    parallelism: Parallelism = Field(default_factory=Parallelism)
