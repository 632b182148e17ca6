"""Public entry points: predicted busbw for a cluster (and its plan) at one size or over a sweep.

``predict_busbw(cluster, plan, "all_reduce", 1 << 30)`` is what the Ansible acceptance role and the rules
call; ``sweep`` is what ``blueprint estimate`` prints and plots.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from blueprints.catalog.perf import PerfData, perf_data
from generator.perf.channels import Graph, ring_ll128_cap, run_channels, search, tree_channel_cap
from generator.perf.collectives import (
    NO_CABLES,
    Estimate,
    Job,
    RoutedCables,
    algorithm_list,
    estimate,
    protocol_list,
)
from generator.perf.processes import DEFAULT_PROCESSES, ProcessSettings
from generator.perf.system import (
    Limit,
    PerfError,
    SpreadShape,
    System,
    nvls_allreduce_link_share,
    nvls_efficiency,
    rail_crossing_bound,
    routed_bound,
    spread_bound,
    system_for,
    tighter,
)

if TYPE_CHECKING:
    from generator.plan.model import Plan
    from generator.resolve import ResolvedCluster

PLACEMENTS = ("packed", "scattered")


@dataclass(frozen=True)
class RunSettings:
    """What a run changes, as NCCL's environment would: NCCL_ALGO, NCCL_PROTO, the inter-node channel count
    (NCCL_MAX_NCHANNELS-like), the channels run at least (NCCL_MIN_NCHANNELS), NCCL_P2P_DISABLE (NVLink
    off), NCCL_PXN_DISABLE (PXN off), the NCCL release, the run's processes (``ProcessSettings``) and the
    ranks each node runs (mpirun -N, srun --ntasks-per-node; None: every GPU of the node)."""

    algorithms: tuple[str, ...] | None = None
    protocols: tuple[str, ...] | None = None
    channels: int | None = None
    nvlink: bool = True
    nccl_version: str | None = None
    pxn: bool = True
    min_channels: int | None = None
    process: ProcessSettings = DEFAULT_PROCESSES
    ranks_per_node: int | None = None
    # NCCL_ALGO / NCCL_PROTO as given where they name collectives (``ring;allreduce:tree``, NCCL 2.25 on):
    # ``for_collective`` resolves them into ``algorithms`` / ``protocols``
    algorithm_lists: str | None = None
    protocol_lists: str | None = None
    # NCCL_COLLNET_ENABLE: False runs no IB SHARP (no CollNet, no NVLS across nodes) on a fabric that has it
    collnet: bool = True

    def for_collective(self, collective: str) -> RunSettings:
        """The settings ``collective`` runs with: a per-collective NCCL_ALGO / NCCL_PROTO resolved for it."""
        if self.algorithm_lists is None and self.protocol_lists is None:
            return self
        algorithms, protocols = self.algorithms, self.protocols
        if self.algorithm_lists is not None:
            algorithms = algorithm_list(self.algorithm_lists, collective) or None
        if self.protocol_lists is not None:
            protocols = protocol_list(self.protocol_lists, collective) or None
        return replace(self, algorithms=algorithms, protocols=protocols)

    def describe(self) -> str:
        parts = []
        if self.algorithm_lists or self.algorithms:
            parts.append("NCCL_ALGO=" + (self.algorithm_lists or ",".join(self.algorithms or ())))
        if self.protocol_lists or self.protocols:
            parts.append("NCCL_PROTO=" + (self.protocol_lists or ",".join(self.protocols or ())))
        if self.channels:
            parts.append(f"{self.channels} inter-node channels")
        if self.min_channels:
            # NCCL applies the maximum, then copies channels up to the minimum (connect.cc: "We permit
            # combining max, then min, to only use the first channels, then duplicate them")
            copied = self.channels is not None and self.min_channels > self.channels
            parts.append(f"{'copied to ' if copied else ''}NCCL_MIN_NCHANNELS={self.min_channels}")
        if not self.nvlink:
            parts.append("NVLink off")
        if not self.pxn:
            parts.append("PXN off")
        if not self.collnet:
            parts.append("CollNet off")
        if self.nccl_version:
            parts.append(f"NCCL {self.nccl_version}")
        parts += self.process.describe()
        if self.ranks_per_node:
            n = self.ranks_per_node
            parts.append(f"{n} rank{'' if n == 1 else 's'} a node")
        return "; ".join(parts)


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
    latency_us: float = 0.0  # the latency term of time_s (a site calibration scales only the rest)

    @property
    def algbw(self) -> float:
        return self.algbw_gbytes

    def as_dict(self) -> dict[str, object]:
        return {
            "size_bytes": self.size_bytes,
            "time_us": _significant(self.time_s * 1e6),
            "algbw_gbytes": _significant(self.algbw_gbytes),
            "busbw_gbytes": _significant(self.busbw_gbytes),
            "algorithm": self.algorithm,
            "protocol": self.protocol,
            "bottleneck": self.bottleneck,
        }


def _significant(value: float) -> float:
    """Three decimals, and six significant digits below 1: three decimals alone print the bandwidth of a few
    bytes as 0.0."""
    return round(value, 3) if abs(value) >= 1 else float(f"{value:.6g}")


def job_for(
    system: System,
    nodes: int | None = None,
    *,
    ranks_per_node: int | None = None,
    net_share: float = 1.0,
    placement: str = "packed",
    channels: int | None = None,
    pxn: bool = True,
    min_channels: int | None = None,
    process: ProcessSettings = DEFAULT_PROCESSES,
) -> Job:
    """The collective's view of ``nodes`` nodes of the system's pool (default: all of them); ``pxn=False``
    as NCCL_PXN_DISABLE=1, ``min_channels`` NCCL_MIN_NCHANNELS, ``process`` how processes hold the ranks."""
    n_nodes, rpn = _checked_shape(system, nodes, ranks_per_node, placement, process.gpus_per_process)
    units, per_unit = nvlink_domains(system, n_nodes)
    k = per_unit * rpn
    one_rail, net_share = net_share < 1, min(net_share, _ranks_nic_share(system, rpn))
    nics, net, spread, nvls_net, p2p = _unit_networks(
        system, units, per_unit, net_share, pxn, one_rail, n_nodes if placement == "packed" else None
    )
    ring_graph, caps, cap_scale, run = _graphs(system, units, per_unit * net_share, channels, min_channels)
    net, nvls_net = _channel_bounds(system, run, net, nvls_net)
    settings = system.transport_settings if units > 1 else None  # the transport runs only across units
    return Job(
        units=units,
        ranks_per_unit=k,
        intra=system.intra,
        intra_class=system.intra_class,
        net=net,
        spread_net=spread,
        p2p_net=p2p,
        nic_net=nics,
        intra_peer_share=system.intra_peer_share,
        p2p_nvlink_share=system.gpu.vendor == "nvidia",
        net_latency_us=system.net_latency_us,
        nvls=_nvls_limit(system, k, per_unit, units),
        sharp=system.sharp,
        sharp_share=system.sharp_share,
        ll128=system.ll128,
        sm_arch=system.sm_arch,
        scattered=placement == "scattered",
        nics_per_unit=system.nccl_nics * per_unit * net_share if units > 1 else 0.0,
        multi_node_nvls=system.multi_node_nvls,
        mnnvl=per_unit > 1,
        nccl_release=system.nccl_release,
        ring_graph=ring_graph,
        tree_channel_cap=caps[0],
        tree_ll128_channel_cap=caps[1],
        ring_ll128_channel_cap=caps[2],
        channel_cap_scale=cap_scale,
        tuner_net_latency_us=system.tuner_net_latency_us,
        nvls_net=nvls_net,
        transport_algorithms=settings.algorithms if settings is not None else None,
        transport_protocols=settings.protocols if settings is not None else None,
        runs_msccl=_runs_msccl(system, units, k, process),
        pat=system.pat,
        cables=_routed_cables(system, units, per_unit, n_nodes if placement == "packed" else None, k == 1),
    )


def _channel_bounds(
    system: System, run: int, net: Limit | None, nvls_net: Limit | None
) -> tuple[Limit | None, Limit | None]:
    """The unit's networks for its rings and trees and for NCCL's NVLS graph, bound by their channels."""
    if net is None:
        return net, nvls_net
    net = tighter(net, _channel_bound(system, run, "ring and tree")) or net
    nvls_net = tighter(nvls_net, _channel_bound(system, _nvls_channels(), "NVLS-tree")) or nvls_net
    return net, nvls_net


def _runs_msccl(system: System, units: int, ranks: int, process: ProcessSettings) -> bool:
    """Whether RCCL runs its MSCCL algorithms for the job: a GPU RCCL turns MSCCL on for (gpus.yaml
    rccl_msccl), one node whose ``ranks`` GPUs are each linked to every other (RCCL's rome_model_79: 7 xGMI
    links each), as the run's processes allow (ProcessSettings.msccl_runs)."""
    gpu = system.gpu
    shared_by_default = perf_data().rccl.msccl_single_process_default.value == 1
    return (
        gpu.rccl_msccl
        and units == 1
        and system.intra_class == "nvlink"
        and gpu.infinity_fabric_links == ranks - 1
        and process.msccl_runs(shared_by_default)
    )


def _checked_shape(
    system: System, nodes: int | None, ranks_per_node: int | None, placement: str, gpus_per_process: int = 1
) -> tuple[int, int]:
    """The job's node count and ranks per node, refused when the pool cannot run them (or its processes
    would drive more GPUs than a node runs ranks: a process drives GPUs of its own node)."""
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
    if not 1 <= gpus_per_process <= rpn:
        raise PerfError(f"{gpus_per_process} GPUs a process, but the run has {rpn} ranks a node")
    return n_nodes, rpn


def nvlink_domains(system: System, n_nodes: int) -> tuple[int, int]:
    """NVLink domains the job spans and its nodes in each. A job of part of several domains takes as many as
    it needs and spreads its nodes evenly over them (32 NVL72 trays: two racks of 16, not 18 + 18 = 36 trays
    the job does not have)."""
    units = math.ceil(n_nodes / system.unit_nodes)
    return units, math.ceil(n_nodes / units)


def _ranks_nic_share(system: System, rpn: int) -> float:
    """The share of a node's compute NICs ``rpn`` of its GPUs reach. NCCL's topology holds the GPUs of the
    communicator's local ranks only, and each GPU runs its channels over DIVUP(local NICs, local GPUs) of the
    NICs nearest it (src/graph/topo.cc ``ncclTopoGetLocalNet``, 2.20.3): one a GPU where every GPU has its
    own, a whole one where GPUs share theirs. So fewer ranks a node reach fewer NICs (one H100 a node on
    eight 400G rails: ~49 GB/s, four: ~197, tests/perf/data/net_channel_runs.yaml)."""
    ports, gpus = system.nccl_nics, system.gpus_per_node
    if ports < 1 or rpn >= gpus:
        return 1.0
    return max(1, math.ceil(ports * rpn / gpus - 1e-9)) / ports


def _fabric_limits(system: System, packed_nodes: int | None) -> tuple[Limit, Limit | None]:
    """What the fabric allows a node for spread traffic, and without PXN on a rail-optimised fabric: for a
    packed job of ``packed_nodes`` nodes, its own shares of peers outside its leaf group (nothing when it fits
    in one); for scattered ranks (None), the whole fabric's."""
    assert system.net is not None
    shape = system.spread_shape
    if shape is None:
        return system.net, None
    nodes = shape.fabric_nodes if packed_nodes is None else packed_nodes
    return spread_bound(shape, nodes), rail_crossing_bound(shape, nodes)


def _routed_shape(system: System) -> SpreadShape | None:
    """The fabric's shape when it is routed over its cables (a torus, a hypercube, a dragonfly), else None.
    Its cables carry every NIC's bytes (it has no rails: a dragonfly cables a node's NICs to one router), so
    what they allow a node does not shrink with the share of its NICs a run reaches."""
    shape = system.spread_shape
    return shape if shape is not None and shape.routes is not None else None


def _routed_cables(
    system: System, units: int, per_unit: int, packed_nodes: int | None, one_rank: bool = False
) -> RoutedCables:
    """What a routed fabric's cables allow a unit of a packed job of ``packed_nodes`` nodes for its
    rings (each node's bytes to the next node in order) and NCCL's trees (to its parent and children in both
    trees) (system.routed_bound), and with ``one_rank`` a unit where the job may run PAT, for its PAT (to the
    units 2^d ranks on); for scattered ranks (None), over the whole fabric's nodes in random order, as the
    spread bound they also meet is the whole fabric's. Nothing for one unit or elsewhere."""
    shape = _routed_shape(system)
    if units < 2 or shape is None:
        return NO_CABLES
    shuffled = packed_nodes is None
    nodes = shape.fabric_nodes if packed_nodes is None else packed_nodes
    prefix = f"{per_unit} nodes' " if per_unit > 1 else ""
    bounds = []
    for pattern in ("ring", "tree", "pat") if one_rank and system.pat else ("ring", "tree"):
        lim = routed_bound(shape, pattern, nodes, shuffled)
        bounds.append(None if lim is None or lim is shape.net else lim.scaled(per_unit, prefix + lim.name))
    return RoutedCables(*bounds)


def _unit_networks(
    system: System,
    units: int,
    per_unit: int,
    net_share: float,
    pxn: bool = True,
    one_rail: bool = False,
    packed_nodes: int | None = None,
) -> tuple[Limit | None, Limit | None, Limit | None, Limit | None, Limit | None]:
    """A unit's NICs (their line rate as the transport reaches it), its network for neighbour traffic
    (NCCL's ring graph), for spread traffic (the fabric), as NCCL's NVLS graph uses it and for
    point-to-point traffic (alltoall); all None without a compute network.
    ``net_share``: the share of each node's NICs the run reaches (``one_rail``: because NCCL_IB_HCA names
    one port). Point-to-point traffic keeps to its rail through PXN, which relays over NVLink (NVIDIA/nccl
    src/graph/paths.cc: the relay GPU "is connected to us through NVLink"): without it (``pxn=False`` or no
    NVLink) the fabric's rail-crossing bound applies too. ``packed_nodes``: a packed job's nodes (taken in
    leaf order), whose spread traffic meets the fabric as its own peers spread over the leaf groups
    (system.spread_bound: nothing in one group); None: ranks scattered over the whole fabric. One unit sends
    nothing over the network."""
    if system.net is None or units < 2:
        return None, None, None, None, None
    scale = per_unit * net_share
    prefix = f"{per_unit} nodes' " if per_unit > 1 else ""
    share = f", {system.net_ports * net_share:g} of {system.net_ports} NICs" if net_share < 1 else ""
    whole = system.net.scaled(scale, prefix + system.net.name + share)
    nc = perf_data().for_release(system.nccl_release).nccl
    net = _ring_channel_cap(system, whole, scale, nc.ring_graph_max_channels(), "ring")
    nvls_net = _ring_channel_cap(system, whole, scale, nc.max_channels.value, "NVLS")
    bound, crossing = _fabric_limits(system, packed_nodes)
    routed = _routed_shape(system) is not None  # a routed fabric's cables are not rails
    fabric_scale = per_unit if routed else scale
    spread = bound.scaled(fabric_scale, prefix + bound.name + ("" if routed else share))
    # a run on one rail (NCCL_IB_HCA naming one port) never leaves that rail's leaves; the rail-crossing
    # bound is never looser than the fabric's (more bytes climb the same uplinks)
    if crossing is not None and not one_rail and not (pxn and system.intra_class == "nvlink"):
        return whole, net, spread, nvls_net, crossing.scaled(scale, prefix + crossing.name + share)
    return whole, net, spread, nvls_net, spread


def _nvls_limit(system: System, k: int, per_unit: int, units: int) -> Limit | None:
    """NVLS all_reduce algbw inside a unit of ``k`` ranks: NVLink × NVLS efficiency × n/(n+1), the rate of the
    n-GPU H100 fact (perf.yaml calibration; NVLS moves S·(n+1)/n each way per GPU) at every domain size. The
    link law would grow it with k (×1.11 from 8 to 64 GPUs); OCI's GB300 runs in one rack do not (algbw at
    16 GiB: 480.9 GB/s on 8 GPUs, 472.6 on 64; tests/perf/data/mnnvl_nvls_runs.yaml), nor do NVIDIA/nccl
    #1455's 5-7 H100 runs (in the evaluation set: −1 to −4 % with the law, +1 to +3 % without)."""
    if not system.nvls or k < 2 or _mnnvl_without_nvls(system, per_unit, units):
        return None
    e = nvls_efficiency(sm_arch=system.sm_arch)
    share = nvls_allreduce_link_share()
    return Limit(
        e * system.nvlink_raw_gbytes * share,
        "NVLS",
        f"NVSwitch multimem: {system.nvlink_raw_gbytes:g} GB/s NVLink per GPU × {e:.1%} NVLS efficiency × "
        f"{share:.3f}, the all_reduce rate of the calibration fact at any domain size",
    )


def _mnnvl_without_nvls(system: System, per_unit: int, units: int) -> bool:
    """Whether NVLS is off for a job whose NVLink domains span ``per_unit`` nodes (``units`` domains).
    NCCL 2.20's tuner turns it off on any multi-node NVLink domain without IB SHARP (``if (comm->nNodes > 1
    || comm->MNNVL) algoEnable[NVLS] = 0``, "MNNVL: NVLS not yet supported"), NVLS-tree with it. From 2.21
    (perf.yaml mnnvl_nvls_min_release) a domain counts as one node, so a job inside one domain runs NVLS
    (checked outside the evaluation set: tests/perf/data/mnnvl_nvls_runs.yaml). Across domains NCCL's code
    would also allow NVLS-tree; the model keeps it off, because the published multi-rack runs do not show it
    (OCI's GB300 two racks reach 738 GB/s where sixteen trays of one rack reach 930; docs/performance.md)."""
    if per_unit <= 1 or system.sharp:
        return False
    return units > 1 or not system.mnnvl_nvls


def _graphs(
    system: System, units: int, scale: float, channels: int | None, min_channels: int | None = None
) -> tuple[Limit | None, tuple[float, float, float], float, int]:
    """NCCL's inter-unit channel graph (perf/channels.py): the ring bound it plans (channels × speed), the
    tree bus bandwidth its tuner allows (channels × perChMaxTreeBw, Simple and LL128), the ring LL128 bus
    bandwidth (channels × perChMaxRingLL128Bw), how many times the channels NCCL runs by default
    ``min_channels`` (NCCL_MIN_NCHANNELS) asks for (1 when it asks for no more) and the channels the run
    has between units (0: none); ``channels`` caps the channel count (NCCL_MAX_NCHANNELS-like). Nothing
    within one unit: the graph is that of NICs."""
    for name, value in (("--channels", channels), ("--min-channels", min_channels)):
        if value is not None and value < 1:
            raise PerfError(f"{name} must be at least 1, not {value}")
    if units < 2 or system.net is None:
        if channels is not None or min_channels is not None:
            raise PerfError(
                "--channels and --min-channels set the channels of rings and trees between nodes (NCCL's "
                "inter-node graph); this run has one node or NVLink domain, whose channels the model does "
                "not count"
            )
        return None, (math.inf, math.inf, math.inf), 1.0, 0
    perf = perf_data().for_release(system.nccl_release)
    nvlink = system.intra.gbytes if (system.intra is not None and system.intra_class == "nvlink") else None
    graph = search(system.sm_arch, *_graph_nics(system, scale), nvlink, perf)
    if graph is None:
        return None, (math.inf, math.inf, math.inf), 1.0, 0
    run = _run_channels(graph, system.sm_arch, perf, channels, min_channels)
    given = ""
    if channels is not None and channels < graph.channels:
        graph = type(graph)(channels, graph.speed)
        given = " (--channels)"
    ring = Limit(
        graph.gbytes,
        f"NCCL ring graph: {graph.channels} channels × {graph.speed:g} GB/s{given}",
        "search.cc: one NIC per channel, each GPU's NVLink crossed once per channel, NCCL's speeds",
    )
    simple, ll128 = (tree_channel_cap(graph, system.sm_arch, units, perf, p) for p in ("simple", "ll128"))
    caps = (simple, ll128, ring_ll128_cap(graph, system.sm_arch, units, perf))
    return ring, caps, _min_channels_scale(graph, system.sm_arch, perf, min_channels), run


def _run_channels(graph: Graph, sm_arch: int, perf: PerfData, most: int | None, least: int | None) -> int:
    """The channels a run has between units: NCCL's default for the searched graph (channels.run_channels),
    cut to ``most`` (NCCL_MAX_NCHANNELS) and then copied up to ``least`` (NCCL_MIN_NCHANNELS, at most
    MAXCHANNELS), the order of connect.cc ``ncclTopoPostset`` ("combining max, then min")."""
    run = run_channels(graph, sm_arch, perf)
    if most is not None:
        run = min(run, most, int(perf.nccl.max_channels.value))
    if least is not None:
        run = max(run, min(least, int(perf.nccl.max_channels.value)))
    return run


def _nvls_channels() -> int:
    """The NVLS channels NCCL runs (NCCL_NVLS_NCHANNELS' default): NVLS-tree's channels between nodes."""
    return int(perf_data().nccl.nvls_channels.value)


def _channel_bound(system: System, channels: int, what: str) -> Limit | None:
    """What ``channels`` channels between units carry at most, where the catalogue has a per-channel figure
    for the GPU's compute capability (perf.yaml ``net_channel_gbytes``, matched exactly); None otherwise.
    Eight H100 with eight NICs run 16 channels, two a NIC, and reach ~40 GB/s a NIC, not the NIC's ~47."""
    rate = perf_data().nccl.net_channel_gbytes.get(system.sm_arch)
    if rate is None or channels < 1:
        return None
    return Limit(
        channels * rate.value,
        f"{channels} {what} channels × {rate.value:g} GB/s [fitted]",
        f"what one channel between nodes carries at most on compute capability {system.sm_arch} "
        f"(perf.yaml net_channel_gbytes: {rate.source})",
    )


def _min_channels_scale(graph: Graph, sm_arch: int, perf: PerfData, min_channels: int | None) -> float:
    """NCCL_MIN_NCHANNELS copies the channels NCCL runs up to its value (at most MAXCHANNELS; connect.cc
    ``copyChannels``): the per-channel maxima (LL128; Simple trees) then hold for that many, while NCCL's
    tuner keeps counting its graph's channels. The links stay what they are: more channels never carry more
    than the NICs and NVLink (128 H100 nodes, ring LL128 with 32 channels: 367 GB/s, NVIDIA/nccl-tests
    #322), though they lift the per-channel bound of ``_channel_bound``."""
    if min_channels is None:
        return 1.0
    return max(
        1.0, _run_channels(graph, sm_arch, perf, None, min_channels) / run_channels(graph, sm_arch, perf)
    )


def _graph_nics(system: System, scale: float) -> tuple[float, float]:
    """The speed of one NIC as NCCL's graph counts it and how many a run's share ``scale`` of the node's
    network reaches; a share of one device (one rail of a multi-rail group) is one slower device."""
    n = system.nccl_nics * scale
    if 0 < n < 1:
        return system.nic_gbytes * n, 1.0
    return system.nic_gbytes, n


def _ring_channel_cap(system: System, net: Limit, scale: float, channels: float, graph: str) -> Limit:
    """An NVLink domain's network as rings and trees between domains see it: each channel leaves the domain
    through one NIC and NCCL searches at most ``ring_graph_max_channels()`` of them, so a domain with more
    NICs than that (GB200 NVL72: 72) uses only that many (perf.yaml [NCCL-INIT]). NCCL's NVLS graph (NVLS
    and NVLS-tree between nodes) is searched with MAXCHANNELS, twice the ring's (init.cc
    ``nvlsGraph.maxChannels = MAXCHANNELS``): ``channels`` is the graph's maximum. Spread traffic (alltoall,
    point-to-point) is not bound this way."""
    nics = _graph_nics(system, scale)[1]
    if system.nccl_nics < 1 or nics <= channels:
        return net
    per_nic = net.gbytes / nics
    return Limit(
        per_nic * channels,
        f"{channels:g} {graph} channels × 1 NIC",
        f"NCCL searches at most {channels:g} inter-node {graph} channels, one NIC each, of the domain's "
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
        est.latency_us,
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
    settings: RunSettings | None = None,
) -> list[Prediction]:
    """``settings`` (algorithms, protocols, channels) as the run sets them; its ``nvlink`` and
    ``nccl_version`` are the system's (``system_for``)."""
    s = settings or RunSettings()
    job = job_for(
        system,
        nodes,
        ranks_per_node=s.ranks_per_node,
        placement=placement,
        channels=s.channels,
        pxn=s.pxn,
        min_channels=s.min_channels,
        process=s.process,
    )
    n = nodes or system.pool_nodes
    s = s.for_collective(collective)
    algos = algorithms or s.algorithms
    return [
        _prediction(estimate(collective, int(x), job, algorithms=algos, protocols=s.protocols), n)
        for x in sizes
    ]
