"""One blueprint's estimate: the system, a busbw sweep per collective, the training step; as a dict."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from blueprints.catalog.perf import perf_data
from generator.perf.collectives import MSCCL_ALLPAIRS
from generator.perf.predict import Prediction, RunSettings, nvlink_domains, sweep
from generator.perf.sizes import format_size
from generator.perf.system import System, system_for
from generator.perf.training import StepEstimate, training_step

if TYPE_CHECKING:
    from generator.findings import Finding
    from generator.plan.model import Plan
    from generator.resolve import ResolvedCluster


@dataclass(frozen=True)
class EstimateReport:
    file: str
    system: System
    nodes: int
    placement: str
    series: dict[str, list[Prediction]]
    training: StepEstimate | None
    bisection_gbps: float | None
    oversubscription: dict[str, float] = field(default_factory=dict)
    training_error: str | None = None
    settings: RunSettings = field(default_factory=RunSettings)
    # what `blueprint validate` refuses in the file (rule errors, located): the estimate takes it as written
    validation_errors: tuple[Finding, ...] = ()

    @property
    def ranks(self) -> int:
        return self.nodes * (self.settings.ranks_per_node or self.system.gpus_per_node)

    def system_dict(self) -> dict[str, Any]:
        s = self.system
        return {
            "pool": s.pool,
            "gpu": s.gpu_id,
            "gpus_per_node": s.gpus_per_node,
            "pool_nodes": s.pool_nodes,
            "nvlink_domain_nodes": s.unit_nodes,
            "intra_node_gbytes": round(s.intra.gbytes, 3) if s.intra else None,
            "intra_node_limit": s.intra.describe() if s.intra else None,
            "nvls": s.nvls,
            "ll128": s.ll128,
            "network_gbytes_per_node": round(s.net.gbytes, 3) if s.net else None,
            "network_limit": s.net.describe() if s.net else None,
            "network_line_gbps_per_node": s.net_line_gbps,
            "compute_ports_per_node": s.net_ports,
            # the NICs NCCL's channel graph counts (fewer where the net plugin groups ports: p5's multi-rail)
            "nccl_nics_per_node": s.nccl_nics,
            "nccl_nic_gbytes": round(s.nic_gbytes, 3),
            "technology": s.technology,
            "topology": s.topology,
            "hop_latency_us": round(s.net_latency_us, 4),
            "mean_hops": s.mean_hops,
            "ib_sharp": s.sharp,
            "bisection_gbps": self.bisection_gbps,
            "oversubscription": self.oversubscription,
            "spread_traffic_gbytes_per_node": round(s.fabric.limit.gbytes, 3) if s.fabric else None,
            "spread_traffic_limit": s.fabric.limit.describe() if s.fabric else None,
            # the same without PXN (NCCL_PXN_DISABLE=1, `--no-pxn`, or no NVLink): only rail-optimised fabrics
            "spread_traffic_without_pxn_gbytes_per_node": (
                round(s.rail_crossing.gbytes, 3) if s.rail_crossing else None
            ),
            "spread_traffic_without_pxn_limit": s.rail_crossing.describe() if s.rail_crossing else None,
            "notes": list(s.notes),
        }

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.system.name,
            "file": self.file,
            "nodes": self.nodes,
            "ranks": self.ranks,
            "placement": self.placement,
            **({"settings": self.settings.describe()} if self.settings.describe() else {}),
            "system": self.system_dict(),
            "collectives": {c: [r.as_dict() for r in rows] for c, rows in self.series.items()},
            "training": self.training.as_dict() if self.training else None,
            "training_error": self.training_error,
            "validation_errors": [
                {"rule": f.rule, "at": str(f.location) if f.location else None, "message": f.message}
                for f in self.validation_errors
            ],
        }


def build_report(
    file: str,
    cluster: ResolvedCluster,
    plan: Plan | None,
    collectives: list[str],
    sizes: list[int],
    *,
    nodes: int | None = None,
    pool: str | None = None,
    placement: str = "packed",
    algorithms: tuple[str, ...] | None = None,
    settings: RunSettings | None = None,
) -> EstimateReport:
    from generator.perf.system import PerfError

    s = settings or RunSettings(algorithms=algorithms)
    system = system_for(cluster, plan, pool, nvlink=s.nvlink, nccl_version=s.nccl_version)
    _lists_within_release(s, system)
    s, system = _channels_within_release(s, system)
    n = nodes or system.pool_nodes
    series = {
        c: sweep(system, c, sizes, n, placement=placement, algorithms=algorithms, settings=s)
        for c in collectives
    }
    system = _msccl_under_forced_settings(series, s, system)
    system = _ring_fallback(series, s, system)
    system = _sizes_beyond_memory(sizes, system)
    system = _uneven_domains(n, system)
    training = None
    error = None
    wl = cluster.blueprint.workload
    if wl is not None:
        try:
            training = training_step(wl, system, placement=placement)
        except PerfError as exc:
            error = str(exc)
    metrics = plan.metrics.get("compute") if plan is not None else None
    return EstimateReport(
        file,
        system,
        n,
        placement,
        series,
        training,
        metrics.bisection_gbps if metrics else None,
        dict(metrics.oversubscription) if metrics else {},
        error,
        s,
    )


def _lists_within_release(s: RunSettings, system: System) -> None:
    from generator.perf.system import refuse_per_collective_lists

    given = [f"NCCL_{k}={v}" for k, v in (("ALGO", s.algorithm_lists), ("PROTO", s.protocol_lists)) if v]
    refuse_per_collective_lists(given, system, "give one list, or --nccl-version 2.25 or later")


def _channels_within_release(s: RunSettings, system: System) -> tuple[RunSettings, System]:
    """The run's channel counts as NCCL takes them: NCCL_MAX_NCHANNELS and NCCL_MIN_NCHANNELS above
    MAXCHANNELS are cut to it (src/graph/connect.cc ncclMaxNchannels: "if (maxNchannels > MAXCHANNELS)
    maxNchannels = MAXCHANNELS"; ncclMinNchannels: "limiting to"), so the settings line shows the count the
    run has, and a note says so."""
    most = release_max_channels(system.nccl_release)
    cut = {k: v for k, v in (("channels", s.channels), ("min_channels", s.min_channels)) if v and v > most}
    if not cut:
        return s, system
    asked = ", ".join(f"--{k.replace('_', '-')} {v}" for k, v in cut.items())
    note = (
        f"NCCL {system.nccl_version} runs at most {most} channels (MAXCHANNELS, src/include/device.h): "
        f"{asked} {'is' if len(cut) == 1 else 'are'} {most}"
    )
    return channels_within_release(s, system.nccl_release), replace(system, notes=(*system.notes, note))


def release_max_channels(release: int | None) -> int:
    """NCCL's MAXCHANNELS for ``release`` (100·major + minor; None: the base tables)."""
    return int(perf_data().for_release(release).nccl.max_channels.value)


def channels_within_release(s: RunSettings, release: int | None) -> RunSettings:
    """``s`` with its channel counts cut to the release's MAXCHANNELS, as NCCL cuts them: what `estimate`
    predicts with and what keys a site calibration's factor (calibration.settings_key), so a run that set
    NCCL_MAX_NCHANNELS=64 on 2.21 and `estimate --channels 64` name the same 32 channels."""
    most = release_max_channels(release)
    return replace(s, channels=_at_most(s.channels, most), min_channels=_at_most(s.min_channels, most))


def _at_most(value: int | None, most: int) -> int | None:
    return None if value is None else min(value, most)


def _msccl_under_forced_settings(
    series: dict[str, list[Prediction]], s: RunSettings, system: System
) -> System:
    """A note where the run names NCCL_ALGO / NCCL_PROTO and rows still run RCCL's MSCCL: RCCL takes the call
    into MSCCL before its tuner reads them (ROCm/rccl src/collectives.cc: "if (mscclAvailable() &&
    !mscclIsCaller()) return mscclEnqueueCheck(...)"), so the rows are not what the settings name."""
    if not (s.algorithms or s.protocols or s.algorithm_lists or s.protocol_lists):
        return system
    if not any(p.algorithm == MSCCL_ALLPAIRS for rows in series.values() for p in rows):
        return system
    note = (
        f"{MSCCL_ALLPAIRS} rows ignore --algo / --proto: RCCL runs MSCCL before its tuner reads "
        "NCCL_ALGO and NCCL_PROTO (src/collectives.cc mscclEnqueueCheck); --no-msccl (RCCL_MSCCL_ENABLE=0) "
        "turns it off"
    )
    return replace(system, notes=(*system.notes, note))


def _ring_fallback(series: dict[str, list[Prediction]], s: RunSettings, system: System) -> System:
    """A note where NCCL_ALGO left a collective no algorithm and the run's NCCL (up to 2.22) runs the ring
    or, for a CollNet-only NCCL_ALGO without CollNet, Ring and Tree (collectives._allowed)."""
    named = {c: s.for_collective(c).algorithms for c in series}
    moved = sorted(
        c
        for c, rows in series.items()
        if (algos := named[c])
        and any(p.algorithm not in (*algos, "p2p", "none", MSCCL_ALLPAIRS) for p in rows)
    )
    if not moved:
        return system
    names = " and ".join([", ".join(moved[:-1]), moved[-1]] if len(moved) > 1 else moved)
    given = s.algorithm_lists or ",".join(s.algorithms or ())
    note = (
        f"NCCL_ALGO={given} leaves {names} no algorithm: NCCL {system.nccl_version} runs them as its tuner "
        'does up to 2.22 (the ring: tuning.cc "at least set ring algo available"; Ring and Tree for a '
        "CollNet-only NCCL_ALGO without CollNet); from 2.25 the call fails"
    )
    return replace(system, notes=(*system.notes, note))


def _uneven_domains(nodes: int, system: System) -> System:
    """A note where the nodes do not fill their NVLink domains evenly (19 NVL72 trays: 10 and 9): the model
    takes each domain the job spans as holding as many nodes as its fullest one (predict.nvlink_domains), so
    the rows are those of that even shape, not of the odd one the job has."""
    units, per_unit = nvlink_domains(system, nodes)
    if units < 2 or units * per_unit == nodes:
        return system
    note = (
        f"{nodes} nodes span {units} NVLink domains of {system.unit_nodes} nodes unevenly: predicted as "
        f"{units} domains of {per_unit} nodes ({units * per_unit} nodes, the job's fullest domain in each)"
    )
    return replace(system, notes=(*system.notes, note))


def _sizes_beyond_memory(sizes: list[int], system: System) -> System:
    """A note where sizes exceed one GPU's memory: nccl-tests holds a buffer of the whole size on every rank
    (the size is all_gather's receive buffer and reduce_scatter's send buffer: src/all_gather.cu
    ``*recvcount = base*nranks``, src/reduce_scatter.cu ``*sendcount = base*nranks``), so no run has them."""
    memory = system.gpu.memory_gb * 1e9
    beyond = [n for n in sizes if n > memory]
    if not beyond:
        return system
    note = (
        f"{len(beyond)} size(s) from {format_size(beyond[0])} exceed one {system.gpu.name}'s "
        f"{system.gpu.memory_gb:g} GB: nccl-tests holds a buffer of the whole size on every rank, so no run "
        "has them; their rows are the model's extrapolation"
    )
    return replace(system, notes=(*system.notes, note))
