"""One training step: parallel layout, compute, and the traffic each parallel dimension puts on the cluster.

Memory per GPU (bytes per parameter by mode) comes from the workload catalogue
(``blueprints/catalog/workload.py``, shared with the WRK rules); FLOPs, utilisation, batch, gradient
types, the DDP bucket and the traffic constants come from ``data/perf.yaml``.

Layout: tensor parallel (TP) inside the NVLink domain, pipeline parallel (PP) across nodes, the rest data
parallel (DP), optionally with ZeRO/FSDP sharding of the model state over DP. When the workload gives no
degrees, every TP·PP split whose shard fits GPU memory is costed on this cluster and the fastest step
wins (ties: the smaller TP·PP) — so the fabric decides between more tensor, pipeline or data parallelism.

Step = compute + tensor-parallel all-reduces + pipeline sends + pipeline bubble + exposed DP sync:

* TP (Megatron-LM, arXiv:1909.08053 §3): 4 all-reduces of b·s·h activations per layer and micro-batch,
  on the TP group's NVLink; they sit on the critical path.
* PP (arXiv:2104.04473 §2.2, §4.1): each micro-batch sends b·s·h activations forward and their gradients
  back across each stage boundary (1/TP per rank with the scatter/gather optimisation), over the NICs when
  stages sit on different nodes; the 1F1B bubble costs (p−1)/m of the compute. With the interleaved
  schedule (§2.2.2: v model chunks per rank, ``parallelism.virtual_stages``) the bubble is (p−1)/(v·m) and
  "the amount of communication also increases by v".
* DP: the gradient all_reduce runs bucket by bucket during the backward pass of the last micro-batch, so
  it can hide behind ``backward share · compute / micro-batches``; the last bucket never hides. ZeRO 1/2
  move the same bytes (reduce-scatter + all-gather); ZeRO 3 / FSDP 1.5× (ZeRO §7).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from blueprints.catalog.perf import perf_data
from blueprints.catalog.schema import Gpu
from blueprints.catalog.workload import memory_need, workload_factors
from blueprints.models.workload import Workload
from generator.perf.collectives import estimate, stage_send_s
from generator.perf.predict import Prediction, job_for
from generator.perf.system import PerfError, System

TRAINING_MODES = ("pretrain", "full-finetune", "lora", "qlora")
FROZEN_MODES = ("lora", "qlora")  # the base weights are frozen: no weight gradients (LoRA §4, QLoRA §3)
SECONDS_PER_DAY = 86400
SHARDED_MODES = ("pretrain", "full-finetune")  # modes whose 16 B/param state ZeRO shards
COMPUTE_RATE_PRECISIONS = ("bf16", "fp16")  # what gpus.yaml bf16_tflops and perf.yaml's MFU describe


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
    sharding: str = "none"
    virtual_stages: int = 1  # model chunks per pipeline rank (interleaved 1F1B); 1 without a pipeline

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
    tp_s: float = 0.0  # tensor-parallel all-reduces on the critical path
    pp_s: float = 0.0  # pipeline sends on the critical path
    bubble_s: float = 0.0  # 1F1B pipeline bubble (interleaved: over the virtual stages)
    precision: str = "bf16"  # the workload's; compute is costed at the BF16 tensor rate whatever it is
    batch_tokens: float = 0.0  # the global batch the workload asked for (stated, or the default)
    pool_gpus: int = 0  # the GPUs the pool has (the layout may leave some idle)

    @property
    def notes(self) -> list[str]:
        """What the estimate changed or could not know, said beside its numbers."""
        return [n for n in (self.rate_note, self.batch_note, self.idle_note) if n]

    @property
    def idle_note(self) -> str:
        lay = self.layout
        if lay.gpus >= self.pool_gpus:
            return ""
        idle = self.pool_gpus - lay.gpus
        why = (
            f"TP {lay.tp} × PP {lay.pp} = {lay.model_parallel} must divide the ranks (Megatron)"
            if idle < lay.model_parallel
            else f"the data-parallel degree is {lay.dp}"
        )
        return f"the job runs on {lay.gpus:,} of the pool's {self.pool_gpus:,} GPUs, {idle:,} idle: {why}"

    @property
    def batch_note(self) -> str:
        if self.tokens_per_step <= self.batch_tokens:
            return ""
        return (
            f"global batch raised from {self.batch_tokens:,.0f} to {self.tokens_per_step:,.0f} tokens: "
            f"each of the {self.layout.dp:,} data-parallel ranks runs at least one sequence"
        )

    @property
    def rate_note(self) -> str:
        """What the compute term cannot know: the catalogue holds each GPU's BF16 tensor peak and a BF16 MFU
        ([LLAMA3]) only, so an fp8, fp32 or integer job is costed at that rate, and says so."""
        if self.precision in COMPUTE_RATE_PRECISIONS:
            return ""
        return (
            f"precision {self.precision} costed at the BF16 tensor rate: the catalogue holds no "
            f"{self.precision} peak or utilisation"
        )

    @property
    def model_flops_utilization(self) -> float:
        """The step's end-to-end MFU: model FLOPs over the step time at the GPUs' BF16 peak (what Llama 3 and
        Megatron report), from the compute term's rate and the share of the step it takes."""
        if self.step_s <= 0:
            return 0.0
        return perf_data().training.compute_efficiency.value * self.compute_s / self.step_s

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
                "virtual_stages": lay.virtual_stages,
            },
            "memory_per_gpu_gb": round(lay.memory_per_gpu_gb, 2),
            "gpu_memory_gb": lay.gpu_memory_gb,
            "fits": lay.fits,
            "tokens_per_step": self.tokens_per_step,
            "micro_batches": self.micro_batches,
            "compute_s": round(self.compute_s, 6),
            "notes": self.notes,
            "gradient_bytes_per_rank": round(self.grad_bytes),
            "gradient_sync": self.sync.as_dict() if self.sync else None,
            "sync_s": round(self.sync_s, 6),
            "overlap_window_s": round(self.window_s, 6),
            "exposed_s": round(self.exposed_s, 6),
            "overlapped_fraction": round(self.overlapped_fraction, 4),
            "tensor_parallel_s": round(self.tp_s, 6),
            "pipeline_send_s": round(self.pp_s, 6),
            "pipeline_bubble_s": round(self.bubble_s, 6),
            "sharding": lay.sharding,
            "step_s": round(self.step_s, 6),
            "model_flops_utilization": (
                round(self.model_flops_utilization, 4) if self.mode != "inference" else None
            ),
            "exposed_share": round(self.exposed_share, 4),
            "train_days": round(self.train_days, 3) if self.train_days is not None else None,
            "target_days": self.target_days,
        }


def _tp_options(system: System) -> list[int]:
    """Tensor-parallel degrees that stay on NVLink (powers of two dividing the NVLink domain: a node, or an
    NVL72 rack's 18 trays), largest last."""
    domain = system.gpus_per_node * system.unit_nodes if system.intra_class == "nvlink" else 1
    return [t for t in (1, 2, 4, 8, 16, 32, 64) if t <= domain and domain % t == 0] or [1]


def in_flight_share(pp: int, virtual_stages: int, micro: int) -> float:
    """The activations the first pipeline stage holds, as a share of the whole model's for one micro-batch
    (Megatron's theoretical memory, megatron/training/theoretical_memory_usage.py compute_activation_memory,
    after Korthikanti et al. arXiv:2205.05198 §4.2.3): 1F1B keeps ``pp`` micro-batches of its ``1/pp`` of the
    layers in flight (the whole model's, or ``micro/pp`` of it with fewer micro-batches); interleaving keeps
    ``1 + (pp-1)/(pp·v)`` times that ("interleaved_schedule_memory_penalty")."""
    if pp < 2:
        return 1.0
    if virtual_stages > 1:
        return 1 + (pp - 1) / (pp * virtual_stages)
    return min(1.0, micro / pp)


def per_gpu_memory_gb(
    wl: Workload, tp: int, pp: int, dp: int = 1, virtual_stages: int = 1, micro: int | None = None
) -> float:
    """Model state split over TP·PP (and, with ZeRO/FSDP, over DP as the stage says) plus the activations
    the first pipeline stage holds in flight (``micro``: its micro-batches a step, as many as the pipeline
    holds when not given)."""
    need = memory_need(wl.params, wl.mode, wl.precision, wl.sequence_length, wl.inference_batch)
    shared = need.shared
    stage = wl.parallelism.sharding
    if stage != "none" and wl.mode in SHARDED_MODES and dp > 1:
        adam = workload_factors().adam_state_bytes
        sharded = adam.optimizer  # ZeRO-1: optimizer states
        if stage in ("zero2", "zero3", "fsdp"):
            sharded += adam.grads
        if stage in ("zero3", "fsdp"):
            sharded += adam.params
        shared = shared - wl.params * adam.total + wl.params * (adam.total - sharded + sharded / dp)
    # activations ÷ TP: Megatron's sequence parallelism shards the stored layer input over the tensor-parallel
    # ranks (Korthikanti et al., arXiv:2205.05198); a job without it keeps the whole input on every TP rank
    held = in_flight_share(pp, virtual_stages, pp if micro is None else micro)
    held *= perf_data().training.micro_batch_sequences.value  # activations_per_gpu is one sequence's
    return (shared / (tp * pp) + held * need.activations_per_gpu / tp) / 1e9


def _layout(wl: Workload, tp: int, pp: int, gpus: int, mem: float, layers: int, given: bool) -> Layout:
    dp = max(1, gpus // (tp * pp))
    stages = (wl.parallelism.virtual_stages or 1) if pp > 1 else 1
    return Layout(
        tp,
        pp,
        dp,
        tp * pp * dp,
        per_gpu_memory_gb(wl, tp, pp, dp, stages, _batch(wl, dp)[2]),
        mem,
        layers,
        given,
        wl.parallelism.sharding,
        stages,
    )


def _with_stages(wl: Workload, lay: Layout, virtual_stages: int) -> Layout:
    """``lay`` run with ``virtual_stages`` model chunks a rank, its memory with them."""
    mem = per_gpu_memory_gb(wl, lay.tp, lay.pp, lay.dp, virtual_stages, _batch(wl, lay.dp)[2])
    return replace(lay, virtual_stages=virtual_stages, memory_per_gpu_gb=mem)


def model_layers(params: float) -> int:
    """Transformer layers of a model of ``params`` parameters: the catalogue's estimate, at least one."""
    _, layers_f = workload_factors().shape(params)
    return max(1, round(layers_f))


def most_virtual_stages(layers: int, pp: int) -> int:
    """Model chunks one pipeline rank can hold: a layer each at least, of the rank's share rounded up
    (Megatron's uneven first and last stages take the rest)."""
    return math.ceil(layers / pp)


def chunk_options(wl: Workload, lay: Layout) -> list[int]:
    """Virtual-stage counts to cost for a chosen layout: the workload's if it states one, else 1 and every
    power of two up to the layers a rank holds (a chunk holds at least one layer; the layer count is the
    catalogue's estimate from the parameters, and Megatron's uneven first and last stages take the rest)
    whose in-flight activations still fit."""
    if lay.pp < 2 or wl.parallelism.virtual_stages is not None:
        return [lay.virtual_stages]
    most = most_virtual_stages(lay.layers, lay.pp)
    counts = [v for v in (1, 2, 4, 8, 16, 32, 64, 128) if v <= most]
    return [v for v in counts if v == 1 or _with_stages(wl, lay, v).fits]


def _interleaved(wl: Workload, system: System, lay: Layout) -> tuple[float, Layout]:
    """The fastest virtual-stage count of a chosen layout and its step time. The count scales only the bubble
    (÷ v) and the stage sends (× v), so one step at the layout's count prices every other."""
    st = _step(wl, system, lay)
    base = st.step_s - st.bubble_s - st.pp_s
    one_bubble, one_send = st.bubble_s * lay.virtual_stages, st.pp_s / lay.virtual_stages
    best = min(chunk_options(wl, lay), key=lambda v: (round(one_bubble / v + one_send * v, 9), v))
    return base + one_bubble / best + one_send * best, _with_stages(wl, lay, best)


def layout_options(wl: Workload, system: System, gpus: int | None = None) -> list[Layout]:
    """Every TP (on NVLink) × PP split of ``gpus``, smallest TP·PP first (larger TP first on a tie). A split
    that does not divide the GPUs runs on the largest multiple of TP·PP they hold and leaves the rest idle:
    Megatron refuses a world size TP·PP does not divide (megatron/core/parallel_state.py
    initialize_model_parallel, "world_size ... is not divisible by tensor_model_parallel_size x
    pipeline_model_parallel_size"), so a job is launched on fewer ranks. Only divisors were tried before, and
    a count with no good divisor (1,777 nodes, a prime) got a 71-stage pipeline."""
    gpus = gpus or system.gpus
    layers = model_layers(wl.params)
    training = wl.mode in TRAINING_MODES  # a served model's split uses the GPUs it is given, none idle
    options = []
    for tp in _tp_options(system):
        for pp in range(1, min(layers, gpus) + 1):
            if tp * pp <= gpus and (training or gpus % (tp * pp) == 0):
                options.append((tp * pp, -tp, tp, pp))
    return [
        _layout(wl, tp, pp, gpus, system.gpu.memory_gb, layers, False) for _, _, tp, pp in sorted(options)
    ]


def choose_layout(wl: Workload, system: System, gpus: int | None = None) -> Layout:
    """The workload's degrees if given, else the fitting split that trains fastest on this cluster
    (``_fastest``; a served model: the fitting split of the fewest GPUs)."""
    gpus = gpus or system.gpus
    par = wl.parallelism
    if par.tensor or par.pipeline or par.data:
        tp = par.tensor or 1
        pp = par.pipeline or 1
        dp = par.data or max(1, gpus // (tp * pp))
        layers = model_layers(wl.params)
        if pp > layers:  # WRK004 says so at validate; the estimate does not cost what cannot run
            raise PerfError(
                f"pipeline {pp} stages, but the model has ~{layers} layers: a stage needs one at least"
            )
        return _layout(wl, tp, pp, tp * pp * dp, system.gpu.memory_gb, layers, True)
    options = layout_options(wl, system, gpus)
    if not options:
        raise PerfError(f"no tensor/pipeline split of {gpus} GPUs")
    fitting = [lay for lay in options if lay.fits]
    if not fitting:
        return min(options, key=lambda lay: lay.memory_per_gpu_gb)
    if wl.mode not in TRAINING_MODES:
        return fitting[0]
    return _fastest(wl, system, fitting)


def _fastest(wl: Workload, system: System, fitting: list[Layout]) -> Layout:
    """The fitting layout that trains fastest on the batch asked for: the least raise of that batch (a
    data-parallel rank runs at least one sequence, so many ranks raise a small batch, and the batch is the
    user's hyperparameter), then the least time a token, fewer model-parallel GPUs, fewer virtual stages.
    Layouts are costed in the order of that key with their floor (compute and bubble, which cost no
    collective) in place of their time, and the search stops at a floor past the best found: each costed
    step asks the fabric for its collectives, and a pool of a few thousand GPUs has hundreds of splits."""
    works = [_work(wl, system, lay) for lay in fitting]
    floors = sorted(
        ((round(w.tokens / w.asked, 9), round(w.floor_s(lay, max(chunk_options(wl, lay))) / w.tokens, 15)), i)
        for i, (w, lay) in enumerate(zip(works, fitting, strict=True))
    )
    costed: list[tuple[tuple[float, float], Layout]] = []
    best = (math.inf, math.inf)
    for floor, i in floors:
        if floor > best:
            break
        step_s, lay = _interleaved(wl, system, fitting[i])
        key = (floor[0], round(step_s / works[i].tokens, 15))
        costed.append((key, lay))
        best = min(best, key)
    return min(costed, key=lambda c: (c[0], c[1].model_parallel, c[1].virtual_stages))[1]


def _sync_job_shape(system: System, lay: Layout) -> tuple[int, int, float]:
    """(nodes, DP ranks per node, share of the node's network) for one DP group."""
    g = system.gpus_per_node
    mp = lay.model_parallel
    if mp <= g:
        # the group's dp ranks, one per model-parallel group packed onto the nodes, span the nodes its
        # dp·mp GPUs fill: with mp not dividing a node (3 on 8 GPUs) g // mp undercounted the ranks a node
        # holds and asked for more nodes than the pool has (the estimate was dropped)
        nodes = max(1, min(system.pool_nodes, math.ceil(lay.dp * mp / g)))
        return nodes, min(math.ceil(lay.dp / nodes), lay.dp), 1 / mp
    return lay.dp, 1, 1 / g


def _tp_time(system: System, lay: Layout, micro: int, hidden: float) -> float:
    """Megatron TP: 4 all-reduces of b·s·h activations per layer and micro-batch, on the stage's layers."""
    if lay.tp < 2:
        return 0.0
    tr = perf_data().training
    size = tr.micro_batch_sequences.value * hidden * tr.activation_bytes.value
    return (
        0.0
        if size <= 0
        else _tp_allreduce(system, lay, size)
        * tr.tp_allreduces_per_layer.value
        * (lay.layers / lay.pp)
        * micro
    )


def _tp_allreduce(system: System, lay: Layout, size_per_token_seq: float) -> float:
    g = system.gpus_per_node
    # a TP group larger than the NVLink domain spills onto the NICs (the model then sees the network)
    nodes = min(system.pool_nodes, math.ceil(lay.tp / g))
    job = job_for(system, nodes, ranks_per_node=min(lay.tp, g))
    return estimate("all_reduce", max(1, int(size_per_token_seq)), job).time_s


def _pp_time(system: System, lay: Layout, micro: int, act_bytes: float) -> float:
    """Each micro-batch sends its activations forward and their gradients back across a stage boundary:
    1/TP per rank from each of the stage's TP ranks, over the NICs when the stages sit in different NVLink
    domains, else over NVLink (the collectives' point-to-point send, ``stage_send_s``)."""
    nodes = _stage_pair_nodes(system, lay) if lay.pp >= 2 else 0
    if nodes == 0:
        return 0.0
    g = system.gpus_per_node
    ranks = min(lay.tp, g) if nodes > 1 else min(2 * lay.tp, g)
    return 2 * micro * stage_send_s(act_bytes / lay.tp, job_for(system, nodes, ranks_per_node=ranks))


def _stage_pair_nodes(system: System, lay: Layout) -> int:
    """The nodes two neighbouring stages span: one node; two nodes (of one NVLink domain, as NVL72 trays, or
    of two); two NVLink domains' worth when a stage pair is larger than a domain. 0: no link to send over."""
    g, domain_nodes = system.gpus_per_node, system.unit_nodes
    if lay.model_parallel > g * domain_nodes and system.net is not None:
        nodes = 2 * domain_nodes
    elif lay.model_parallel > g:
        nodes = 2
    else:
        nodes = 1 if g > 1 and system.intra is not None else 0
    if nodes > system.pool_nodes or (nodes > domain_nodes and system.net is None):
        return 0
    return nodes


def flops_per_param_token(mode: str) -> float:
    """Training FLOPs per parameter and token: 6 (Kaplan), 4 when the base weights are frozen (LoRA/QLoRA)."""
    tr = perf_data().training
    return (tr.frozen_flops_per_param_token if mode in FROZEN_MODES else tr.flops_per_param_token).value


def sustained_flops(gpu: Gpu) -> float:
    """FLOP/s one GPU sustains over a whole training step, communication and bubble included: its BF16 peak
    at the catalogue's end-to-end model FLOPs utilisation (a first sizing that costs no step)."""
    return gpu.bf16_tflops * 1e12 * perf_data().training.model_flops_utilization.value


def compute_flops(gpu: Gpu) -> float:
    """FLOP/s one GPU runs the model's compute at, before the step adds its TP/PP traffic, bubble and exposed
    sync (charging those on top of an end-to-end utilisation would count them twice)."""
    return gpu.bf16_tflops * 1e12 * perf_data().training.compute_efficiency.value


@dataclass(frozen=True)
class _Work:
    """A layout's step: the batch asked for and the one run, its micro-batches a DP rank, its compute."""

    asked: float
    tokens: float
    micro: int
    compute_s: float

    def floor_s(self, lay: Layout, most_chunks: int) -> float:
        """No step of this layout is shorter: its compute and its bubble at the most virtual stages (the
        traffic and exposed sync only add)."""
        return self.compute_s * (1 + (lay.pp - 1) / (most_chunks * self.micro))


def _batch(wl: Workload, dp: int) -> tuple[float, float, int]:
    """(tokens asked a step, tokens run a step, micro-batches a DP rank runs)."""
    perf = perf_data().training
    seq_per_micro = perf.micro_batch_sequences.value
    # every data-parallel rank runs at least one whole micro-batch a step: a smaller global batch is not what
    # the GPUs compute (a batch of one token was charged one token's compute)
    asked = wl.global_batch_tokens or perf.default_global_batch_tokens.value
    tokens = max(asked, dp * wl.sequence_length * seq_per_micro)
    return asked, tokens, max(1, math.ceil(tokens / (dp * wl.sequence_length * seq_per_micro)))


def _work(wl: Workload, system: System, lay: Layout) -> _Work:
    asked, tokens, micro = _batch(wl, lay.dp)
    compute = flops_per_param_token(wl.mode) * wl.params * tokens / (lay.gpus * compute_flops(system.gpu))
    return _Work(asked, tokens, micro, compute)


def _step(wl: Workload, system: System, lay: Layout, *, placement: str = "packed") -> StepEstimate:
    perf = perf_data().training
    frozen = wl.mode in FROZEN_MODES
    flops = flops_per_param_token(wl.mode)
    seq_per_micro = perf.micro_batch_sequences.value
    work = _work(wl, system, lay)
    asked, tokens, micro, compute = work.asked, work.tokens, work.micro, work.compute_s
    window = (1 - perf.forward_flops_per_param_token.value / flops) * compute / micro
    hidden, _ = workload_factors().shape(wl.params)
    act_bytes = seq_per_micro * wl.sequence_length * hidden * perf.activation_bytes.value
    tp_s = _tp_time(system, lay, micro, wl.sequence_length * hidden)
    chunks = lay.virtual_stages
    pp_s = chunks * _pp_time(system, lay, micro, act_bytes)
    bubble = (lay.pp - 1) / (chunks * micro) * compute
    trained = wl.params * (workload_factors().modes[wl.mode].adapter_fraction if frozen else 1.0)
    grad_bytes = trained / lay.model_parallel * perf.grad_reduce_bytes[wl.precision].value
    sync, exposed = _dp_sync(system, lay, grad_bytes, window, placement)
    step = compute + tp_s + pp_s + bubble + exposed
    days = (wl.tokens / tokens) * step / SECONDS_PER_DAY if wl.tokens else None
    return StepEstimate(
        lay,
        wl.mode,
        tokens,
        micro,
        compute,
        grad_bytes,
        sync,
        window,
        exposed,
        step,
        days,
        wl.target_days,
        tp_s,
        pp_s,
        bubble,
        wl.precision,
        asked,
        system.gpus,
    )


def _dp_sync(
    system: System, lay: Layout, grad_bytes: float, window: float, placement: str
) -> tuple[Prediction | None, float]:
    """The DP gradient sync (all_reduce, or ZeRO's reduce-scatter + all-gather: the same bytes; ZeRO 3 /
    FSDP 1.5×) and the part of it the last micro-batch's backward cannot hide."""
    if lay.dp < 2:
        return None, 0.0
    perf = perf_data().training
    nodes, k, share = _sync_job_shape(system, lay)
    job = job_for(system, nodes, ranks_per_node=k, net_share=share, placement=placement)
    est = estimate("all_reduce", max(1, int(grad_bytes)), job)
    factor = perf.zero3_traffic_factor.value if lay.sharding in ("zero3", "fsdp") else 1.0
    sync = Prediction(
        est.collective,
        est.size_bytes,
        est.ranks,
        nodes,
        est.busbw_gbytes,
        est.algbw_gbytes,
        est.time_s * factor,
        est.algorithm,
        est.protocol,
        est.bottleneck,
        est.limit,
    )
    bucket = estimate("all_reduce", max(1, int(min(grad_bytes, perf.ddp_bucket_bytes.value))), job).time_s
    return sync, min(sync.time_s, max(sync.time_s - window, bucket))


def training_step(wl: Workload, system: System, *, placement: str = "packed") -> StepEstimate:
    if wl.mode not in TRAINING_MODES and wl.mode != "inference":
        raise PerfError(f"unknown workload mode `{wl.mode}`")
    lay = choose_layout(wl, system)
    if lay.gpus > system.gpus:
        raise PerfError(
            f"layout TP {lay.tp} × PP {lay.pp} × DP {lay.dp} = {lay.gpus} GPUs; "
            f"pool `{system.pool}` has {system.gpus}"
        )
    if wl.mode == "inference":
        return StepEstimate(
            lay, wl.mode, 0.0, 0, 0.0, 0.0, None, 0.0, 0.0, 0.0, None, wl.target_days, pool_gpus=system.gpus
        )
    return _step(wl, system, lay, placement=placement)
