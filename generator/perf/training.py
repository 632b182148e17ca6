"""One training step: parallel layout, compute time, gradient all_reduce and how much of it hides.

Memory per GPU (bytes per parameter by mode) comes from the workload catalogue
(``blueprints/catalog/workload.py``, shared with the WRK rules); FLOPs, utilisation, batch, gradient
types and the DDP bucket come from ``data/perf.yaml``.

Layout: tensor parallel (TP) inside the NVLink domain, pipeline parallel (PP) across nodes, the rest data
parallel (DP); when the workload gives no degrees, the smallest TP·PP whose shard fits GPU memory wins
(larger TP first — it stays on NVLink). Model state is split over TP·PP (no ZeRO sharding across DP).

Step: compute = F·N·tokens / (GPUs · peak · MFU). The DP gradient all_reduce runs bucket by bucket during
the backward pass of the last micro-batch (gradient accumulation reduces only then), so it can hide
behind ``backward share · compute / micro-batches``; the last bucket never hides. Pipeline bubbles and
tensor-parallel traffic are not counted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from blueprints.catalog.perf import perf_data
from blueprints.catalog.workload import memory_need, workload_factors
from blueprints.models.workload import Workload
from generator.perf.collectives import estimate
from generator.perf.predict import Prediction, job_for
from generator.perf.system import PerfError, System

TRAINING_MODES = ("pretrain", "full-finetune", "lora", "qlora")


@dataclass(frozen=True)
class Layout:
    tp: int
    pp: int
    dp: int
    gpus: int
    memory_per_gpu_gb: float  # this layout's need per GPU
    gpu_memory_gb: float
    layers: int
    given: bool  # degrees from the blueprint rather than chosen here

    @property
    def fits(self) -> bool:
        return self.memory_per_gpu_gb <= self.gpu_memory_gb

    @property
    def model_parallel(self) -> int:
        return self.tp * self.pp


@dataclass(frozen=True)
class StepEstimate:
    layout: Layout
    mode: str
    tokens_per_step: float
    micro_batches: int
    compute_s: float
    grad_bytes: float  # per DP rank
    sync: Prediction | None  # the gradient all_reduce (None: one DP rank or inference)
    window_s: float  # backward of the last micro-batch
    exposed_s: float
    step_s: float
    train_days: float | None
    target_days: float | None

    @property
    def sync_s(self) -> float:
        return self.sync.time_s if self.sync else 0.0

    @property
    def overlapped_fraction(self) -> float:
        return 1.0 - self.exposed_s / self.sync_s if self.sync_s > 0 else 1.0

    @property
    def exposed_share(self) -> float:
        return self.exposed_s / self.step_s if self.step_s > 0 else 0.0

    def as_dict(self) -> dict[str, object]:
        lay = self.layout
        return {
            "mode": self.mode,
            "layout": {
                "tensor": lay.tp,
                "pipeline": lay.pp,
                "data": lay.dp,
                "gpus": lay.gpus,
                "given": lay.given,
            },
            "memory_per_gpu_gb": round(lay.memory_per_gpu_gb, 2),
            "gpu_memory_gb": lay.gpu_memory_gb,
            "fits": lay.fits,
            "tokens_per_step": self.tokens_per_step,
            "micro_batches": self.micro_batches,
            "compute_s": round(self.compute_s, 6),
            "gradient_bytes_per_rank": round(self.grad_bytes),
            "gradient_sync": self.sync.as_dict() if self.sync else None,
            "sync_s": round(self.sync_s, 6),
            "overlap_window_s": round(self.window_s, 6),
            "exposed_s": round(self.exposed_s, 6),
            "overlapped_fraction": round(self.overlapped_fraction, 4),
            "step_s": round(self.step_s, 6),
            "exposed_share": round(self.exposed_share, 4),
            "train_days": round(self.train_days, 3) if self.train_days is not None else None,
            "target_days": self.target_days,
        }


def _tp_options(system: System) -> list[int]:
    """Tensor-parallel degrees that stay on NVLink (powers of two dividing the node), largest last."""
    limit = system.gpus_per_node if system.intra_class == "nvlink" else 1
    return [t for t in (1, 2, 4, 8, 16, 32, 64) if t <= limit and system.gpus_per_node % t == 0] or [1]


def per_gpu_memory_gb(wl: Workload, tp: int, pp: int) -> float:
    need = memory_need(wl.params, wl.mode, wl.precision, wl.sequence_length, wl.inference_batch)
    return (need.shared / (tp * pp) + need.activations_per_gpu / tp) / 1e9


def choose_layout(wl: Workload, system: System, gpus: int | None = None) -> Layout:
    """The workload's degrees if given, else the smallest TP·PP that fits (TP first)."""
    gpus = gpus or system.gpus
    _, layers_f = workload_factors().shape(wl.params)
    layers = max(1, round(layers_f))
    mem = system.gpu.memory_gb
    par = wl.parallelism
    if par.tensor or par.pipeline or par.data:
        tp = par.tensor or 1
        pp = par.pipeline or 1
        dp = par.data or max(1, gpus // (tp * pp))
        return Layout(tp, pp, dp, tp * pp * dp, per_gpu_memory_gb(wl, tp, pp), mem, layers, True)
    best: Layout | None = None
    options = []
    for tp in _tp_options(system):
        for pp in range(1, min(layers, gpus) + 1):
            if gpus % (tp * pp):
                continue
            options.append((tp * pp, -tp, tp, pp))
    for _, _, tp, pp in sorted(options):
        lay = Layout(tp, pp, gpus // (tp * pp), gpus, per_gpu_memory_gb(wl, tp, pp), mem, layers, False)
        if lay.fits:
            return lay
        if best is None or lay.memory_per_gpu_gb < best.memory_per_gpu_gb:
            best = lay
    if best is None:
        raise PerfError(f"no tensor/pipeline split of {gpus} GPUs")
    return best


def _sync_job_shape(system: System, lay: Layout) -> tuple[int, int, float]:
    """(nodes, DP ranks per node, share of the node's network) for one DP group."""
    g = system.gpus_per_node
    mp = lay.model_parallel
    if mp <= g:
        k = max(1, g // mp)
        nodes = max(1, math.ceil(lay.dp / k))
        return nodes, min(k, lay.dp), 1 / mp
    return lay.dp, 1, 1 / g


def training_step(wl: Workload, system: System, *, placement: str = "packed") -> StepEstimate:
    if wl.mode not in TRAINING_MODES and wl.mode != "inference":
        raise PerfError(f"unknown workload mode `{wl.mode}`")
    perf = perf_data().training
    lay = choose_layout(wl, system)
    if lay.gpus > system.gpus:
        raise PerfError(
            f"layout TP {lay.tp} × PP {lay.pp} × DP {lay.dp} = {lay.gpus} GPUs; "
            f"pool `{system.pool}` has {system.gpus}"
        )
    if wl.mode == "inference":
        return StepEstimate(lay, wl.mode, 0.0, 0, 0.0, 0.0, None, 0.0, 0.0, 0.0, None, wl.target_days)
    frozen = wl.mode in ("lora", "qlora")
    flops = (perf.frozen_flops_per_param_token if frozen else perf.flops_per_param_token).value
    tokens = wl.global_batch_tokens or perf.default_global_batch_tokens.value
    peak = system.gpu.bf16_tflops * 1e12 * perf.model_flops_utilization.value
    compute = flops * wl.params * tokens / (lay.gpus * peak)
    micro = max(1, math.ceil(tokens / (lay.dp * wl.sequence_length)))
    window = (1 - perf.forward_flops_per_param_token.value / flops) * compute / micro
    trained = wl.params * (workload_factors().modes[wl.mode].adapter_fraction if frozen else 1.0)
    grad_bytes = trained / lay.model_parallel * perf.grad_reduce_bytes[wl.precision].value
    sync = None
    exposed = 0.0
    if lay.dp > 1:
        nodes, k, share = _sync_job_shape(system, lay)
        job = job_for(system, nodes, ranks_per_node=k, net_share=share, placement=placement)
        est = estimate("all_reduce", max(1, int(grad_bytes)), job)
        sync = Prediction(
            est.collective,
            est.size_bytes,
            est.ranks,
            nodes,
            est.busbw_gbytes,
            est.algbw_gbytes,
            est.time_s,
            est.algorithm,
            est.protocol,
            est.bottleneck,
            est.limit,
        )
        bucket = estimate("all_reduce", max(1, int(min(grad_bytes, perf.ddp_bucket_bytes.value))), job).time_s
        exposed = min(sync.time_s, max(sync.time_s - window, bucket))
    step = compute + exposed
    days = (wl.tokens / tokens) * step / 86400 if wl.tokens else None
    return StepEstimate(
        lay, wl.mode, tokens, micro, compute, grad_bytes, sync, window, exposed, step, days, wl.target_days
    )
