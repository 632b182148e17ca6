"""Measured versus predicted: the acceptance run's nccl-tests results against the model, and who is to blame.

Each run is predicted on the planned cluster with its own shape (nodes, ranks per node, one rail or all of
them). A run is *low* when its measured bus bandwidth, averaged over the bandwidth-bound sizes
(``policy.acceptance_min_bytes`` and up; the largest size when none is that large), is below
``policy.acceptance_ratio`` of the prediction.

Blame follows the runs: every run touches nodes, rails, (node, rail) links — one cable each — and the leaf
switches of those links. An element is *suspect* when every run that touched it was low. A degraded cable
therefore shows as one suspect link (its node's other rails and its rail's other nodes pass), a down rail
as a suspect rail, a bad switch as a suspect switch whose links all fail; when every run is low the cause
is cluster-wide (settings, firmware), which the report says instead of naming cables.

A run whose output shows NCCL did not use the fabric as the prediction takes it (generator.perf.nccl_network:
TCP sockets on an RDMA fabric, connections without GPUDirect RDMA; a planned compute port missing from the
ports NCCL's IB transport listed, or listed in the other link layer) measured something else: the report says
so at the line that shows it (a missing port with its cabling-plan row), and such a run names no suspect and
calibrates nothing.

The runs are foreign input: each distinct prediction (run shape, collective, size) is made once and there
are at most ``MAX_PREDICTIONS`` of them (one costs ~0.15 ms), and every index over the plan's cables is
built once, so the work grows linearly with the runs and the cables.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from blueprints.catalog.perf import perf_data
from generator.foreign import ForeignInputError
from generator.perf.collectives import (
    ALGORITHMS,
    NVLS_ALGORITHMS,
    Estimate,
    algorithm_list,
    estimate,
    protocol_list,
)
from generator.perf.nccl_network import SOCKET, is_verbs
from generator.perf.nccl_results import MAX_NOT_COMPARED_NAMED, NcclRun, RecordedSettings
from generator.perf.predict import Job, RunSettings, job_for
from generator.perf.system import PerfError, System

if TYPE_CHECKING:
    from generator.perf.calibration import Calibration
    from generator.plan.model import Link, Plan

# Distinct predictions one report makes: a real acceptance run asks for a few shapes (one-rail pairs, the
# whole pool, one node) x 5 collectives x ~40 sizes, some 600; 8,192 of them take ~1.2 s.
MAX_PREDICTIONS = 8_192


@dataclass(frozen=True)
class Cable:
    """A cabling-plan row: the cable id and both ends (device port), as cables.csv has them."""

    id: str
    node: str
    node_port: str
    switch: str
    switch_port: str
    rail: int | None

    def as_dict(self) -> dict[str, object]:
        return {
            "cable": self.id,
            "node": self.node,
            "node_port": self.node_port,
            "switch": self.switch,
            "switch_port": self.switch_port,
            "rail": self.rail,
        }


@dataclass(frozen=True)
class SizeCompare:
    size_bytes: int
    measured: float
    predicted: float
    algorithm: str

    @property
    def ratio(self) -> float:
        return self.measured / self.predicted if self.predicted > 0 else 0.0


@dataclass(frozen=True)
class RunResult:
    run: NcclRun
    sizes: tuple[SizeCompare, ...]
    measured: float  # mean over the compared sizes
    predicted: float
    low: bool
    error: str | None = None  # the model could not predict this run's shape
    transport: str | None = None  # what the run's output shows NCCL used that the prediction is not for
    # planned compute ports NCCL's IB transport did not list, or listed in the other link layer
    port_problems: tuple[PortProblem, ...] = ()
    unplanned: tuple[str, ...] = ()  # the run's hosts the plan does not have

    @property
    def ratio(self) -> float:
        return self.measured / self.predicted if self.predicted > 0 else 0.0

    @property
    def ports(self) -> str | None:
        """The run's port problems as its finding (None: none), the first four spelled out."""
        return ports_finding(self.port_problems)

    @property
    def failed(self) -> str | None:
        """Where the run's own data check failed or nccl-tests stopped on an error (None: it did not)."""
        return self.run.failed

    @property
    def unusable(self) -> str | None:
        """Why the run says nothing of the planned fabric's cables (None: it does): the model could not
        predict it, nccl-tests' own check failed, or its output shows NCCL used another transport or other
        ports than the plan's."""
        return self.error or self.failed or self.transport or self.ports

    def as_dict(self) -> dict[str, object]:
        r = self.run
        return {
            "file": r.path,
            "line": r.line,
            "format": r.source_format,
            "collective": r.collective,
            "nodes": r.nodes,
            "hosts": list(r.hosts),
            "ranks": r.ranks,
            "rail": r.rail,
            **_settings_dict(r.settings),
            **r.network.as_dict(),
            "measured_busbw_gbytes": round(self.measured, 3),
            "predicted_busbw_gbytes": round(self.predicted, 3),
            "ratio": round(self.ratio, 4),
            "low": self.low,
            **({"unplanned_hosts": list(self.unplanned[:8])} if self.unplanned else {}),
            "error": self.error,
            "failed": self.failed,
            "transport": self.transport,
            "ports": self.ports,
            "sizes": [
                {
                    "size_bytes": s.size_bytes,
                    "measured_busbw_gbytes": s.measured,
                    "predicted_busbw_gbytes": round(s.predicted, 3),
                    "algorithm": s.algorithm,
                }
                for s in self.sizes
            ],
        }


@dataclass(frozen=True)
class Suspect:
    kind: str  # link | node | rail | switch
    name: str
    low_runs: int
    cables: tuple[Cable, ...] = ()

    def as_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "name": self.name,
            "low_runs": self.low_runs,
            "cables": [c.as_dict() for c in self.cables],
        }


@dataclass
class AcceptanceReport:
    blueprint: str
    results: list[RunResult]
    suspects: list[Suspect] = field(default_factory=list)
    threshold: float = 0.0
    cluster_wide: bool = False
    unknown_hosts: list[str] = field(default_factory=list)
    unknown_hosts_more: int = 0  # hosts not in the plan past the ones named
    ignored: list[str] = field(default_factory=list)
    calibration: str | None = None  # the site calibration file the predictions carry, if any
    calibration_nccl: str | None = None  # the NCCL release its factors were measured with
    # releases of runs its factors were applied to that are not that one (their tuner differs)
    calibration_other_releases: list[str] = field(default_factory=list)

    @property
    def port_reports(self) -> list[PortReport]:
        """Every planned compute port a run's NCCL did not list (or listed in the other link layer), once,
        with its cabling-plan row and the runs that show it."""
        return _port_reports(self.results)

    @property
    def clean(self) -> bool:
        return not any(r.low or r.unusable for r in self.results)

    def as_dict(self) -> dict[str, object]:
        return {
            "blueprint": self.blueprint,
            "threshold": self.threshold,
            "clean": self.clean,
            "cluster_wide": self.cluster_wide,
            "runs": [r.as_dict() for r in self.results],
            "suspects": [s.as_dict() for s in self.suspects],
            "port_problems": [p.as_dict() for p in self.port_reports],
            "unknown_hosts": self.unknown_hosts,
            **({"unknown_hosts_more": self.unknown_hosts_more} if self.unknown_hosts_more else {}),
            "ignored_files": self.ignored,
            **({"calibration": self.calibration} if self.calibration else {}),
            **(
                {"calibration_other_releases": self.calibration_other_releases}
                if self.calibration_other_releases
                else {}
            ),
        }


# ---- phases -------------------------------------------------------------------------------------


# host -> (RDMA device, port, the compute rail the plan cables it to), for the compute ports of the host
# whose RDMA names are the host's own (published or declared; a placeholder name says nothing of what
# NCCL_IB_HCA names)
RailPorts = dict[str, list[tuple[str, int, int]]]


def _rail_ports(held_to: PlannedPorts) -> RailPorts:
    """Each node's named compute ports with their rails (built once per report, from planned_ports)."""
    return {
        host: [(device.lower(), number, rail) for (device, number), (rail, _) in ports.items()]
        for host, ports in held_to.items()
    }


def _rails_text(rails: set[int]) -> str:
    return ", ".join(str(r) for r in sorted(rails)) if rails else "none"


def _resolve_rail(run: NcclRun, ports: RailPorts, net_ports: int) -> NcclRun | str:
    """The rails a run could use: the one its file name names (which must be one of the plan's), or those
    whose ports its NCCL_IB_HCA selects on its hosts (a device's number is not its rail: on a DGX H100 rail 5
    is mlx5_9). The model predicts a run on one rail or on all of them: NCCL_IB_HCA keeping some rails of a
    host, or different ones on different hosts, makes the run an ERROR row that says which."""
    if run.rail is not None:
        if not 0 <= run.rail < net_ports:
            planned = f"0 to {net_ports - 1}" if net_ports else "none"
            return f"the file name names rail {run.rail}; the plan's compute rails are {planned}"
        return run
    if run.hca is None or run.nodes < 2:  # inside one node the network carries nothing
        return run
    text = f"NCCL_IB_HCA `{run.hca.shown}`"
    known = [h for h in run.hosts if h in ports]
    if not known:
        # the plan does not know the names (placeholders): as many entries as rails, or none, is every rail
        if not run.hca.exclude and (not run.hca.entries or len(run.hca.entries) >= net_ports):
            return run
        return (
            f"{text}: the plan does not know the RDMA names of the run's hosts' compute ports (placeholders: "
            "declare them in pools[].ports) or has none of its hosts, so the rails it selects are unknown"
        )
    kept = {h: {rail for dev, port, rail in ports[h] if run.hca.selects(dev, port)} for h in known}
    every = {h: {rail for _, _, rail in ports[h]} for h in known}
    if all(kept[h] == every[h] for h in known):
        return run
    none = next((h for h in known if not kept[h]), None)
    if none is not None:
        listed = ", ".join(f"{dev}:{port}" for dev, port, _ in ports[none][:16])
        return f"{text} selects none of {none}'s compute ports in the plan ({listed})"
    some = next((h for h in known if len(kept[h]) != 1), None)
    if some is not None:
        return (
            f"{text} selects the ports of rails {_rails_text(kept[some])} of {_rails_text(every[some])} on "
            f"{some}: the model predicts a run on one rail or on all of them"
        )
    first = known[0]
    other = next((h for h in known if kept[h] != kept[first]), None)
    if other is not None:
        return (
            f"{text} selects rail {_rails_text(kept[first])} on {first} but rail {_rails_text(kept[other])} "
            f"on {other}: the model predicts a run on the same rail of every host"
        )
    return replace(run, rail=next(iter(kept[first])))


# The system as a run saw it: NVLink on or off (NCCL_P2P_DISABLE) and the NCCL release it loaded (None: the
# blueprint's), as `blueprint estimate --no-nvlink --nccl-version` builds it.
SystemOf = Callable[[bool, str | None], System]


def without_collnet(system: System) -> System:
    """The system as NCCL without CollNet (NCCL_COLLNET_ENABLE not 1) runs it: no IB SHARP, so neither
    CollNet nor NVLS across nodes, which needs it (tuning.cc 2.25.1 turns NVLS off for ``collNetSupport == 0``
    with ``nNodes > 1``; docs/performance.md). NCCL-tree, NVLS-tree and rings stay."""
    return replace(system, sharp=False, sharp_share=1.0) if system.sharp else system


class _Predictions:
    """Each (shape, settings, collective, size) predicted once; more than MAX_PREDICTIONS distinct ones are
    refused. ``system_of`` builds the system of a run that turned NVLink off or loaded another NCCL release
    (without it, such a run is predicted on the blueprint's system)."""

    def __init__(
        self, system: System, calibration: Calibration | None = None, system_of: SystemOf | None = None
    ) -> None:
        self.system = system
        self.calibration = calibration
        self.system_of = system_of
        self.systems: dict[tuple[bool, str | None, bool], System] = {(True, None, True): system}
        self.jobs: dict[tuple[object, ...], Job] = {}
        self.made: dict[tuple[object, ...], tuple[float, str]] = {}
        self.other_releases: set[str] = set()  # NCCL releases of runs the calibration was not measured with

    def system_for_run(self, st: RunSettings) -> System:
        key = (st.nvlink, st.nccl_version, st.collnet)
        if key not in self.systems:
            made = self.system_of(st.nvlink, st.nccl_version) if self.system_of is not None else self.system
            self.systems[key] = made if st.collnet else without_collnet(made)
        return self.systems[key]

    def job(self, st: RunSettings, nodes: int, rpn: int, share: float) -> Job:
        """The run's job; its channel counts (NCCL_MAX_NCHANNELS, NCCL_MIN_NCHANNELS) apply between NVLink
        domains, as `estimate --channels` and `--min-channels` do (inside one domain the model counts no
        channels, so there they change nothing)."""
        system = self.system_for_run(st)
        between = nodes > system.unit_nodes
        channels = st.channels if between else None
        least = st.min_channels if between else None
        # an output that lists its ranks is refused when a process drives more than a host lists
        # (nccl_results._check_process_fits); one without `# Rank` lines has no ranks a node to hold them to
        process = replace(st.process, gpus_per_process=min(st.process.gpus_per_process, rpn))
        key = (nodes, rpn, share, st.nvlink, st.nccl_version, st.collnet, channels, st.pxn, least, process)
        if key not in self.jobs:
            self.jobs[key] = job_for(
                system,
                nodes,
                ranks_per_node=rpn,
                net_share=share,
                channels=channels,
                pxn=st.pxn,
                min_channels=least,
                process=process,
            )
        return self.jobs[key]

    def busbw(self, run: NcclRun, shape: tuple[int, int, float], size: int) -> tuple[float, str]:
        key = (*shape, run.collective, size, run.settings, run.rail is not None)
        if key not in self.made:
            if len(self.made) >= MAX_PREDICTIONS:
                raise ForeignInputError(
                    run.path,
                    f"the runs ask for more than {MAX_PREDICTIONS:,} different predictions (run shapes x "
                    "collectives x message sizes); give fewer runs or sizes",
                )
            st = run_settings(run)
            job, algos, protos = self.job(st, *shape), st.algorithms, st.protocols
            est = estimate(run.collective, max(1, size), job, algorithms=algos, protocols=protos)
            self.made[key] = (
                self._calibrated(run, replace(st, ranks_per_node=shape[1]), shape[0], est),
                est.algorithm,
            )
        return self.made[key]

    def _calibrated(self, run: NcclRun, st: RunSettings, nodes: int, est: Estimate) -> float:
        """The busbw with the site factor of the run's (collective, regime, node band, settings), if any."""
        if self.calibration is None:
            return est.busbw_gbytes
        from generator.perf.calibration import calibrated_busbw, regime, settings_key

        entry = self.calibration.factor_for(
            run.collective,
            regime(self.system, nodes, run.rail is not None),
            nodes,
            settings_key(st, run.collective, self.system),
        )
        if entry is None:
            return est.busbw_gbytes
        from generator.perf.system import nccl_release

        # a factor is measured / predicted for the release the calibration's runs used: applied to a run of
        # another (major.minor), as `estimate` does, and said (the report's `calibration_other_releases`)
        used = st.nccl_version or self.system.nccl_version
        if nccl_release(used) != nccl_release(self.calibration.data.nccl_version):
            self.other_releases.add(used)
        return calibrated_busbw(est.busbw_gbytes, est.time_s, est.latency_us, entry.factor)


def _settings_text(run: NcclRun) -> str:
    return run.settings.text() or "NCCL's own choice"


def _settings_dict(st: RecordedSettings) -> dict[str, object]:
    """The settings a run's output records, under the report's JSON keys (only those it records)."""
    pairs = (
        ("nccl_algo", st.algo),
        ("nccl_proto", st.proto),
        ("nccl_max_nchannels", st.channels),
        ("nccl_min_nchannels", st.min_channels),
        ("nccl_p2p_disable", 1 if st.p2p_disabled else None),
        ("nccl_pxn_disable", 1 if st.pxn_disabled else None),
        ("nccl_nvls_enable", 0 if st.nvls_disabled else None),
        ("nccl_collnet_enable", None if st.collnet is None else int(st.collnet)),
        ("nccl_version", st.nccl_version),
        ("gpus_per_process", st.gpus_per_process if st.gpus_per_process > 1 else None),
        ("rccl_msccl_enable", 0 if st.msccl_disabled else None),
        (
            "rccl_msccl_enable_single_process",
            None if st.msccl_single_process is None else int(st.msccl_single_process),
        ),
    )
    return {k: v for k, v in pairs if v is not None}


def run_settings(run: NcclRun) -> RunSettings:
    """What the run changed (as its output records it) as the model's settings, those `estimate` builds from
    its options; PerfError on one the model cannot honour (an unknown name)."""
    st = run.settings
    return RunSettings(
        algorithms=_algorithms(st, run.collective),
        protocols=protocol_list(st.proto, run.collective) or None if st.proto else None,
        channels=st.channels,
        nvlink=not st.p2p_disabled,
        nccl_version=st.nccl_version,
        pxn=not st.pxn_disabled,
        min_channels=st.min_channels,
        process=replace(st.process, msccl=_msccl_on(st)),
        collnet=st.collnet is True,  # NCCL's default is 0: a run that does not record it ran without
    )


def _lists_within_release(run: NcclRun, system: System) -> None:
    """A per-collective NCCL_ALGO / NCCL_PROTO on a release the run's output names and which reads none: the
    model cannot tell what that NCCL ran (2.22's parseList matches whole names and skips the rest), so the
    run is an ERROR row, as `estimate` refuses such a list for that release."""
    from generator.perf.collectives import per_collective
    from generator.perf.system import refuse_per_collective_lists

    st = run.settings
    if st.nccl_version is None:  # the output names no release: the blueprint's pin stands in, not checked
        return
    given = [f"NCCL_{k}={v}" for k, v in (("ALGO", st.algo), ("PROTO", st.proto)) if v and per_collective(v)]
    refuse_per_collective_lists(given, system, "what that release ran with it is not modelled")


def _msccl_on(st: RecordedSettings) -> bool:
    """RCCL_MSCCL_ENABLE, and NCCL_MAX_NCHANNELS: RCCL drops an MSCCL algorithm that needs more channels than
    the cap allows (perf.yaml rccl.msccl_allpairs.channels), even inside one node, where the model counts no
    channels otherwise."""
    need = perf_data().rccl.msccl_allpairs.channels.value
    return not st.msccl_disabled and (st.channels is None or st.channels >= need)


def _algorithms(st: RecordedSettings, collective: str) -> tuple[str, ...] | None:
    """NCCL_ALGO as the model names it for the run's collective (a per-collective list resolved, as the
    run's NCCL, which evidently read it, did), less NVLS and NVLS-tree when NCCL_NVLS_ENABLE=0 turned NVLink
    SHARP off (as `estimate --algo ^NVLS,NVLSTree`); PerfError when nothing is left."""
    given = algorithm_list(st.algo, collective) or None if st.algo else None
    if not st.nvls_disabled:
        return given
    kept = tuple(a for a in (given or ALGORITHMS) if a not in NVLS_ALGORITHMS)
    if not kept:
        raise PerfError(f"NCCL_ALGO={st.algo} names only NVLS algorithms, which NCCL_NVLS_ENABLE=0 turns off")
    return kept


def _split_text(run: NcclRun) -> str:
    return (
        f"its ranks form {run.communicators} communicators (the Group column: NCCL_TESTS_SPLIT_MASK), each "
        "running the collective among its own ranks; the model predicts one communicator of every rank"
    )


def _shape_problem(run: NcclRun, system: System) -> str | None:
    """Why the run's shape cannot be the planned pool's: no ranks listed, more hosts than the pool has nodes,
    more ranks on a host than its server has GPUs, or hosts with different rank counts (predicting another
    shape would hold the run to another one's bandwidth); None when it fits."""
    if not run.hosts:
        return (
            "the output lists no ranks (nccl-tests' `# Rank N ... on <host>` lines, a -J file's "
            "`config.devices`), so the run's nodes and ranks are unknown"
        )
    if run.nodes > system.pool_nodes:
        return (
            f"the run spans {run.nodes} hosts but pool `{system.pool}` has {system.pool_nodes} node"
            f"{'s' if system.pool_nodes != 1 else ''}"
        )
    if run.ranks_per_node > system.gpus_per_node:
        return (
            f"the run has {run.ranks_per_node} ranks a host but the servers of pool `{system.pool}` have "
            f"{system.gpus_per_node} GPUs each"
        )
    return _uneven(run)


def _uneven(run: NcclRun) -> str | None:
    """Hosts that run different numbers of ranks (`mpirun -np 12` on two 8-slot hosts: 8 and 4): the model
    predicts the same ranks on every node, and an even split (6 and 6) is another run's bandwidth."""
    if len(set(run.host_ranks)) < 2:
        return None
    most, least = max(run.host_ranks), min(run.host_ranks)
    big, small = (run.hosts[run.host_ranks.index(n)] for n in (most, least))
    return (
        f"hosts run {most} and {least} ranks: uneven ({big}: {most}, {small}: {least}); the model predicts "
        "the same ranks on every node (mpirun -N, srun --ntasks-per-node)"
    )


def _predict_run(
    run: NcclRun, predictions: _Predictions, min_bytes: float, threshold: float, planned: PlannedPorts
) -> RunResult:
    """Predict the run's shape at each of its sizes and compare the bandwidth-bound ones."""
    system = predictions.system
    if run.communicators > 1:
        return RunResult(run, (), 0.0, 0.0, False, _split_text(run))
    shape = _shape_problem(run, system)
    if shape is not None:
        return RunResult(run, (), 0.0, 0.0, False, shape)
    nodes, rpn = run.nodes, run.ranks_per_node
    share = 1.0 / system.net_ports if (run.rail is not None and system.net_ports) else 1.0
    try:
        st = run_settings(run)
        predictions.job(st, nodes, rpn, share)
        _lists_within_release(run, predictions.system_for_run(st))
    except PerfError as exc:
        return RunResult(run, (), 0.0, 0.0, False, str(exc))
    compared = {r.size_bytes for r in run.rows if r.size_bytes >= min_bytes} or {
        max(r.size_bytes for r in run.rows)
    }
    sizes = []
    try:
        for row in run.rows:
            busbw, algorithm = predictions.busbw(run, (nodes, rpn, share), row.size_bytes)
            sizes.append(SizeCompare(row.size_bytes, row.busbw_gbytes, busbw, algorithm))
    except PerfError as exc:  # e.g. NCCL_ALGO=NVLS on GPUs without NVLink SHARP
        return RunResult(run, (), 0.0, 0.0, False, f"{_settings_text(run)}: {exc}")
    chosen = [s for s in sizes if s.size_bytes in compared]
    measured = statistics.fmean(s.measured for s in chosen)
    predicted = statistics.fmean(s.predicted for s in chosen)
    low = predicted > 0 and measured < threshold * predicted
    return RunResult(
        run,
        tuple(sizes),
        measured,
        predicted,
        low,
        _implausible(measured, predicted),
        transport=transport_finding(run, system),
        port_problems=port_problems(run, system, planned),
    )


def _implausible(measured: float, predicted: float) -> str | None:
    """A run measured past what a site calibration may scale the model by (perf.yaml
    policy.calibration_factor_max, 2×): no fabric runs that much faster than its own plan, so it is a run of
    another shape (an all-rail log named as a one-rail run), a mislabelled file or a corrupt output, and
    it says nothing of the cables (before, 99,999 GB/s was `ok` and the report clean)."""
    most = perf_data().policy.calibration_factor_max.value
    if predicted > 0 and measured > most * predicted:
        return (
            f"measured {measured:,.1f} GB/s, {measured / predicted:.1f}x the prediction, past the {most:g}x "
            "a site calibration may scale it: a run of another shape (an all-rail log named as a one-rail "
            "run?), a mislabelled file or a corrupt output"
        )
    return None


# the fabric kinds the model predicts with RDMA between nodes: NCCL's IB verbs transport ("IB (generic IB
# verbs)", NCCL's environment variables reference, NCCL_NET) for InfiniBand and RoCE, or a cloud transport's
# net plugin, which the model takes as RoCE (perf.yaml nccl.cloud_transport_as_fabric); with the link layer
# NCCL's IB transport prints for each (net_ib.cc: "IB" or "RoCE")
_LINK_OF_KIND = {"infiniband": "IB", "roce": "RoCE"}


def transport_finding(run: NcclRun, system: System) -> str | None:
    """What the run's output shows NCCL used between nodes that the prediction is not for, where it shows it:
    its TCP socket transport on a fabric the model takes as RDMA, or a verbs transport (NCCL's IB, HPC-X's
    IBext) without GPUDirect RDMA (connections printed without ``/GDRDMA``: the data is staged through host
    memory, which the model has no figure for). None when the output shows neither, or says nothing of the
    network (a run without NCCL_DEBUG=INFO, a -J file without NCCL_NET) or the run stays in one node."""
    if run.nodes < 2 or system.net_kind not in _LINK_OF_KIND:
        return None
    where = run.network.uses(SOCKET)
    if where is not None:
        fabric = system.technology or system.net_kind
        return (
            f"NCCL ran over TCP sockets (`{SOCKET}`, {where}), not the {fabric} RDMA the prediction is for: "
            "the measurement says nothing of the fabric or its cables. NCCL uses sockets when told to "
            "(NCCL_NET=Socket, NCCL_IB_DISABLE=1) or when it finds no usable RDMA device (NCCL_IB_HCA, the "
            "RDMA driver, the net plugin)"
        )
    for c in run.network.connections:
        if is_verbs(c.network) and c.without_gdr:
            return (
                f"{c.without_gdr} of {c.count} network connection(s) printed without /GDRDMA (first at "
                f"{c.first_without_gdr_at}): NCCL staged their data through host memory instead of GPUDirect "
                "RDMA, which the prediction takes; check NCCL_NET_GDR_LEVEL and GPUDirect RDMA on the nodes"
            )
    return None


# host -> (RDMA device, port) -> the compute rail and cable the plan gives that port, for the ports whose
# device names are the hosts' own (published or declared: resolve.model.NicPort.rdma_known), no placeholders
PlannedPorts = dict[str, dict[tuple[str, int], tuple[int, Cable]]]


def planned_ports(
    plan: Plan | None, cables: dict[tuple[str, int], list[Cable]], named: dict[str, frozenset[str]]
) -> PlannedPorts:
    """Each node's compute ports whose RDMA names are real (``named``: pool -> plan ports such as
    ``mlx5_0/1``), with their rail and cable (built once per report)."""
    if plan is None:
        return {}
    pool_of = {d.name: d.pool for d in plan.devices if d.kind == "node"}
    out: PlannedPorts = defaultdict(dict)
    for (node, rail), cs in cables.items():
        known = named.get(pool_of.get(node) or "", frozenset())
        for c in cs:
            device, _, number = c.node_port.partition("/")
            if c.node_port in known and number.isdigit():
                out[node][(device, int(number))] = (rail, c)
    return dict(out)


@dataclass(frozen=True)
class PortProblem:
    """A planned compute port NCCL's IB transport did not list on a host (``listed_as`` None), or listed in
    the other link layer (``listed_as`` the layer it printed), at the host's first list (``at``)."""

    host: str
    rail: int
    device: str
    port: int
    cable: Cable
    listed_as: str | None
    at: str
    fabric_link: str  # the link layer the plan's fabric runs (IB | RoCE)

    def text(self) -> str:
        name = (
            f"{self.host} rail {self.rail} port {self.device}:{self.port} "
            f"(cable {self.cable.id} to {self.cable.switch} port {self.cable.switch_port})"
        )
        if self.listed_as is None:
            return f"{name} is not among the ports NCCL found ({self.at})"
        return (
            f"{name} runs {self.listed_as} where the plan's fabric runs {self.fabric_link} ({self.at}): the "
            "adapter port is set to the other link layer"
        )


def port_problems(run: NcclRun, system: System, planned: PlannedPorts) -> tuple[PortProblem, ...]:
    """The planned compute ports NCCL's IB transport did not list on a host of a run across nodes, or listed
    in the other link layer (none when the output lists no ports). NCCL lists only active ports that
    NCCL_IB_HCA selects (net_ib.cc ncclIbInit), so a missing port was down, unselected or renamed when the run
    started, and the run used fewer NICs than the prediction is for. A one-rail run is held to its rail's
    port."""
    link = _LINK_OF_KIND.get(system.net_kind or "")
    if run.nodes < 2 or link is None or not run.network.ib_ports:
        return ()
    problems: list[PortProblem] = []
    for listed in run.network.ib_ports:
        ports = {(p.device, p.port): p for p in listed.ports}
        for (device, number), (rail, cable) in sorted(planned.get(listed.host, {}).items()):
            if run.rail is not None and rail != run.rail:
                continue
            found = ports.get((device, number))
            if found is None or found.link != link:
                layer = None if found is None else found.link
                problems.append(
                    PortProblem(listed.host, rail, device, number, cable, layer, listed.first_at, link)
                )
    return tuple(problems)


def ports_finding(problems: tuple[PortProblem, ...]) -> str | None:
    """A run's port problems as its finding (None: none), the first four spelled out."""
    if not problems:
        return None
    shown = "; ".join(p.text() for p in problems[:4])
    shown += f"; and {len(problems) - 4} more" if len(problems) > 4 else ""
    why = "NCCL uses only the ports it lists (the active ones NCCL_IB_HCA selects)" + (
        ", and a port in the other link layer is not on the planned fabric"
        if any(p.listed_as for p in problems)
        else ""
    )
    return (
        f"{shown}. {why}: the run used fewer NICs than the prediction is for; check the port (ibstat), its "
        "cable and NCCL_IB_HCA"
    )


@dataclass(frozen=True)
class PortReport:
    """One port problem as the report lists it: once, with the runs that show it."""

    problem: PortProblem
    runs: tuple[str, ...]

    def as_dict(self) -> dict[str, object]:
        p = self.problem
        return {
            "host": p.host,
            "rail": p.rail,
            "port": f"{p.device}:{p.port}",
            "listed_as": p.listed_as,
            "first_at": p.at,
            "runs": list(self.runs),
            **p.cable.as_dict(),
        }


def _port_reports(results: list[RunResult]) -> list[PortReport]:
    """Every port problem once, in the order the runs show them, with the runs that show it."""
    seen: dict[tuple[str, int, str, int, str | None], tuple[PortProblem, list[str]]] = {}
    for res in results:
        for p in res.port_problems:
            key = (p.host, p.rail, p.device, p.port, p.listed_as)
            seen.setdefault(key, (p, []))[1].append(res.run.name)
    return [PortReport(p, tuple(runs)) for p, runs in seen.values()]


def _node_cables(plan: Plan | None) -> dict[tuple[str, int], list[Cable]]:
    """(node, rail) → the compute cables from that node's rail port to its switch."""
    out: dict[tuple[str, int], list[Cable]] = defaultdict(list)
    if plan is None:
        return out
    kinds = {d.name: d.kind for d in plan.devices}
    for link in plan.links_of("compute"):
        cable = _cable(link, kinds)
        if cable is not None and cable.rail is not None:
            out[(cable.node, cable.rail)].append(cable)
    return out


def _cable(link: Link, kinds: dict[str, str]) -> Cable | None:
    for node_end, other in ((link.a, link.b), (link.b, link.a)):
        if kinds.get(node_end.device) == "node" and kinds.get(other.device) == "switch":
            # the plan's rail only: a device's number is not its rail (DGX H100: rail 5 is mlx5_9)
            return Cable(link.id, node_end.device, node_end.port, other.device, other.port, link.rail)
    return None


def _elements(
    run: NcclRun, rails: list[int], cables: dict[tuple[str, int], list[Cable]]
) -> set[tuple[str, str]]:
    """What a run touches: its nodes, and for multi-node runs its rails, links and leaf switches."""
    touched = {("node", h) for h in run.hosts}
    if run.nodes < 2:
        return touched
    for rail in [run.rail] if run.rail is not None else rails:
        touched.add(("rail", str(rail)))
        for host in run.hosts:
            touched.add(("link", f"{host} rail {rail}"))
            for c in cables.get((host, rail), ()):
                touched.add(("switch", c.switch))
    return touched


def _suspects(
    results: list[RunResult], rails: list[int], cables: dict[tuple[str, int], list[Cable]]
) -> list[Suspect]:
    total: dict[tuple[str, str], int] = defaultdict(int)
    low: dict[tuple[str, str], int] = defaultdict(int)
    for res in results:
        if res.unusable:  # a run that did not use the fabric as planned says nothing of a cable
            continue
        for el in _elements(res.run, rails, cables):
            total[el] += 1
            low[el] += int(res.low)
    order = {"link": 0, "node": 1, "rail": 2, "switch": 3}
    index = _cable_index(cables)
    out = []
    for (kind, name), n in sorted(total.items(), key=lambda kv: (order[kv[0][0]], kv[0][1])):
        if low[(kind, name)] != n:
            continue
        out.append(Suspect(kind, name, n, tuple(index.get((kind, name), ()))))
    return _collapse(out)


def _collapse(suspects: list[Suspect]) -> list[Suspect]:
    """A suspect rail or switch explains the links on it: name the wider element, not each of its cables."""
    wide_rails = {s.name for s in suspects if s.kind == "rail"}
    wide_cables = {c.id for s in suspects if s.kind in ("rail", "switch") for c in s.cables}
    kept = []
    for s in suspects:
        if s.kind == "link":
            rail = s.name.rpartition(" rail ")[2]
            if rail in wide_rails or (s.cables and all(c.id in wide_cables for c in s.cables)):
                continue
        kept.append(s)
    return kept


def _cable_index(cables: dict[tuple[str, int], list[Cable]]) -> dict[tuple[str, str], list[Cable]]:
    """(kind, name) -> the cables a suspect of that kind names, sorted by id (built once per report)."""
    index: dict[tuple[str, str], list[Cable]] = defaultdict(list)
    for (host, rail), cs in cables.items():
        index[("link", f"{host} rail {rail}")].extend(cs)  # in plan order, as the plan lists them
        for c in cs:
            index[("switch", c.switch)].append(c)
            index[("rail", str(rail))].append(c)
            index[("node", host)].append(c)
    for (kind, _), cs in index.items():
        if kind != "link":
            cs.sort(key=lambda c: c.id)
    return index


# hosts not in the plan a report names (a 200,000-host -J file made a 1.7 MB line), as nccl_results names
# files not compared
MAX_UNKNOWN_HOSTS_NAMED = MAX_NOT_COMPARED_NAMED


def _on_planned_hosts(result: RunResult, planned: set[str]) -> RunResult:
    """The run's hosts the plan does not have (``unplanned``): it is still compared with the model (a site's
    host names may differ from the plan's), but it calibrates nothing (``--calibrate`` recorded a factor
    measured on other machines as this cluster's) and the report says how many runs were such."""
    others = tuple(sorted(set(result.run.hosts) - planned))
    return replace(result, unplanned=others) if others else result


def compare(
    blueprint: str,
    system: System,
    plan: Plan | None,
    runs: list[NcclRun],
    *,
    threshold: float | None = None,
    ignored: list[str] | None = None,
    calibration: Calibration | None = None,
    system_of: SystemOf | None = None,
    named_ports: dict[str, frozenset[str]] | None = None,
) -> AcceptanceReport:
    """Predict every run (on the system it ran: ``system_of``), mark the low ones and name the suspects with
    their cabling-plan rows. ``named_ports``: per pool, the compute ports (``mlx5_0/1``) whose RDMA names are
    the hosts' own, which the ports NCCL lists are held to (none: no such check)."""
    policy = perf_data().policy
    ratio = policy.acceptance_ratio.value if threshold is None else threshold
    cables = _node_cables(plan)
    held_to = planned_ports(plan, cables, named_ports or {})
    ports = _rail_ports(held_to)
    predictions = _Predictions(system, calibration, system_of)
    results = []
    for run in runs:
        resolved = _resolve_rail(run, ports, system.net_ports)
        if isinstance(resolved, str):
            results.append(RunResult(run, (), 0.0, 0.0, False, resolved))
        else:
            results.append(
                _predict_run(resolved, predictions, policy.acceptance_min_bytes.value, ratio, held_to)
            )
    rails = list(range(system.net_ports))
    planned = {n for n, _ in cables} | ({d.name for d in plan.devices if d.kind == "node"} if plan else set())
    if plan is not None:
        results = [_on_planned_hosts(r, planned) for r in results]
    unknown = sorted({h for r in runs for h in r.hosts} - planned)
    report = AcceptanceReport(
        blueprint,
        results,
        calibration_other_releases=sorted(predictions.other_releases),
        threshold=ratio,
        unknown_hosts=unknown[:MAX_UNKNOWN_HOSTS_NAMED],
        unknown_hosts_more=max(0, len(unknown) - MAX_UNKNOWN_HOSTS_NAMED),
        ignored=ignored or [],
        calibration=calibration.file if calibration else None,
        calibration_nccl=calibration.data.nccl_version if calibration else None,
    )
    usable = [r for r in results if not r.unusable]
    if usable and all(r.low for r in usable) and len(usable) > 1:
        report.cluster_wide = True
        return report
    report.suspects = _suspects(results, rails, cables)
    return report
