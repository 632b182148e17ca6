"""The closed forms the model is built on, checked exactly."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from blueprints.catalog.perf import perf_data
from generator.perf.collectives import Job, bus_factor, candidates, estimate, ring_time_s
from generator.perf.system import Limit, wire_efficiency


def _ramp_s(latency_us: float, size: int, collective: str = "all_reduce") -> float:
    """perf.yaml's fitted mid-size ramp, written out: factor × min(latency, cap) × sqrt(min(1, S / bytes)),
    added to all_reduce (the collective it was fitted to), plus the fitted per-call overhead
    (launch_overhead_us), added to every predicted time."""
    nc = perf_data().nccl
    scale = math.sqrt(min(1.0, size / nc.mid_size_ramp_bytes.value))
    ramp = nc.mid_size_ramp_factor.value * min(latency_us, nc.mid_size_ramp_latency_cap_us.value) * scale
    return ((ramp if collective == "all_reduce" else 0.0) + nc.launch_overhead_us.value) * 1e-6


@pytest.mark.parametrize(
    ("collective", "n", "factor"),
    [
        ("all_reduce", 2, 1.0),
        ("all_reduce", 8, 1.75),
        ("all_reduce", 1024, 2 * 1023 / 1024),
        ("all_gather", 8, 0.875),
        ("reduce_scatter", 16, 15 / 16),
        ("alltoall", 4, 0.75),
        ("broadcast", 8, 1.0),
        ("broadcast", 1000, 1.0),
        ("all_reduce", 1, 0.0),
    ],
)
def test_bus_factors(collective: str, n: int, factor: float) -> None:
    assert bus_factor(collective, n) == pytest.approx(factor, rel=0, abs=1e-15)


def _one_node(gbytes: float, k: int = 8) -> Job:
    return Job(
        units=1,
        ranks_per_unit=k,
        intra=Limit(gbytes, "link"),
        intra_class="nvlink",
        net=None,
        spread_net=None,
        net_latency_us=0.0,
        nvls=None,
        sharp=False,
        ll128=True,
        sm_arch=90,
    )


@pytest.mark.parametrize("size", [1 << 20, 1 << 27, 1 << 33])
@pytest.mark.parametrize(
    ("collective", "steps"), [("all_reduce", 14), ("all_gather", 7), ("reduce_scatter", 7)]
)
def test_ring_simple_time_matches_closed_form(size: int, collective: str, steps: int) -> None:
    lat = {14: 8.4 + 14 * 3.4, 7: 8.4 + 7 * 3.4}[steps]  # NCCL baseLat ring/simple + steps × NVLink hwLat
    est = estimate(collective, size, _one_node(370.8), algorithms=("ring",))
    if (
        size < 1 << 27
    ):  # small messages pick LL/LL128 (lower latency); the Simple closed form is for large ones
        assert est.protocol in ("ll", "ll128")
        return
    assert est.protocol == "simple"
    # nccl-tests' bus factor for 8 ranks (doc/PERFORMANCE.md): 2(n-1)/n all-reduce, (n-1)/n gather/scatter
    factor = {"all_reduce": 14 / 8, "all_gather": 7 / 8, "reduce_scatter": 7 / 8}[collective]
    expect = lat * 1e-6 + size * factor / 370.8e9
    assert ring_time_s(collective, 8, size, 370.8, lat) == pytest.approx(expect, rel=1e-12)
    expect += _ramp_s(lat, size, collective)  # the fitted mid-size ramp (perf.yaml nccl.mid_size_ramp_*)
    assert est.time_s == pytest.approx(expect, rel=1e-12)
    assert est.busbw_gbytes == pytest.approx(size / expect / 1e9 * factor, rel=1e-12)


def test_large_ring_busbw_tends_to_link_bandwidth() -> None:
    est = estimate("all_reduce", 1 << 40, _one_node(100.0), algorithms=("ring",))
    assert est.protocol == "simple"
    assert est.busbw_gbytes == pytest.approx(100.0, rel=1e-4)
    assert est.bottleneck == "link"


def _nodes(units: int, sm_arch: int = 90) -> Job:
    """``units`` nodes of 8 GPUs, NVLink as NCCL counts H100's and 8 × 400G NICs."""
    return Job(
        units=units,
        ranks_per_unit=8,
        intra=Limit(370.8, "nvl"),
        intra_class="nvlink",
        net=Limit(376.0, "nic"),
        spread_net=Limit(376.0, "nic"),
        net_latency_us=0.5,
        nvls=None,
        sharp=False,
        ll128=True,
        sm_arch=sm_arch,
    )


def test_multi_node_ring_latency_counts_network_steps() -> None:
    """NCCL tuning.cc, written out with its own numbers: (nsteps − nInter)·max(intra, 3·net overhead) +
    nInter·(net + 2·hop) for Simple: 32 ranks on 4 nodes → 62 steps, 8 of them across the network:
    8.4 + 54·max(3.4, 3·1.0) + 8·(14 + 2·0.5) = 312 µs, and at this size (≥ 64 B per channel and rank)
    ncclTopoGetAlgoTime's ring plateau ×1.4 (sm90): 436.8 µs."""
    job = _nodes(4)
    n = 32
    lat = 312.0 * 1.4
    size = 1 << 36
    est = estimate("all_reduce", size, job, algorithms=("ring",))
    assert est.protocol == "simple"
    # the fixed part of the time: NCCL's latency and the fitted per-call overhead
    assert est.latency_us == pytest.approx(lat + perf_data().nccl.launch_overhead_us.value)
    expect = lat * 1e-6 + size * (2 * (n - 1) / n) / 370.8e9 + _ramp_s(lat, size)
    assert est.time_s == pytest.approx(expect, rel=1e-12)
    assert est.limit == "nvl"


def test_latency_bound_rows_name_latency() -> None:
    est = estimate("all_reduce", 8, _one_node(370.8))
    assert est.bottleneck.startswith("latency")


def test_wire_efficiency_from_header_bytes() -> None:
    assert wire_efficiency("infiniband", None) == pytest.approx(4096 / (4096 + 26))
    assert wire_efficiency("roce", None) == pytest.approx(4096 / (4096 + 44 + 38))
    assert wire_efficiency("roce", 9000) == pytest.approx(4096 / (4096 + 82))  # RDMA payload stops at 4096
    assert wire_efficiency("roce", 1500) == pytest.approx(1024 / (1024 + 82))
    assert wire_efficiency("ethernet", None) == pytest.approx(1448 / 1538)


@pytest.mark.parametrize(("sm_arch", "factor"), [(90, 1.4), (80, 1.4), (70, 1.9)])
def test_ring_plateau_starts_at_64_bytes_a_channel_and_rank(sm_arch: int, factor: float) -> None:
    # NCCL tuning.cc ncclTopoGetAlgoTime, "Plateau effect of ring": a Simple ring all_reduce across nodes pays
    # its latency x1.4 (x1.9 before sm80) once nBytes / (nChannels * nRanks) >= 64; the model counts NCCL's
    # MAXCHANNELS channels
    job = _nodes(2, sm_arch)
    start = 64 * int(perf_data().nccl.max_channels.value) * job.ranks
    ring = {(c.algorithm, c.protocol): c for c in candidates("all_reduce", job)}
    simple = ring[("ring", "simple")]
    assert simple.latency_at(start) == pytest.approx(simple.latency_us * factor)
    assert simple.latency_at(start - 1) == pytest.approx(simple.latency_us)
    assert ring[("ring", "ll128")].latency_at(start) == ring[("ring", "ll128")].latency_us
    gather = {(c.algorithm, c.protocol): c for c in candidates("all_gather", job)}[("ring", "simple")]
    assert gather.latency_at(start) == gather.latency_us
    one_node = replace(job, units=1, net=None, spread_net=None)
    alone = {(c.algorithm, c.protocol): c for c in candidates("all_reduce", one_node)}[("ring", "simple")]
    assert alone.latency_at(start) == alone.latency_us
