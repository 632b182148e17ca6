"""Training step: layout, compute time, gradient all_reduce and its overlap."""

from __future__ import annotations

import pytest
from conftest import EXAMPLES

from blueprints.catalog.perf import perf_data
from blueprints.models import Workload
from generator.perf.system import system_for
from generator.perf.training import choose_layout, training_step
from generator.pipeline import load_and_resolve
from generator.plan.build import build_plan


@pytest.fixture(scope="module")
def superpod():
    _, cluster = load_and_resolve(EXAMPLES / "superpod-h100-4su.yaml")
    return cluster, system_for(cluster, build_plan(cluster))


def test_layout_fits_and_prefers_tensor_parallel_on_nvlink(superpod) -> None:
    _, system = superpod
    lay = choose_layout(Workload(params=70e9, mode="pretrain"), system)
    assert lay.fits and lay.tp == 8 and lay.tp * lay.pp * lay.dp == system.gpus
    small = choose_layout(Workload(params=1e9, mode="pretrain"), system)
    assert (small.tp, small.pp) == (1, 1)


def test_step_numbers_follow_the_formulas(superpod) -> None:
    _, system = superpod
    wl = Workload(params=70e9, mode="pretrain", tokens=2e12)
    st = training_step(wl, system)
    tr = perf_data().training
    tokens = tr.default_global_batch_tokens.value
    compute = 6 * 70e9 * tokens / (1024 * 989e12 * tr.model_flops_utilization.value)
    assert st.compute_s == pytest.approx(compute)
    assert st.grad_bytes == pytest.approx(
        70e9 / (st.layout.tp * st.layout.pp) * 4
    )  # fp32 gradient reduce (Megatron)
    assert st.micro_batches == tokens / (st.layout.dp * 4096)
    assert st.window_s == pytest.approx((1 - 2 / 6) * compute / st.micro_batches)
    assert st.exposed_s == pytest.approx(max(st.sync_s - st.window_s, st.exposed_s))
    assert 0 <= st.overlapped_fraction <= 1
    assert st.step_s == pytest.approx(st.compute_s + st.exposed_s)
    assert st.train_days == pytest.approx(2e12 / tokens * st.step_s / 86400)
    assert st.sync is not None and st.sync.ranks == st.layout.dp


def test_lora_reduces_only_adapters(superpod) -> None:
    _, system = superpod
    full = training_step(Workload(params=70e9, mode="full-finetune"), system)
    lora = training_step(Workload(params=70e9, mode="lora"), system)
    per_model = {m: st.grad_bytes * st.layout.model_parallel for m, st in (("full", full), ("lora", lora))}
    assert per_model["lora"] == pytest.approx(per_model["full"] * 0.01)  # workload.yaml: 1 % adapters
    assert lora.compute_s == pytest.approx(full.compute_s * 4 / 6)


def test_slower_network_exposes_more(superpod) -> None:
    cluster, _ = superpod
    wl = Workload(params=70e9, mode="pretrain")
    fast = training_step(wl, system_for(cluster, None))
    _, a100 = load_and_resolve(EXAMPLES / "hdr-fat-tree-a100.yaml")
    slow = training_step(wl, system_for(a100, build_plan(a100)))
    assert slow.sync is not None and fast.sync is not None
    assert slow.sync.busbw_gbytes < fast.sync.busbw_gbytes


def test_inference_has_no_sync(superpod) -> None:
    _, system = superpod
    st = training_step(Workload(params=70e9, mode="inference"), system)
    assert st.sync is None and st.step_s == 0 and st.layout.fits
