"""The activations a pipeline holds in flight, splits that leave GPUs idle, and the advisor taking back GPUs
a time target did not need.

Oracles: Megatron's theoretical memory (megatron/training/theoretical_memory_usage.py: the first stage holds
``pp`` micro-batches of ``1/pp`` of the layers, ``min(1, m/pp)`` of that with fewer micro-batches, and
``1 + (pp-1)/(pp·v)`` times it interleaved), written out as numbers; Megatron's rule that TP·PP divides the
ranks (megatron/core/parallel_state.py); and the costed step of every split, tried one by one."""

from __future__ import annotations

from dataclasses import replace

import pytest
from conftest import EXAMPLES

from blueprints.catalog.workload import memory_need
from blueprints.models import Workload
from blueprints.models.workload import Parallelism
from generator.perf.advice import Request
from generator.perf.advisor import advise
from generator.perf.system import system_for
from generator.perf.training import (
    chunk_options,
    in_flight_share,
    layout_options,
    per_gpu_memory_gb,
    training_step,
)
from generator.pipeline import load_and_resolve
from generator.plan.build import build_plan


@pytest.fixture(scope="module")
def superpod_127():
    """NVIDIA's SuperPOD example as shipped: 127 DGX H100 (a prime count of nodes, 1,016 GPUs)."""
    _, cluster = load_and_resolve(EXAMPLES / "superpod-h100-4su.yaml")
    return system_for(cluster, build_plan(cluster))


@pytest.mark.parametrize(
    ("pp", "v", "micro", "share"),
    [
        (1, 1, 1, 1.0),  # no pipeline: one micro-batch's activations
        (16, 1, 64, 1.0),  # 1F1B: 16 micro-batches of 1/16 of the layers
        (16, 1, 4, 0.25),  # only 4 micro-batches to hold: 4/16
        (16, 8, 64, 1.1171875),  # interleaved: 1 + 15/128 (Llama 3's TP 8 x PP 16 at 8 stages)
        (4, 2, 8, 1.375),  # 1 + 3/8
    ],
)
def test_in_flight_share_is_megatrons(pp: int, v: int, micro: int, share: float) -> None:
    assert in_flight_share(pp, v, micro) == pytest.approx(share, rel=1e-12)


def test_interleaving_adds_its_penalty_to_the_activations_only() -> None:
    """405B, TP 8 x PP 16: interleaving at 8 stages adds 15/128 of one sequence's activations (÷ TP) a GPU and
    4 micro-batches hold 4/16 of them; the model state does not move. A pin of Megatron's factors (written
    out) on the catalogue's activations (workload.yaml), not an independent measurement."""
    wl = Workload(params=405e9, mode="pretrain", sequence_length=8192)
    act = memory_need(405e9, "pretrain", "bf16", 8192).activations_per_gpu
    one = per_gpu_memory_gb(wl, 8, 16, 64, 1, 64)
    eight = per_gpu_memory_gb(wl, 8, 16, 64, 8, 64)
    few = per_gpu_memory_gb(wl, 8, 16, 64, 1, 4)
    assert eight - one == pytest.approx(15 / 128 * act / 8 / 1e9, rel=1e-9)
    assert one - few == pytest.approx(12 / 16 * act / 8 / 1e9, rel=1e-9)


def test_virtual_stages_that_do_not_fit_are_not_offered(superpod_127) -> None:
    wl = Workload(params=70e9, mode="pretrain")
    lay = next(o for o in layout_options(wl, superpod_127) if o.fits and o.pp >= 4)
    assert chunk_options(wl, replace(lay, gpu_memory_gb=1000.0))[:3] == [1, 2, 4]
    # a GPU with just the room for the 1F1B schedule: no interleaving (its in-flight activations grow)
    tight = replace(lay, gpu_memory_gb=lay.memory_per_gpu_gb + 1e-6)
    assert chunk_options(wl, tight) == [1]


def test_a_prime_node_count_runs_a_split_that_leaves_gpus_idle(superpod_127) -> None:
    """70B without sharding on 127 DGX: every TP x PP that divides 1,016 GPUs is at most 8, and none fits
    (WRK005 refused the workload). A job runs on the largest multiple of TP·PP the pool holds."""
    system = superpod_127
    wl = Workload(params=70e9, mode="pretrain", tokens=2e12)
    dividing = [o for o in layout_options(wl, system) if system.gpus % o.model_parallel == 0]
    assert dividing and not any(o.fits for o in dividing)
    st = training_step(wl, system)
    lay = st.layout
    assert lay.fits and system.gpus % lay.model_parallel != 0
    assert lay.gpus == lay.model_parallel * (system.gpus // lay.model_parallel)
    idle = system.gpus - lay.gpus
    assert 0 < idle < lay.model_parallel
    assert any(f"{idle:,} idle" in n for n in st.notes)
    # as given by a user, the same split costs the same step
    given = Workload(
        params=70e9,
        mode="pretrain",
        tokens=2e12,
        parallelism=Parallelism(tensor=lay.tp, pipeline=lay.pp, virtual_stages=lay.virtual_stages),
    )
    assert training_step(given, system).step_s == pytest.approx(st.step_s, rel=1e-9)
    # a data-parallel degree given below the pool's: its own reason
    half = Workload(
        params=70e9, mode="pretrain", parallelism=Parallelism(tensor=8, data=63, sharding="zero1")
    )
    notes = training_step(half, system).notes
    assert any("1,016 GPUs, 512 idle: the data-parallel degree is 63" in n for n in notes), notes


@pytest.mark.parametrize("params", [13e9, 70e9, 175e9])
def test_the_chooser_stops_early_only_where_nothing_is_faster(superpod_127, params: float) -> None:
    """The chooser costs splits in the order of their floor (compute and bubble) and stops at a floor above
    the best; every fitting split costed one by one (as a user would give it) is no faster a token."""
    system = superpod_127
    wl = Workload(params=params, mode="pretrain", parallelism=Parallelism(sharding="zero1"))
    chosen = training_step(wl, system)
    steps = [
        training_step(
            Workload(
                params=params,
                mode="pretrain",
                parallelism=Parallelism(tensor=o.tp, pipeline=o.pp, virtual_stages=v, sharding="zero1"),
            ),
            system,
        )
        for o in layout_options(wl, system)
        if o.fits
        for v in chunk_options(wl, o)
    ]
    best = min(st.step_s / st.tokens_per_step for st in steps)
    assert chosen.step_s / chosen.tokens_per_step == pytest.approx(best, rel=1e-9)


def test_the_chooser_keeps_the_batch_then_compares_time_a_token(superpod_127) -> None:
    """7B on 1,016 GPUs, 8k sequences and a 4M-token batch: a split of more data-parallel ranks than 512 runs
    more sequences a step than asked (each rank at least one). The choice keeps the batch asked where a
    split can, then trains fastest a token; comparing steps of different sizes picked by the wrong measure,
    and a time a token alone would pick a batch the user did not ask for."""
    system = superpod_127
    wl = Workload(params=7e9, mode="pretrain", sequence_length=8192)

    def key(st) -> tuple[float, float]:  # type: ignore[no-untyped-def]
        return (round(st.tokens_per_step / st.batch_tokens, 9), st.step_s / st.tokens_per_step)

    chosen = training_step(wl, system)
    assert chosen.tokens_per_step == chosen.batch_tokens  # some split runs the batch asked
    for o in [o for o in layout_options(wl, system) if o.fits][:40]:
        given = Workload(
            params=7e9,
            mode="pretrain",
            sequence_length=8192,
            parallelism=Parallelism(tensor=o.tp, pipeline=o.pp),
        )
        st = training_step(given, system)
        k, c = key(st), key(chosen)
        assert c[0] < k[0] or c[1] <= k[1] * (1 + 1e-9), (o, st)


def test_a_served_model_uses_the_gpus_it_is_given() -> None:
    """200B served on one DGX H100: the split of the fewest GPUs was TP 2 × PP 3, six of eight GPUs and no
    word of the two idle; a served model's split divides the GPUs (TP 8, as before the idle splits)."""
    _, cluster = load_and_resolve(EXAMPLES / "single-dgx-h100.yaml")
    system = system_for(cluster, build_plan(cluster))
    st = training_step(Workload(params=200e9, mode="inference", precision="bf16"), system)
    assert (st.layout.tp, st.layout.pp, st.layout.gpus) == (8, 1, 8) and st.notes == []


def test_the_advisor_takes_back_gpus_the_target_does_not_need() -> None:
    """7B on 1e12 tokens in 10 days: the first sizing (40 % end-to-end MFU) gave 16 nodes, and the costed step
    finished in 7.3 days; rounds that only raise kept them all."""
    adv = advise(Request(params=7e9, tokens=1e12, target_days=10))
    st = adv.training
    assert st is not None and st.train_days is not None
    assert adv.gpus < 128 and st.train_days <= 10
    assert any("within 10" in r for r in adv.reasons)
    fewer = advise(Request(params=7e9, tokens=1e12, target_days=10, gpus=adv.gpus - 8))
    assert fewer.training is not None and fewer.training.train_days is not None
    assert fewer.training.train_days > 10
