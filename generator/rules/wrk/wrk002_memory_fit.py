from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.sizing import gb, params_text


def need_text(wl, need, gpus: int) -> str:  # type: ignore[no-untyped-def]
    from blueprints.catalog.workload import workload_factors

    f = workload_factors()
    parts = [f"{need.weight_bytes_per_param:g} B/param × {params_text(wl.params)} = {gb(need.weights)}"]
    if need.adapters:
        parts.append(
            f"adapters {f.modes[wl.mode].adapter_fraction:.0%} × {f.adapter_bytes:g} B/param = "
            f"{gb(need.adapters)}"
        )
    if need.kv_cache:
        parts.append(
            f"KV cache {wl.sequence_length:,} tokens × batch {wl.inference_batch} = {gb(need.kv_cache)}"
        )
    if need.activations_per_gpu:
        parts.append(
            f"activations {gb(need.activations_per_gpu)} per GPU × {gpus:,} = "
            f"{gb(need.activations_per_gpu * gpus)}"
        )
    return " + ".join(parts) + f" = {gb(need.total(gpus))}"


def memory_shortfall(ctx: RuleContext) -> tuple[Any, float] | None:
    """(need, bytes the cluster's GPUs hold) when the workload's state does not fit every GPU's memory even
    perfectly sharded; None when it does or there is no workload."""
    from blueprints.catalog.workload import memory_need

    cluster = ctx.cluster
    wl = cluster.blueprint.workload
    if wl is None:
        return None
    need = memory_need(wl.params, wl.mode, wl.precision, wl.sequence_length, wl.inference_batch)
    have = sum(p.count * p.server.gpus * (p.gpu.memory_gb if p.gpu else 0.0) for p in cluster.pools) * 1e9
    return None if need.total(cluster.gpu_count) <= have else (need, have)


class MemoryFit(Rule):
    """The workload needs more GPU memory than the cluster has.

    Memory per parameter by mode (catalogue ``workload.yaml``, with sources): pre-training and full
    fine-tuning with mixed-precision Adam keep 16 bytes per parameter (fp16 weights and gradients, fp32
    master weights, momentum and variance: ZeRO, SC'20), sharded over all GPUs at best; LoRA keeps the
    frozen weights at the stated precision (2 B/param in bf16) plus ~1 % adapters trained with Adam;
    QLoRA 4-bit NormalFloat weights with double-quantised constants, 0.516 B/param, plus adapters;
    inference the weights at the precision plus the KV cache (2 · layers · hidden · 2 bytes per token,
    multi-head attention). Training adds activations per GPU for one sequence with full recomputation
    (2 · sequence · hidden · layers bytes; layers and hidden from N ≈ 12·L·h² and h/L ≈ 128). Available
    memory is every GPU's memory; the estimate assumes perfect sharding, so a real job needs more.
    """

    id = "WRK002"
    severity = Severity.ERROR
    title = "workload needs more GPU memory than the cluster has"
    rationale = "Model state that does not fit the GPUs' memory cannot be trained or served."
    fix = "add GPUs or nodes, use a lighter mode (LoRA/QLoRA) or precision, or a smaller model"
    tags = ("workload", "memory")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        wl = cluster.blueprint.workload
        short = memory_shortfall(ctx)
        if wl is None or short is None:
            return
        gpus = cluster.gpu_count
        need, have = short
        if gpus == 0:
            avail = "the cluster has no GPUs"
        else:
            avail = (
                "the cluster has "
                + " + ".join(
                    f"{p.count * p.server.gpus:,} × {p.gpu.memory_gb:g} GB"
                    for p in cluster.gpu_pools
                    if p.gpu
                )
                + f" = {gb(have)}"
            )
        yield self.finding(
            f"{wl.mode} of a {params_text(wl.params)} model needs {need_text(wl, need, gpus)}; {avail}",
            ("workload", "params"),
        )
