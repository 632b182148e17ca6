"""NCCL's channel graphs between nodes: how many channels a ring or tree gets and how fast NCCL plans each.

NCCL searches its inter-node graphs (src/graph/search.cc ``ncclTopoCompute``, perf.yaml [NCCL-SEARCH]) by
trying per-channel speeds from a fixed array, highest first: every channel enters and leaves the node through
one NIC and crosses each GPU's NVLink once, so a speed ``s`` fits ``floor(NIC / s)`` channels per NIC and
``floor(NVLink / s)`` per GPU; the search keeps the best channels × speed product (at most MAXCHANNELS/2,
``Nccl.ring_graph_max_channels()``) and stops once the next speed is no more than .49 of the one found. Two
consequences the plain link model misses:

* eight 400G NICs and NVLink 4 (18 × 20.6 = 370.8 GB/s as NCCL counts it): 48 GB/s fits 7 channels, 45 fits
  8, so rings between H100 nodes are planned at 8 × 45 = 360 GB/s, under both the NICs and NVLink (and run on
  16 channels, two a NIC, which carry less: predict.py ``_channel_bound``);
* the tree's bus bandwidth is at most channels × ``perChMaxTreeBw`` (src/graph/tuning.cc, perf.yaml
  [NCCL-TUNE]), so with fewer NICs than GPUs (fewer channels) the two-node "tree effect" stays near the
  network: 4 HDR NICs → 4 channels × 23.6 = 94 GB/s, not 2 × 96.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from blueprints.catalog.perf import PerfData, Series


@dataclass(frozen=True)
class Graph:
    """A channel graph: ``channels`` of ``speed`` GB/s each (after NCCL's channel duplication for trees)."""

    channels: int
    speed: float

    @property
    def gbytes(self) -> float:
        return self.channels * self.speed


def _table(table: dict[int, Series], sm_arch: int) -> Series:
    keys = [k for k in sorted(table) if k <= sm_arch]
    return table[keys[-1] if keys else min(table)]


def search(
    sm_arch: int, nic_gbytes: float, nics: float, nvlink_gbytes: float | None, perf: PerfData
) -> Graph | None:
    """The inter-node ring graph NCCL's search finds for a unit with ``nics`` NICs of ``nic_gbytes`` each (as
    NCCL counts them: the lesser of line rate and the PCIe slot) and ``nvlink_gbytes`` per GPU inside it;
    ``channels`` may be capped lower (``NCCL_MAX_NCHANNELS``-like) by the caller. None: no NIC."""
    nc = perf.nccl
    if nics < 1 or nic_gbytes <= 0:
        return None
    cap = nc.ring_graph_max_channels()
    best: Graph | None = None
    for s in _table(nc.search_speeds_gbytes, sm_arch).values:
        if s > nic_gbytes + 1e-9:
            continue
        if best is not None and s / best.speed <= nc.search_stop_ratio.value:
            break
        per_nic = math.floor(nic_gbytes / s + 1e-9)
        ch = min(cap, int(nics) * per_nic)
        if nvlink_gbytes:
            ch = min(ch, math.floor(nvlink_gbytes / s + 1e-9))
        if ch >= 1 and (best is None or ch * s > best.gbytes + 1e-9):
            best = Graph(ch, s)
    return best


def duplicated(graph: Graph, sm_arch: int, perf: PerfData) -> Graph:
    """``ncclTopoDupChannels``: twice the channels at half the speed, unless the speed is under 25 GB/s or
    (sm90+) under 50 GB/s with more than 4 channels."""
    nc = perf.nccl
    if graph.speed < nc.dup_channels_min_gbytes.value:
        return graph
    if (
        sm_arch > nc.dup_channels_sm90_above_sm_arch.value
        and graph.speed < nc.dup_channels_sm90_gbytes.value
        and graph.channels > nc.dup_channels_sm90_channels.value
    ):
        return graph
    dup = min(2 * graph.channels, nc.ring_graph_max_channels())
    return Graph(dup, graph.speed / math.ceil(dup / graph.channels))


def run_channels(graph: Graph, sm_arch: int, perf: PerfData) -> int:
    """The channels NCCL runs between nodes by default (connect.cc ``ncclTopoPostset``, perf.yaml
    postset_*): the duplicated graph's channels twice over, up to MAXCHANNELS, and on sm90+ twice again
    while the ring graph's per-channel speed is above 45 GB/s and fewer than 16 run. NCCL_MIN_NCHANNELS
    copies channels beyond this number; NCCL's tuner still counts the graph's (tuning.cc
    ``graphs[a]->nChannels``)."""
    nc = perf.nccl
    dup = duplicated(graph, sm_arch, perf)
    most = int(nc.max_channels.value)
    n = min(most, dup.channels * int(nc.postset_channel_factor.value))
    if (
        sm_arch >= nc.postset_sm90_double_min_sm_arch.value
        and dup.speed > nc.postset_sm90_double_above_gbytes.value
        and n < nc.postset_sm90_double_below_channels.value
    ):
        n = min(most, int(nc.postset_sm90_double_factor.value) * n)
    return n


def node_band(units: int) -> int:
    """The column of NCCL's per-channel tables (tuning.cc N1 / N2 / N4) for ``units`` nodes: 1, 2, more."""
    return 0 if units <= 1 else (1 if units == 2 else 2)


def ring_ll128_cap(graph: Graph, sm_arch: int, units: int, perf: PerfData) -> float:
    """NCCL's per-channel LL128 maximum for rings (``perChMaxRingLL128Bws``, perf.yaml
    ring_ll128_per_channel_max_gbytes by GPU architecture): ring LL128 bus bandwidth ≤ channels × that, the
    channels after NCCL's duplication (search.cc duplicates ring and tree graphs alike)."""
    row = _table(perf.nccl.ring_ll128_per_channel_max_gbytes, sm_arch).values
    index = node_band(units)
    return duplicated(graph, sm_arch, perf).channels * row[index]


def tree_channel_cap(
    graph: Graph, sm_arch: int, units: int, perf: PerfData, protocol: str = "simple"
) -> float:
    """NCCL's tuner: tree bus bandwidth ≤ channels × perChMaxTreeBw (Simple) or perChMaxTreeLL128Bw (LL128),
    by GPU generation and 1/2/4+ nodes; LL has no per-channel cap (inf)."""
    nc = perf.nccl
    tables = {"simple": nc.tree_per_channel_max_gbytes, "ll128": nc.tree_ll128_per_channel_max_gbytes}
    if protocol not in tables:
        return math.inf
    row = _table(tables[protocol], sm_arch).values
    index = node_band(units)
    return duplicated(graph, sm_arch, perf).channels * row[index]
