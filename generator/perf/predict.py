"""Public entry points: predicted busbw for a cluster (and its plan) at one size or over a sweep.

``predict_busbw(cluster, plan, "all_reduce", 1 << 30)`` is what the Ansible acceptance role and the rules
call; ``sweep`` is what ``blueprint estimate`` prints and plots.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from blueprints.catalog.perf import perf_data
from generator.perf.collectives import Estimate, Job, estimate
from generator.perf.system import Limit, PerfError, System, nvls_efficiency, system_for

if TYPE_CHECKING:
    from generator.plan.model import Plan
    from generator.resolve import ResolvedCluster

PLACEMENTS = ("packed", "scattered")


@dataclass(frozen=True)
class Prediction:
    collective: str
    size_bytes: int
    ranks: int
    nodes: int
    busbw_gbytes: float
    algbw_gbytes: float
    time_s: float
    algorithm: str  # ring | tree | nvls | nvls_tree | collnet | p2p | none
    protocol: str  # ll | ll128 | simple
    bottleneck: str
    limit: str  # the bandwidth limit of the chosen algorithm (even when latency dominates)

    @property
    def algbw(self) -> float:
        return self.algbw_gbytes

    def as_dict(self) -> dict[str, object]:
        return {
            "size_bytes": self.size_bytes,
            "time_us": round(self.time_s * 1e6, 3),
            "algbw_gbytes": round(self.algbw_gbytes, 3),
            "busbw_gbytes": round(self.busbw_gbytes, 3),
            "algorithm": self.algorithm,
            "protocol": self.protocol,
            "bottleneck": self.bottleneck,
        }


def job_for(
    system: System,
    nodes: int | None = None,
    *,
    ranks_per_node: int | None = None,
    net_share: float = 1.0,
    placement: str = "packed",
) -> Job:
    """The collective's view of ``nodes`` nodes of the system's pool (default: all of them)."""
    if placement not in PLACEMENTS:
        raise PerfError(f"placement must be one of {', '.join(PLACEMENTS)}, not `{placement}`")
    n_nodes = system.pool_nodes if nodes is None else nodes
    if n_nodes < 1 or n_nodes > system.pool_nodes:
        raise PerfError(f"pool `{system.pool}` has {system.pool_nodes} nodes; cannot run on {n_nodes}")
    if n_nodes > system.unit_nodes and system.net is None:
        raise PerfError(f"pool `{system.pool}` has no compute network: a collective spans one node at most")
    rpn = system.gpus_per_node if ranks_per_node is None else ranks_per_node
    if rpn < 1 or rpn > system.gpus_per_node:
        raise PerfError(f"{rpn} ranks per node on a {system.gpus_per_node}-GPU node")
    per_unit = min(n_nodes, system.unit_nodes)
    units = math.ceil(n_nodes / per_unit)
    k = per_unit * rpn
    net = spread = None
    if system.net is not None and units > 1:
        scale = per_unit * net_share
        prefix = f"{per_unit} nodes' " if per_unit > 1 else ""
        share = f", 1/{round(1 / net_share)} share" if net_share < 1 else ""
        net = _ring_channel_cap(system, system.net.scaled(scale, prefix + system.net.name + share), scale)
        bound = system.fabric.limit if system.fabric is not None else system.net
        spread = bound.scaled(scale, prefix + bound.name + share)
    nvls = None
    if system.nvls and k > 1:
        e = nvls_efficiency(sm_arch=system.sm_arch)
        nvls = Limit(
            e * system.nvlink_raw_gbytes * k / (k + 1),
            "NVLS",
            f"NVSwitch multimem: {system.nvlink_raw_gbytes:g} GB/s NVLink per GPU × {e:.1%} NVLS efficiency",
        )
    return Job(
        units=units,
        ranks_per_unit=k,
        intra=system.intra,
        intra_class=system.intra_class,
        net=net,
        spread_net=spread,
        net_latency_us=system.net_latency_us,
        nvls=nvls,
        sharp=system.sharp,
        sharp_share=system.sharp_share,
        ll128=system.ll128,
        sm_arch=system.sm_arch,
        scattered=placement == "scattered",
        nics_per_unit=system.net_ports * per_unit * net_share if units > 1 else 0.0,
        multi_node_nvls=system.multi_node_nvls,
    )


def _ring_channel_cap(system: System, net: Limit, scale: float) -> Limit:
    """An NVLink domain's network as rings and trees between domains see it: each channel leaves the domain
    through one NIC and NCCL searches at most ``ring_graph_max_channels`` of them, so a domain with more
    NICs than that (GB200 NVL72: 72) uses only that many (perf.yaml [NCCL-INIT]). Spread traffic (alltoall,
    point-to-point) is not bound this way."""
    nics = system.net_ports * scale
    channels = perf_data().nccl.ring_graph_max_channels.value
    if system.net_ports < 1 or nics <= channels:
        return net
    per_nic = net.gbytes / nics
    return Limit(
        per_nic * channels,
        f"{channels:g} ring channels × 1 NIC",
        f"NCCL searches at most {channels:g} inter-node ring channels, one NIC each, of the domain's "
        f"{nics:g} NICs ({per_nic:.1f} GB/s each)",
    )


def _prediction(est: Estimate, nodes: int) -> Prediction:
    return Prediction(
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


def predict_on(
    system: System,
    collective: str,
    size_bytes: int,
    nodes: int | None = None,
    *,
    placement: str = "packed",
    algorithms: tuple[str, ...] | None = None,
    net_share: float = 1.0,
) -> Prediction:
    """``net_share``: the share of each node's network the run may use (1/rails for a one-rail run)."""
    job = job_for(system, nodes, placement=placement, net_share=net_share)
    return _prediction(
        estimate(collective, int(size_bytes), job, algorithms=algorithms), nodes or system.pool_nodes
    )


def predict_busbw(
    cluster: ResolvedCluster,
    plan: Plan | None,
    collective: str,
    size_bytes: int,
    nodes: int | None = None,
    *,
    pool: str | None = None,
    placement: str = "packed",
    algorithms: tuple[str, ...] | None = None,
    net_share: float = 1.0,
) -> Prediction:
    """Predicted nccl-tests result for ``collective`` of ``size_bytes`` over ``nodes`` nodes of the
    largest GPU pool (or ``pool``), all GPUs of each node taking part."""
    return predict_on(
        system_for(cluster, plan, pool),
        collective,
        size_bytes,
        nodes,
        placement=placement,
        algorithms=algorithms,
        net_share=net_share,
    )


def sweep(
    system: System,
    collective: str,
    sizes: Iterable[int],
    nodes: int | None = None,
    *,
    placement: str = "packed",
    algorithms: tuple[str, ...] | None = None,
) -> list[Prediction]:
    job = job_for(system, nodes, placement=placement)
    n = nodes or system.pool_nodes
    return [_prediction(estimate(collective, int(s), job, algorithms=algorithms), n) for s in sizes]
