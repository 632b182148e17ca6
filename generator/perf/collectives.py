"""Alpha-beta cost of NCCL collectives: ring, tree, NVLS, NVLS-tree, CollNet (IB SHARP) and PAT.

Time of one collective of S bytes with algorithm a and protocol p:

    t = latency(a, p) + S / algbw(a, p)

``latency`` follows NCCL's tuner (``data/perf.yaml`` nccl.*: base latency plus a per-step latency for NVLink,
PCIe or network steps, plus the fabric's own hop latency), ``algbw`` is the bandwidth the data movement of
the algorithm allows over the tightest link. Bus bandwidth is what nccl-tests prints: ``busbw = algbw ·
factor`` with factor 2(n−1)/n for all_reduce, (n−1)/n for all_gather, reduce_scatter and alltoall, 1 for
broadcast — so a ring all_reduce of n ranks over links of B GB/s takes 2(n−1)/n · S / B and shows busbw B.

Data movement per algorithm (per rank, one direction), which fixes each ``algbw``:

* ring: every rank sends factor·S; the ring's slowest edge sets B: NVLink/PCIe inside a node, and the
  node's NICs between nodes (one ring per NIC, so the whole node's network bandwidth).
* tree (NCCL double binary tree, all_reduce across nodes): S up and S down, algbw = 0.92·B/2; on two nodes
  each node sends S once, algbw = 0.92·min(B_intra/2, B_node) (NCCL sizes 2-node trees with bwIntra),
  unless the node has a NIC per GPU (the tree then cannot use them all: NVIDIA/nccl-tests #196).
* NVLS (NVSwitch multimem): S·(n+1)/n each way per GPU → algbw = e·B_nvlink·n/(n+1), with n the GPUs of the
  fact e is fitted to at every domain size (predict.py ``_nvls_limit``); across nodes it needs IB SHARP (each
  node sends and receives S once).
* NVLS-tree: NVLS inside the node, a tree of nodes outside (S each way for ≤ 2 nodes, 2S beyond).
* NVLS all_gather / reduce_scatter (one NVLink domain): S through the busier direction per GPU.
* CollNet (IB SHARP): reduce-scatter inside the node, S per node to and from the switches.
* PAT (all_gather / reduce_scatter at one rank per node): 0.75 of the tree graph, taken as algbw by NCCL.
* alltoall: (k−1)/n·S over NVLink per rank (point-to-point transfers reach a share of NCCL's NVLink count,
  ``_p2p_intra``), k·(n−k)/n·S through each node's NICs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import NamedTuple

from blueprints.catalog.perf import (
    NCCL_FUNCTIONS,
    NCCL_SPELLINGS,
    PerfData,
    TreeCorrection,
    by_capability,
    perf_data,
)
from generator.perf.system import Limit, PerfError, nvls_allreduce_link_share, tighter

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast")
ALGORITHMS = ("ring", "tree", "nvls", "nvls_tree", "collnet", "pat", "p2p")
NVLS_ALGORITHMS = ("nvls", "nvls_tree")  # what NCCL_NVLS_ENABLE=0 turns off (NVLink SHARP)
PROTOCOLS = ("ll", "ll128", "simple")
# NCCL_ALGO spellings (blueprints/catalog/perf.py NCCL_SPELLINGS; case-insensitive in NCCL too) → model names
# (NCCL's CollNetChain is the one CollNet modelled, with CollNetDirect's latency, as the evaluation reads
# CoreWeave's NCCL_ALGO=COLLNETCHAIN SHARP runs)
ALGORITHM_NAMES = {
    spelled.lower(): name for name, spelled in NCCL_SPELLINGS.items() if name in ALGORITHMS
} | {"collnet_direct": "collnet", "collnetchain": "collnet"}


# NCCL's collective functions without case (blueprints/catalog/perf.py NCCL_FUNCTIONS) → the model's
FUNCTION_NAMES = {spelled.lower(): name for spelled, name in NCCL_FUNCTIONS.items()}


def per_collective(text: str) -> bool:
    """Whether an NCCL_ALGO / NCCL_PROTO names collectives (``allreduce:tree``; ``;`` between entries)."""
    return ":" in text or ";" in text


def _entries(text: str, what: str) -> list[tuple[str | None, str]]:
    """A per-collective NCCL_ALGO / NCCL_PROTO split as NCCL's parser splits it (tuning.cc 2.25.1
    ``parseList``): entries between ``;``, each cut at ``:`` by ``strtok_r``, which skips empty tokens, into
    a function (NCCL's name without case) and the list up to the next colon (``allreduce::tree`` names tree,
    ``allreduce:tree:ring`` tree). An entry of one token has no function (None): allowed only where the
    string starts ("All entries except the first must have a prefix"; ``;ring`` is refused too), and its
    token is the list, so ``allreduce:`` reads ``allreduce`` as a list and NCCL refuses it ("Unrecognized
    element token"). PerfError on each, and on an unknown function."""
    out: list[tuple[str | None, str]] = []
    at = 0
    for raw in text.strip().split(";"):
        starts_string, at = at == 0, at + len(raw) + 1
        entry = raw.strip()
        if not entry:
            continue
        tokens = [t.strip() for t in entry.split(":") if t.strip()]
        if len(tokens) >= 2:
            if tokens[0].lower() not in FUNCTION_NAMES:
                raise PerfError(
                    f"`{text}`: unknown collective `{tokens[0]}` (NCCL's: {', '.join(NCCL_FUNCTIONS)})"
                )
            out.append((tokens[0].lower(), tokens[1]))
            continue
        if not starts_string:
            raise PerfError(
                f"`{text}`: every {what} list after the first names its collective (`allreduce:...`), as "
                'NCCL\'s parser requires ("All entries except the first must have a prefix")'
            )
        if not tokens:
            raise PerfError(f"`{text}`: `{entry}` names neither a collective nor {what}s")
        if ":" in entry and tokens[0].lower() in FUNCTION_NAMES:
            raise PerfError(
                f"`{text}`: `{entry}` gives the collective no {what} list; NCCL reads `{tokens[0]}` as the "
                'list and refuses it ("Unrecognized element token")'
            )
        out.append((None, tokens[0]))
    return out


def _entry_for(entries: list[tuple[str | None, str]], collective: str | None) -> str | None:
    """The list ``_entries`` leave ``collective``, as NCCL's parser reads them: the first entry may name no
    function and then sets every function; a later entry replaces what an earlier one set. None: no entry
    sets it (every one enabled)."""
    chosen = None
    for function, listed in entries:
        if function is None or (collective is not None and FUNCTION_NAMES[function] == collective):
            chosen = listed
    return chosen


def _nccl_list(
    text: str, known: tuple[str, ...], name_of: Callable[[str], str | None], what: str
) -> tuple[str, ...]:
    """NCCL_ALGO / NCCL_PROTO syntax (NCCL tuning.cc ``parseList``): names separated by commas, any case; a
    leading ``^`` keeps every one but those named."""
    body = text.strip()
    exclude = body.startswith("^")
    names = []
    for raw in (a.strip() for a in body.removeprefix("^").split(",") if a.strip()):
        name = name_of(raw)
        if name is None:
            raise PerfError(f"unknown {what} `{raw}` (known: {', '.join(known)})")
        names.append(name)
    if not exclude:
        return tuple(dict.fromkeys(names))
    kept = tuple(n for n in known if n not in names)
    if not kept:
        raise PerfError(f"`{text}` excludes every {what}")
    return kept


def algorithm_list(text: str, collective: str | None = None) -> tuple[str, ...]:
    """``Ring,Tree`` / ``nvlstree`` / ``^NVLS`` → model names; PerfError on an unknown one. CollNetChain named
    is the one CollNet modelled; excluded, it leaves NCCL CollNetDirect, so the model's CollNet stays. A
    per-collective list (``ring;allreduce:tree``) gives what it leaves ``collective`` (empty: no restriction;
    every entry is checked whatever the collective)."""

    def name_of(raw: str) -> str | None:
        name = ALGORITHM_NAMES.get(raw.lower(), raw.lower())
        return name if name in ALGORITHMS else None

    _no_spaces(text, "NCCL_ALGO")
    if per_collective(text):
        return _per_collective_list(text, collective, algorithm_list, "algorithm")
    body = text.strip()
    if body.startswith("^"):
        body = "^" + ",".join(a for a in body[1:].split(",") if a.strip().lower() != "collnetchain")
    return _nccl_list(body, ALGORITHMS, name_of, "algorithm")


def protocol_list(text: str, collective: str | None = None) -> tuple[str, ...]:
    """``LL128,Simple`` / ``^LL128`` → model names; PerfError on an unknown one; per collective as
    ``algorithm_list``."""
    _no_spaces(text, "NCCL_PROTO")
    if per_collective(text):
        return _per_collective_list(text, collective, protocol_list, "protocol")
    known = PROTOCOLS
    return _nccl_list(text, known, lambda raw: raw.lower() if raw.lower() in known else None, "protocol")


def _no_spaces(text: str, what: str) -> None:
    """NCCL compares each token whole (tuning.cc parseList: strcasecmp, no trimming): 2.25.1's refuses a token
    with a space ("Unrecognized element token", ncclInvalidUsage) and 2.22.3's skips it, so `ring, tree` runs
    the ring alone there. PerfError rather than a prediction of what NCCL does not run."""
    if any(c.isspace() for c in text):
        raise PerfError(
            f"`{text}`: NCCL reads {what} without spaces (tuning.cc parseList compares whole tokens: 2.25.1 "
            "refuses the value, 2.22.3 skips the token); write "
            f"`{''.join(text.split())}`"
        )


def _per_collective_list(
    text: str, collective: str | None, plain: Callable[[str], tuple[str, ...]], what: str
) -> tuple[str, ...]:
    """What a per-collective NCCL_ALGO / NCCL_PROTO leaves ``collective``, every entry's names checked."""
    entries = _entries(text, what)
    for _, listed in entries:
        plain(listed)
    body = _entry_for(entries, collective)
    return () if body is None else plain(body)


def bus_factor(collective: str, n: int) -> float:
    """nccl-tests' busbw / algbw for ``n`` ranks."""
    if n < 1:
        raise PerfError("a collective needs at least one rank")
    if collective == "all_reduce":
        return 2 * (n - 1) / n
    if collective in ("all_gather", "reduce_scatter", "alltoall"):
        return (n - 1) / n
    if collective == "broadcast":
        return 1.0
    raise PerfError(f"unknown collective `{collective}` (known: {', '.join(COLLECTIVES)})")


def ring_time_s(collective: str, n: int, size_bytes: float, bus_gbytes: float, latency_us: float) -> float:
    """Closed form of a ring: latency + S · factor / B (broadcast pipelines S once through the chain)."""
    return latency_us * 1e-6 + size_bytes * bus_factor(collective, n) / (bus_gbytes * 1e9)


class RoutedCables(NamedTuple):
    """What a routed fabric's cables (a torus's, a hypercube's, a dragonfly's) allow a unit for traffic to its
    ring neighbour and to its tree neighbours (None: not routed, or the cables do not bind)."""

    ring: Limit | None = None
    tree: Limit | None = None
    pat: Limit | None = None  # NCCL's PAT, to the units 2^d ranks on (only where the job runs PAT)


NO_CABLES = RoutedCables()


@dataclass(frozen=True)
class Job:
    """One collective's view of the machine: how many NCCL 'nodes' (NVLink domains) and ranks in each."""

    units: int
    ranks_per_unit: int
    intra: Limit | None  # per-rank bandwidth inside a unit
    intra_class: str  # nvlink | pci
    net: Limit | None  # per-unit network bandwidth for neighbour traffic (rings/trees in rank order)
    spread_net: Limit | None  # per-unit network bandwidth for traffic spread over the fabric
    net_latency_us: float
    nvls: Limit | None  # NVLS algbw inside a unit (None: no NVLink SHARP)
    sharp: bool
    ll128: bool
    sm_arch: int
    scattered: bool = False  # ranks placed without regard to leaves: rings and trees see spread_net
    sharp_share: float = 1.0  # share of the rails SHARP aggregates (2 streaming flows per switch)
    nics_per_unit: float = 0.0  # compute NICs a unit's ranks use (0: not known)
    multi_node_nvls: bool = True  # NCCL 2.18+: NVLS + IB SHARP and NVLS-tree across units
    mnnvl: bool = False  # the NVLink domain spans nodes (NCCL's MNNVL: the domain is one node to its tuner)
    ring_graph: Limit | None = (
        None  # NCCL's inter-unit ring graph: channels × per-channel speed (channels.py)
    )
    tree_channel_cap: float = math.inf  # tree bus GB/s NCCL's tuner allows: channels × perChMaxTreeBw
    tree_ll128_channel_cap: float = math.inf  # the same for LL128: channels × perChMaxTreeLL128Bw
    ring_ll128_channel_cap: float = math.inf  # ring LL128 bus GB/s: channels × perChMaxRingLL128Bw
    # channels the run adds over NCCL's default (NCCL_MIN_NCHANNELS, predict._min_channels_scale): the
    # per-channel maxima (LL128; Simple trees beyond two nodes) hold for that many times the channels in what
    # the run reaches; NCCL's tuner does not see them (it counts its graph's channels)
    channel_cap_scale: float = 1.0
    # the latency a cloud transport's net plugin reports to NCCL (its tuner's latencyInter, in place of the
    # traversal latency); None: NCCL's tuner sees the traversal latency (IB/RoCE transports report none)
    tuner_net_latency_us: float | None = None
    # the unit's network as NCCL's NVLS graph uses it (up to MAXCHANNELS NICs, twice the ring graph's); None:
    # the same as ``net``
    nvls_net: Limit | None = None
    # NCCL_ALGO / NCCL_PROTO the cloud transport's setup runs this job with (GPUDirect-TCPX: Ring, Simple):
    # what an estimate runs unless it names its own; None: NCCL's choice among all
    transport_algorithms: tuple[str, ...] | None = None
    transport_protocols: tuple[str, ...] | None = None
    nccl_release: int | None = None  # the run's NCCL (100·major + minor): whose tuner tables apply
    # per-unit network for point-to-point traffic (alltoall): ``spread_net``, or the fabric's rail-crossing
    # bound when each GPU sends through its own NIC (no PXN); rings and trees stay rail-aligned either way
    p2p_net: Limit | None = None
    # the unit's NICs at the rate the transport reaches on them, without a channel or fabric bound: what
    # rail-aligned point-to-point traffic to a neighbouring unit reaches (pipeline stage sends)
    nic_net: Limit | None = None
    # share of ``intra`` one rank reaches sending to one peer of its unit (System.intra_peer_share)
    intra_peer_share: float = 1.0
    # NCCL's point-to-point NVLink share (perf.yaml p2p_nvlink_efficiency) applies: NVIDIA NVLink; not AMD's
    # xGMI, whose catalogue figure is already what a link carries
    p2p_nvlink_share: bool = True
    # RCCL runs its MSCCL algorithms for this job (predict._runs_msccl): the all-pairs all_reduce then runs in
    # the window perf.yaml rccl.msccl_allpairs gives, for as many ranks as its GPUs
    runs_msccl: bool = False
    # the run's NCCL can run PAT (System.pat): all_gather / reduce_scatter at one rank per unit
    pat: bool = False
    # what a torus's, hypercube's or dragonfly's cables allow a unit of the job for its rings and for NCCL's
    # trees (system.routed_bound)
    cables: RoutedCables = NO_CABLES

    @property
    def ranks(self) -> int:
        return self.units * self.ranks_per_unit


@dataclass(frozen=True)
class Candidate:
    """One algorithm/protocol with its plateau bandwidth and latency, and NCCL's size-dependent corrections
    (ncclTopoGetAlgoTime): the tree's medium-size bandwidth factor and the ring's plateau latency."""

    algorithm: str
    protocol: str
    algbw: Limit
    latency_us: float
    tree_correction: TreeCorrection | None = None
    plateau_from_bytes: float = math.inf  # the ring plateau latency applies from this size on
    plateau_factor: float = 1.0
    tuner_share: float = 1.0  # share of algbw NCCL's tuner believes in when it picks (it chooses, not we)
    tuner_cap_gbytes: float = (
        math.inf
    )  # algbw NCCL's tuner allows at most (tree: channels × perChMaxTreeBw / 2)
    tuner_latency_us: float | None = None  # the latency NCCL's tuner computes, when not latency_us

    def latency_at(self, size_bytes: float) -> float:
        return self._plateau(self.latency_us, size_bytes)

    def _plateau(self, latency_us: float, size_bytes: float) -> float:
        return latency_us * (self.plateau_factor if size_bytes >= self.plateau_from_bytes else 1.0)

    def bandwidth_at(self, size_bytes: float) -> float:
        corr = self.tree_correction.get(self.protocol, size_bytes) if self.tree_correction else 1.0
        return self.algbw.gbytes * corr

    def time_s(self, size_bytes: float) -> float:
        return self.latency_at(size_bytes) * 1e-6 + size_bytes / (self.bandwidth_at(size_bytes) * 1e9)

    def tuner_time_s(self, size_bytes: float) -> float:
        """The time NCCL's tuner predicts, which decides the algorithm NCCL runs."""
        bw = min(self.bandwidth_at(size_bytes) * self.tuner_share, self.tuner_cap_gbytes)
        lat = self.latency_us if self.tuner_latency_us is None else self.tuner_latency_us
        return self._plateau(lat, size_bytes) * 1e-6 + size_bytes / (bw * 1e9)


@dataclass(frozen=True)
class Estimate:
    collective: str
    size_bytes: int
    ranks: int
    time_s: float
    algbw_gbytes: float
    busbw_gbytes: float
    algorithm: str
    protocol: str
    latency_us: float
    limit: str  # the bandwidth limit of the chosen algorithm
    bottleneck: str  # limit, or latency when that dominates


def _log2i(x: int) -> int:
    return math.floor(math.log2(x)) if x > 1 else 0


def _ll_max(job: Job, perf: PerfData) -> float:
    nc = perf.nccl
    if job.units == 1:
        entry = (
            by_capability(nc.ll_max_gbytes_single, job.sm_arch)
            or nc.ll_max_gbytes_single[min(nc.ll_max_gbytes_single)]
        )
        return entry.value
    return nc.ll_max_gbytes_two_nodes.value if job.units == 2 else nc.ll_max_gbytes_many_nodes.value


def _protocols(job: Job) -> tuple[str, ...]:
    return ("ll", "ll128", "simple") if job.ll128 else ("ll", "simple")


def _neighbour_net(job: Job, graph_net: Limit | None) -> Limit | None:
    """A unit's network as an algorithm's channels between units use it (``graph_net``: the ring and tree
    graph's, or the NVLS graph's). Scattered ranks also meet the fabric's bound for spread traffic; the
    channels stay what bounds them either way (their count and what each carries)."""
    if not job.scattered:
        return graph_net
    return tighter(job.spread_net, graph_net)


def _net_step_us(job: Job, perf: PerfData, hw_us: float, protocol: str) -> float:
    """One network step's latency as NCCL's tuner counts it: the step's hardware latency plus the transport's
    latency per traversal (``job.net_latency_us``), which Simple counts twice (perf.yaml
    net_latency_simple_factor: tuning.cc adds latencyInter once more for Simple)."""
    factor = perf.nccl.net_latency_simple_factor.value if protocol == "simple" else 1.0
    return hw_us + job.net_latency_us * factor


def _ring(collective: str, job: Job, perf: PerfData) -> list[Candidate]:
    nc = perf.nccl
    n, k, u = job.ranks, job.ranks_per_unit, job.units
    net = tighter(_neighbour_net(job, job.net), job.cables.ring)
    base = tighter(job.intra if k > 1 else None, net if u > 1 else None, job.ring_graph if u > 1 else None)
    if base is None:
        return []
    out: list[Candidate] = []
    factor = bus_factor(collective, n)
    hw = nc.hw_latency_us
    for p in _protocols(job):
        if p == "simple":
            bw = base
        elif p == "ll128":
            bw = base.scaled(nc.ring_ll128_factor.value if k >= 2 else nc.ring_ll128_factor_ppn1.value)
            if u > 1:
                bw = _channel_cap(bw, job.ring_ll128_channel_cap * job.channel_cap_scale, "ring", "LL128")
        else:
            f = (
                nc.ring_ll_factor_multi.value
                if (u > 1 or collective == "all_reduce")
                else nc.ring_ll_factor_single.value
            )
            bw = base.scaled(f)
            cap = _ll_max(job, perf)
            if bw.gbytes > cap:
                bw = Limit(cap, "LL protocol ceiling", f"NCCL's LL ceiling {cap:g} GB/s")
        lat = nc.base_latency_us.get("ring", p)
        if collective == "broadcast":
            link = job.intra_class if u == 1 else "net"
            lat += n * hw.get(link, "tree" if p == "simple" else "ring", p)
        else:
            if collective == "all_reduce":
                extra = int(nc.ring_all_reduce_extra_net_steps.value)
                nsteps, ninter = 2 * (n - 1), (2 * (u - 1) + extra if u > 1 else 0)
            else:
                nsteps, ninter = n - 1, u - 1
            ninter = min(ninter, nsteps)
            intra_lat = hw.get(job.intra_class, "ring", p)
            if u > 1:
                overhead = nc.net_overhead_us.value * (
                    nc.net_overhead_simple_factor.value if p == "simple" else 1
                )
                intra_lat = max(intra_lat, overhead)
            # 2.25.1: "With ppn=1 latencies are fully exposed, use the Tree network latency"
            hop = "tree" if (k == 1 and nc.ppn1_tree_net_latency.value) else "ring"
            inter_lat = _net_step_us(job, perf, hw.get("net", hop, p), p)
            lat += (nsteps - ninter) * intra_lat + ninter * inter_lat
        cand = _ring_candidate(collective, job, perf, p, bw.scaled(1 / factor), lat)
        if p == "ll128" and u > 1:  # NCCL's tuner counts its graph's channels, not those the run adds
            cand = replace(cand, tuner_cap_gbytes=job.ring_ll128_channel_cap / factor)
        out.append(cand)
    return out


def _channel_cap(bw: Limit, cap: float, algorithm: str, protocol: str) -> Limit:
    """Bus bandwidth at most channels × NCCL's per-channel maximum (tuning.cc perChMaxRingLL128Bws,
    perChMaxTreeLL128Bws and, for Simple trees, perChMaxTreeBws; perf.yaml). Applied to what the run
    reaches, not only to NCCL's choice: they are NCCL's own per-channel figures, not link bounds, and no
    measurement of the evaluation set runs above them for the channels it ran. The Simple tree table holds
    beyond two nodes: forced trees on Together's B200 nodes (NCCL 2.28.9, 8 channels) run 192-196 GB/s on
    4 to 64 nodes against 8 × 24 GB/s (docs/performance.md); on two nodes forced trees beat it (the "tree
    effect" of ``_tree_bus``: NVIDIA/nccl #209, #837). nccl-tests #322 ran twice NCCL's channels with
    NCCL_MIN_NCHANNELS=32, which ``Job.channel_cap_scale`` counts."""
    if bw.gbytes <= cap:
        return bw
    detail = f"NCCL's {algorithm} {protocol} maximum: {cap:g} GB/s over its channels"
    return Limit(cap, f"{protocol} per-channel maximum", detail)


def _ring_candidate(collective: str, job: Job, perf: PerfData, p: str, bw: Limit, lat: float) -> Candidate:
    """NCCL's 'plateau effect of ring': a Simple all_reduce ring across NVLink domains pays its latency
    ×1.4 (×1.9 before sm80) once each channel moves ≥ 64 B per rank (perf.yaml ring_plateau_*;
    the channel count is taken at its ceiling, MAXCHANNELS, so the plateau starts no earlier than NCCL's)."""
    nc = perf.nccl
    if p != "simple" or collective != "all_reduce" or job.units < 2:
        return Candidate("ring", p, bw, lat)
    entry = by_capability(nc.ring_plateau_latency_factor, job.sm_arch)
    factor = entry.value if entry is not None else 1.0
    threshold = nc.ring_plateau_min_bytes.value * nc.max_channels.value * job.ranks
    return Candidate("ring", p, bw, lat, plateau_from_bytes=threshold, plateau_factor=factor)


def _tree_bus(job: Job, net: Limit | None) -> Limit | None:
    """Bus bandwidth a double binary tree of ``job.units`` nodes allows (2 × its algbw).

    On one node the tree is the chain of its GPUs (NCCL runs it there: Together's B200 node, 556 GB/s with
    NCCL_ALGO=Tree): each GPU sends S up and S down its NVLink, bus = the GPU's NVLink bandwidth.

    Beyond two nodes an inner node forwards the data twice, so the network allows B_node per 2S: bus = B.
    On two nodes each node sends and receives S only once (half the data up, half down each tree), so the
    network allows bus = 2·B_node and the intra-node chain, which NCCL sizes with the intra-node bandwidth
    (tuning.cc: ``nNodes <= 2 ? bwIntra : bwInter``), becomes the bound: perf.yaml [NCCL-TREE2].
    """
    k, u = job.ranks_per_unit, job.units
    intra = job.intra if k > 1 else None
    if u == 1 or net is None:
        return intra if u == 1 else None
    if u <= 2 and not _nic_per_gpu(job):
        return tighter(intra, net.scaled(2.0, f"{net.name} (2-node tree: S per node each way)"))
    if u == 3:
        # NCCL's double binary tree (src/graph/trees.cc ncclGetDtree): on three nodes the busiest node is the
        # root of one tree (S/2 to each of 2 children) and a leaf of the other (S/2 up): 1.5·S each way
        # against 2·S on four nodes and more, so the network allows 2/1.5 of B_node. Measured with a NIC per
        # GPU too (GB200 partitions in three racks, NVIDIA/nccl #1801: tree 1.19-1.23 × ring).
        return tighter(intra, net.scaled(2 / 1.5, f"{net.name} (3-node tree: 1.5·S per node each way)"))
    return tighter(intra, net)


def _nic_per_gpu(job: Job) -> bool:
    """A NIC for every GPU: the 2-node tree cannot beat the ring there. sjeaugey (NVIDIA/nccl-tests #196):
    "if you have 8 NICs, Tree will struggle to get better performance than ring without using 32 SMs
    (which we disallow). But if you have less NICs you'll probably see the 'Tree effect'" — the node's
    NICs are then filled by the ring, and the tree is held to the network like beyond two nodes
    (perf.yaml [NCCL-TREE2]). NVLS-tree is not affected (it needs few SMs, same comment)."""
    return job.nics_per_unit > 0 and job.nics_per_unit >= job.ranks_per_unit


def _tree(job: Job, perf: PerfData) -> list[Candidate]:
    nc = perf.nccl
    k, u = job.ranks_per_unit, job.units
    base = _tree_bus(job, tighter(_neighbour_net(job, job.net), job.cables.tree) if u > 1 else None)
    if base is None:
        return []
    base = base.scaled(nc.tree_factor.value)
    hw = nc.hw_latency_us
    out = []
    for p in _protocols(job):
        if p == "simple":
            # beyond two nodes only: on two, forced trees beat the table (the "tree effect", _tree_bus)
            bw = (
                base
                if u <= 2
                else _channel_cap(base, job.tree_channel_cap * job.channel_cap_scale, "tree", "Simple")
            )
        elif p == "ll128":
            bw = base.scaled((nc.tree_ll128_factor_multi if u > 1 else nc.tree_ll128_factor_single).value)
            bw = _channel_cap(bw, job.tree_ll128_channel_cap * job.channel_cap_scale, "tree", "LL128")
        else:
            bw = base.scaled(nc.tree_ll_factor.value)
            cap = _ll_max(job, perf)
            if bw.gbytes > cap:
                bw = Limit(cap, "LL protocol ceiling", f"NCCL's LL ceiling {cap:g} GB/s")
        inter = _net_step_us(job, perf, hw.get("net", "tree", p), p)
        # Across NVLink domains NCCL's nodes are the domains: from 2.21 src/graph/topo.cc fuses the topology
        # of every rank of an NVLink clique (ncclTopoGetSystem over clique.ranks), init.cc counts nodes over
        # it, and tuning.cc reads nNodes as it is (2.21.5: int nNodes = comm->nNodes). 2.20.3's "treat as a
        # single NVLink connected node" (nNodes = comm->MNNVL ? 1 : ...) never reaches a tree: it turned
        # MNNVL on only when the whole communicator was one clique (init.cc: cliqueSize == comm->nRanks).
        # So a chain of the domain's ranks in each domain and a tree across the domains, as between nodes.
        lat = nc.base_latency_us.get("tree", p) + 2 * (
            (k - 1) * hw.get(job.intra_class, "tree", p) + _log2i(u) * inter
        )
        out.append(
            Candidate(
                "tree",
                p,
                bw.scaled(0.5),
                lat,
                tree_correction=nc.tree_correction_factor,
                tuner_share=_tree_tuner_share(job),
                tuner_cap_gbytes=_tree_tuner_cap(job, p),
            )
        )
    return out


def _tree_tuner_cap(job: Job, protocol: str) -> float:
    """Tree algbw NCCL's tuner allows (bus / 2): channels × perChMaxTreeBw (Simple) or perChMaxTreeLL128Bw
    (tuning.cc; 23.6 GB/s a channel on Ampere, 41.4 on Hopper, two nodes), one channel per NIC (search.cc).
    It steers NCCL's choice: with fewer NICs than GPUs the tree looks no faster than the ring and NCCL runs
    the ring (two A100 nodes with 4 HDR NICs: 91 GB/s, NVIDIA/nccl-tests #100). Beyond two nodes the run is
    held to the same figures too (``_channel_cap``); on two a forced tree runs at what the links allow."""
    cap = {"simple": job.tree_channel_cap, "ll128": job.tree_ll128_channel_cap}.get(protocol, math.inf)
    return cap / 2


def _tree_tuner_share(job: Job) -> float:
    """NCCL's tuner sizes trees beyond two nodes with bwInter alone (tuning.cc: ``nNodes <= 2 ? bwIntra :
    bwInter``), so it does not see the three-node gain of ``_tree_bus`` and keeps choosing the ring there
    (NVIDIA/nccl #1801: ring chosen, tree 1.19-1.23× faster when forced)."""
    return 1.5 / 2 if job.units == 3 else 1.0


def _nvls(job: Job, perf: PerfData) -> list[Candidate]:
    nc = perf.nccl
    hw = nc.hw_latency_us
    k, u = job.ranks_per_unit, job.units
    if job.nvls is None or k < 2 or (u > 1 and not job.multi_node_nvls):
        return []
    out = []
    if u == 1 or job.sharp:
        bw = job.nvls
        lat = hw.get("nvlink", "nvls", "simple")
        if u > 1:
            assert job.net is not None
            # NVLS + IB SHARP runs on NCCL's NVLS graph (up to MAXCHANNELS NICs), CollNet on the ring's
            bw = tighter(bw, _sharp_net(job, nc.collnet_factor.value, job.nvls_net)) or bw
            lat += _net_step_us(job, perf, hw.get("net", "nvls", "simple"), "simple")
        out.append(Candidate("nvls", "simple", bw, lat))
    if u > 1:
        net = tighter(_neighbour_net(job, job.nvls_net or job.net), job.cables.tree)
        assert net is not None
        # a tree of nodes: S per node each way on two nodes, 2S beyond (NCCL: bwInter x2 on <= 2 nodes)
        factor = nc.nvls_tree_two_node_inter_factor.value if u <= 2 else 1.0
        tree_net = net.scaled(factor * nc.nvls_tree_many_node_inter_factor.value)
        eff = nc.nvls_tree_multi_unit_efficiency.value
        domain = job.nvls.scaled(eff, f"NVLS inside each domain × {eff:g} NVLS-tree share [fitted]")
        bw = tighter(domain, tree_net) or domain
        lat = hw.get("nvlink", "nvls_tree", "simple") + 2 * _log2i(u) * _net_step_us(
            job, perf, hw.get("net", "nvls_tree", "simple"), "simple"
        )
        out.append(Candidate("nvls_tree", "simple", bw, lat))
    return out


def _sharp_net(job: Job, collnet_factor: float, graph_net: Limit | None = None) -> Limit:
    """The node's network as IB SHARP sees it (``graph_net``: as the algorithm's channel graph uses it,
    default ``job.net``): NCCL's share ``collnet_factor`` of it, and only the rails the switches can
    aggregate (two streaming flows per switch when leaves carry several rails)."""
    net = graph_net or job.net
    assert net is not None
    name = f"IB SHARP, {net.name}"
    if job.sharp_share < 1.0:
        name += (
            f", {job.sharp_share:.0%} of rails aggregated (2 SHARP flows per leaf, leaves not rail-optimised)"
        )
    return net.scaled(collnet_factor * job.sharp_share, name)


def _collnet(job: Job, perf: PerfData) -> list[Candidate]:
    nc = perf.nccl
    hw = nc.hw_latency_us
    k, u = job.ranks_per_unit, job.units
    if not job.sharp or u < 2 or job.net is None:
        return []
    # SHARP reduces inside every switch, so uplinks carry one stream per rail: placement does not matter.
    net = _sharp_net(job, _collnet_direct_factor(job, perf))
    intra = job.intra.scaled(k / (2 * (k - 1))) if (k > 1 and job.intra is not None) else None
    bw = tighter(intra, net) or net
    lat = 2 * (
        min(1, k - 1) * hw.get(job.intra_class, "collnet", "simple")
        + (k - 1) * nc.collnet_arity_latency_us.value
    ) + _net_step_us(job, perf, hw.get("net", "collnet", "simple"), "simple")
    return [Candidate("collnet", "simple", bw, lat)]


def _collnet_direct_factor(job: Job, perf: PerfData) -> float:
    """NCCL's CollNetDirect all_reduce share of the network (tuning.cc, perf.yaml collnet_direct_*): with
    more ranks a node than NICs (its channels), busBw / (r − (r − 1)/2) for r = ranks / NICs, as "Collnet+
    Direct requires all GPUs to have a local NIC to work at full speed"; and × .85 from compute capability
    90. Fewer ranks than NICs reach only their own NICs, which ``job.net`` already counts."""
    nc = perf.nccl
    ratio = max(1.0, job.ranks_per_unit / job.nics_per_unit) if job.nics_per_unit > 0 else 1.0
    ratio -= (ratio - 1) * nc.collnet_direct_nic_ratio_relief.value
    entry = by_capability(nc.collnet_direct_factor, job.sm_arch)
    return (entry.value if entry is not None else 1.0) / ratio


def _alltoall(job: Job, perf: PerfData) -> list[Candidate]:
    """NCCL's alltoall is point-to-point send/recv, S/n to every rank: (k−1)/n·S over NVLink per rank and
    k·(n−k)/n·S through each node's NICs; nccl-tests' busbw = algbw·(n−1)/n (src/alltoall.cu). The network
    part sets the time: busbw ≈ N/(N−1) × the network bandwidth per GPU on N nodes (sjeaugey, NVIDIA/
    nccl-tests #130), a single NIC's bandwidth per GPU, never aggregated (nccl-tests #267)."""
    n, k, u = job.ranks, job.ranks_per_unit, job.units
    intra = _p2p_intra(job, perf).scaled(n / (k - 1)) if (k > 1 and job.intra is not None) else None
    spread = job.p2p_net or job.spread_net
    net = spread.scaled(n / (k * (n - k))) if (u > 1 and spread is not None) else None
    # without NVLink a rank's peers inside the node and its NIC traffic share one link, its PCIe x16: it
    # sends (n-1)/n of S through it whatever the split
    link = None
    if job.intra_class == "pci" and job.intra is not None and u > 1:
        link = job.intra.scaled(n / (n - 1), f"{job.intra.name} (each GPU's one link, to peers and NICs)")
    bw = tighter(intra, net, link)
    if bw is None:
        return []
    return [Candidate("p2p", "simple", bw, _p2p_latency_us(job, perf, intra=k > 1, net_peers=n - k))]


def _p2p_latency_us(job: Job, perf: PerfData, *, intra: bool, net_peers: int) -> float:
    """NCCL's point-to-point latency as its tuner counts a Simple ring step: the base, a hop inside the unit
    when there is one, and per network peer a post plus one network step (with the transport's latency)."""
    nc = perf.nccl
    hw = nc.hw_latency_us
    lat = nc.base_latency_us.get("ring", "simple")
    if intra:
        lat += hw.get(job.intra_class, "ring", "simple")
    if net_peers > 0:
        lat += net_peers * nc.net_overhead_us.value + _net_step_us(
            job, perf, hw.get("net", "ring", "simple"), "simple"
        )
    return lat


def stage_send_s(size_bytes: float, job: Job, perf: PerfData | None = None) -> float:
    """A pipeline stage boundary: each rank of one unit sends ``size_bytes`` to its peer in the next unit
    (``job`` of two units), or to a peer in its own unit (one unit), with NCCL's send/recv, the transfers
    of its alltoall. Across units the peers hold the same local rank, so the traffic keeps to its rail
    between neighbours: the unit's NICs shared by its ranks (what the alltoall's network part reaches per
    GPU: sjeaugey, NVIDIA/nccl-tests #130), and the fabric's bound as well when ranks are scattered.
    Inside a unit, NVLink at the point-to-point share, over the links that join the pair on a GPU mesh
    without a switch (``job.intra_peer_share``). The latency and per-call overhead are an alltoall's with
    one peer."""
    perf = (perf or perf_data()).for_release(job.nccl_release)
    k = job.ranks_per_unit
    if job.units > 1:
        nics = _neighbour_net(job, job.nic_net)
        if nics is None:
            raise PerfError("a stage boundary across units needs the units' network")
        bw = nics.gbytes / k
        lat = _p2p_latency_us(job, perf, intra=False, net_peers=1)
    else:
        if job.intra is None:
            raise PerfError("a stage boundary inside a unit needs a link between its GPUs")
        bw = _p2p_intra(job, perf).gbytes * job.intra_peer_share
        lat = _p2p_latency_us(job, perf, intra=True, net_peers=0)
    return lat * 1e-6 + size_bytes / (bw * 1e9) + launch_overhead_s(perf)


def _p2p_intra(job: Job, perf: PerfData) -> Limit:
    """Per-rank bandwidth point-to-point transfers reach inside a unit: over NVLink a share of what NCCL
    counts (perf.yaml p2p_nvlink_efficiency, [FITTED] on GB300 alltoall runs kept out of the evaluation set),
    where rings reach the full count; over PCIe the count itself (no sweep to fit)."""
    assert job.intra is not None
    if job.intra_class != "nvlink" or not job.p2p_nvlink_share:
        return job.intra
    eff = perf.nccl.p2p_nvlink_efficiency.value
    return job.intra.scaled(eff, f"{job.intra.name}, × {eff:g} point-to-point share [fitted]")


def candidates(collective: str, job: Job, perf: PerfData | None = None) -> list[Candidate]:
    """Every algorithm/protocol NCCL could run for ``collective`` on ``job``, in NCCL's preference order.
    With a net plugin that reports a latency, NCCL's tuner adds that latency per inter-node step where the run
    pays the traversal latency (tuning.cc: ``interLat = hwLat[NET] + latencyInter``): each candidate carries
    both, the first for the time, the second for NCCL's choice."""
    perf = (perf or perf_data()).for_release(job.nccl_release)
    bus_factor(collective, max(job.ranks, 1))  # validates the name
    out = _candidates(collective, job, perf)
    if job.tuner_net_latency_us is None or job.units < 2:
        return out
    tuned = _candidates(collective, replace(job, net_latency_us=job.tuner_net_latency_us), perf)
    # both lists hold the same candidates in the same order: only the latency differs (MSCCL's, one unit
    # only, never reaches here)
    return [replace(c, tuner_latency_us=t.latency_us) for c, t in zip(out, tuned, strict=True)]


def _candidates(collective: str, job: Job, perf: PerfData) -> list[Candidate]:
    if collective == "alltoall":
        return _alltoall(job, perf)
    out = _ring(collective, job, perf)
    if collective == "all_reduce":
        out += _tree(job, perf) + _nvls(job, perf) + _collnet(job, perf) + _msccl_allpairs(job, perf)
    elif collective in ("all_gather", "reduce_scatter"):
        out += _nvls_gather_scatter(job, perf) + _pat(job, perf)
    return _released(out, job.nccl_release, perf)


def _released(out: list[Candidate], release: int | None, perf: PerfData) -> list[Candidate]:
    """The candidates the NCCL release has: none of an algorithm or protocol it predates (perf.yaml
    nccl.introduced_in; NVLS-tree's is NVLS's, its first half). An unnumbered release has them all."""
    missing = set(perf.nccl.predates(release))
    return [c for c in out if not missing & {c.algorithm, c.algorithm.split("_")[0], c.protocol}]


def _pat(job: Job, perf: PerfData) -> list[Candidate]:
    """NCCL's PAT all_gather / reduce_scatter (perf.yaml nccl.pat*, tuning.cc 2.25.1): one rank per unit,
    Simple only. It runs on the tree graph, whose channels are the ring graph's, at 0.75 of that graph's bus
    bandwidth, which NCCL takes as PAT's algorithm bandwidth (time = latency + S / busBw), and on a routed
    fabric no faster than its busiest cable lets a unit send to its peers 2^d ranks on; its latency is
    8 µs, log2(units) network hops of a third and a half each (Tree/Simple's network latency at one rank per
    node) and 2.8 µs per rank."""
    nc = perf.nccl
    if not job.pat or job.ranks_per_unit != 1 or job.units < 2:
        return []
    graph = tighter(_neighbour_net(job, job.net), job.ring_graph, job.cables.pat)
    if graph is None:
        return []
    f = nc.pat_bus_factor.value
    bw = graph.scaled(f, f"{graph.name} × {f:g} (PAT)")
    inter = (
        nc.hw_latency_us.get("net", "tree", "simple") + job.net_latency_us * nc.pat_net_latency_factor.value
    )
    lat = (
        nc.pat_base_latency_us.value
        + _log2i(job.units) * inter / nc.pat_log_latency_divisor.value
        + job.ranks * nc.pat_per_rank_latency_us.value
    )
    return [Candidate("pat", "simple", bw, lat)]


MSCCL_ALLPAIRS = "msccl_allpairs"


def _msccl_allpairs(job: Job, perf: PerfData) -> list[Candidate]:
    """RCCL's MSCCL all-pairs all_reduce (perf.yaml rccl.msccl_allpairs): each of the n GPUs sends S/n to
    each peer over the link that joins them, then the reduced S/n back, so every link carries 2·S/n and
    algbw = n × link / 2, a link being what one peer reaches (``intra`` × ``intra_peer_share``) at the fitted
    share an all-pairs exchange gets of it. It is no tuner candidate: RCCL runs it for sizes in its window
    whatever its tuner says (``_chosen``)."""
    m = perf.rccl.msccl_allpairs
    n = job.ranks_per_unit
    if not job.runs_msccl or job.intra is None or n != m.gpus.value:
        return []
    link = job.intra.gbytes * job.intra_peer_share * m.link_share.value
    detail = (
        f"MSCCL all-pairs: {n} GPUs × {link:.1f} GB/s a peer link / 2 ({m.link_share.value:g} of "
        f"{job.intra.gbytes * job.intra_peer_share:g} GB/s)"
    )
    bw = Limit(n * link / 2, "MSCCL all-pairs (one link a peer)", detail)
    return [Candidate(MSCCL_ALLPAIRS, "simple", bw, m.latency_us.value)]


def _msccl_covers(size_bytes: float, perf: PerfData) -> bool:
    m = perf.rccl.msccl_allpairs
    return m.min_bytes.value <= size_bytes <= m.max_bytes.value


def _nvls_gather_scatter(job: Job, perf: PerfData) -> list[Candidate]:
    """NVLS all_gather / reduce_scatter inside one NVLink domain (NCCL's tuner lists Ring, NVLS and CollNet
    for both). Per GPU, NVLS reduce_scatter sends S and receives S/N, all_gather sends S/N and receives S,
    where a ring moves (N−1)/N·S each way (sjeaugey, NVIDIA/nccl #1083: "the total operation time will be
    limited by the largest size which is higher with NVLS"): the busier direction moves S, so algbw = the
    NVLS efficiency × NVLink, the all_reduce figure without its n/(n+1) (n: the GPUs of the calibration
    fact, as in the all_reduce figure), and busbw = algbw·(N−1)/N stays below the ring's on one node (#1047:
    Ring is the faster). Across domains NCCL runs it only with IB SHARP, which the model has no figure for: no
    candidate there."""
    k = job.ranks_per_unit
    if job.nvls is None or job.units > 1 or k < 2:
        return []
    link = 1 / nvls_allreduce_link_share(perf)
    bw = job.nvls.scaled(link, "NVLS (multimem: S through the busier direction)")
    return [Candidate("nvls", "simple", bw, perf.nccl.hw_latency_us.get("nvlink", "nvls", "simple"))]


def launch_overhead_s(perf: PerfData) -> float:
    """Per-call time nccl-tests measures beyond NCCL's tuner latency (host enqueue and kernel launch;
    perf.yaml launch_overhead_us, [FITTED]): the same for every algorithm, so it never changes the choice."""
    return perf.nccl.launch_overhead_us.value * 1e-6


def mid_size_ramp_s(latency_us: float, size_bytes: float, perf: PerfData) -> float:
    """Time published all_reduce sweeps spend above latency + S/bandwidth on their way to the plateau
    (perf.yaml mid_size_ramp_*, [FITTED] to three single-node all_reduce sweeps outside the evaluation set):
    factor × min(latency, cap) × sqrt(min(1, S / ramp bytes)). NCCL's tuner does not see it, so it never
    changes the algorithm chosen; it is part of the bandwidth term (a site calibration scales it with the
    rest). ``estimate`` adds it to all_reduce only, the collective it was fitted to: no all_gather or
    alltoall sweep outside the evaluation set shows it (two-node all_gather rows reach latency + S/bw)."""
    nc = perf.nccl
    scale = min(1.0, size_bytes / nc.mid_size_ramp_bytes.value) ** 0.5
    return (
        nc.mid_size_ramp_factor.value * min(latency_us, nc.mid_size_ramp_latency_cap_us.value) * scale * 1e-6
    )


def nvls_domain_ramp_s(ranks: int, size_bytes: float, perf: PerfData) -> float:
    """What an NVLS all_reduce over an NVLink domain spanning trays spends on its way to the plateau beyond
    the mid-size ramp (perf.yaml nvls_domain_ramp_*, [FITTED] to OCI's GB300 sweeps in one rack, outside the
    evaluation set): per rank × ranks × sqrt(min(1, S / ramp bytes))."""
    nc = perf.nccl
    scale = min(1.0, size_bytes / nc.nvls_domain_ramp_bytes.value) ** 0.5
    return nc.nvls_domain_ramp_us_per_rank.value * ranks * scale * 1e-6


def _ramp_s(collective: str, best: Candidate, job: Job, size_bytes: float, perf: PerfData) -> float:
    """The ramps an all_reduce pays on its way to the plateau: the mid-size ramp, and for NVLS over an NVLink
    domain that spans trays, the domain's own."""
    if collective != "all_reduce" or best.algorithm == MSCCL_ALLPAIRS:  # its fit holds its whole fixed time
        return 0.0
    ramp = mid_size_ramp_s(best.latency_at(size_bytes), size_bytes, perf)
    if best.algorithm == "nvls" and job.mnnvl:
        ramp += nvls_domain_ramp_s(job.ranks_per_unit, size_bytes, perf)
    return ramp


def _no_candidate(
    collective: str, n: int, job: Job, algorithms: tuple[str, ...] | None, protocols: tuple[str, ...] | None
) -> str:
    only = ", ".join([*(algorithms or ()), *(p.upper() for p in protocols or ())])
    text = f"no algorithm can run {collective} on {n} ranks" + (f" with {only}" if only else "")
    if protocols and "ll128" in protocols and not job.ll128:
        text += (
            '; NCCL enables LL128 by default only over NVLink on NVIDIA GPUs (tuning.cc: "Enable LL128 by '
            'default only on ...+NVLink"); a run that forces it (NCCL_PROTO=LL128, or a ^ list that keeps '
            "it) runs it here, but the model has no LL128 figure for this system"
        )
    if protocols and set(protocols) <= {"ll", "ll128"}:
        text += "; NVLS, NVLS-tree, CollNet and alltoall run Simple only (tuning.cc)"
    if algorithms and "pat" in algorithms:
        text += (
            "; PAT runs all_gather and reduce_scatter only, at one rank per node, with an NCCL release that "
            "has it (perf.yaml nccl.pat) and not over a net plugin that offloads to the GPU (ncclPatEnable)"
        )
    nc = perf_data().nccl
    if algorithms and not nc.for_release(job.nccl_release).algo_fallback.value:
        text += (
            '; from NCCL 2.25 a collective NCCL_ALGO leaves no algorithm fails ("no algorithm/protocol '
            'available"); up to 2.22 NCCL ran the ring'
        )
    for name in sorted({*(algorithms or ()), *(protocols or ())} & set(nc.predates(job.nccl_release))):
        text += f"; the run's NCCL predates {name} ({nc.introduced_in[name].source})"
    return text


def _chosen(
    collective: str,
    size_bytes: int,
    job: Job,
    perf: PerfData,
    algorithms: tuple[str, ...] | None,
    protocols: tuple[str, ...] | None,
) -> Candidate:
    """The candidate NCCL's tuner picks among those the run allows: the estimate's NCCL_ALGO / NCCL_PROTO,
    else the cloud transport's settings, else all."""
    cands = candidates(collective, job, perf)
    # nccl-tests' alltoall is grouped ncclSend/ncclRecv (src/alltoall.cu): point-to-point work, which NCCL
    # plans without its collective tuner, so NCCL_ALGO ("Forces specific algorithm selection for
    # collectives", ROCm's RCCL environment variable reference), a run's or a transport profile's, does not
    # steer it
    algorithms = None if collective == "alltoall" else algorithms or job.transport_algorithms
    protocols = protocols or job.transport_protocols
    msccl = [c for c in cands if c.algorithm == MSCCL_ALLPAIRS]
    # RCCL's collectives hand the call to MSCCL before its tuner reads NCCL_ALGO / NCCL_PROTO
    # (src/collectives.cc: `if (mscclAvailable() && !mscclIsCaller()) return mscclEnqueueCheck(...)` ahead of
    # ncclEnqueueCheck): in the algorithm's window it runs whatever the run names
    if msccl and _msccl_covers(size_bytes, perf):
        return msccl[0]
    cands = _allowed([c for c in cands if c.algorithm != MSCCL_ALLPAIRS], algorithms, protocols, job, perf)
    if not cands:
        raise PerfError(_no_candidate(collective, job.ranks, job, algorithms, protocols))
    return min(cands, key=lambda c: c.tuner_time_s(size_bytes))


def _allowed(
    cands: list[Candidate],
    algorithms: tuple[str, ...] | None,
    protocols: tuple[str, ...] | None,
    job: Job,
    perf: PerfData,
) -> list[Candidate]:
    """The candidates NCCL_ALGO / NCCL_PROTO leave. Up to 2.22 (perf.yaml nccl.algo_fallback) NCCL runs
    Ring and Tree where NCCL_ALGO names only CollNet and CollNet is not there, and the ring where nothing is
    left for the collective (tuning.cc: "at least set ring algo available"); from 2.25 the call fails."""

    def kept(names: tuple[str, ...] | None) -> list[Candidate]:
        return [
            c
            for c in cands
            if (not names or c.algorithm in names) and (not protocols or c.protocol in protocols)
        ]

    out = kept(algorithms)
    nc = perf.for_release(job.nccl_release).nccl
    # an algorithm the release predates is refused with the release that brought it (_no_candidate), not run
    # as the ring its parser would fall back to: the run named something its NCCL does not have
    if (
        out
        or not algorithms
        or not nc.algo_fallback.value
        or set(algorithms) & set(nc.predates(job.nccl_release))
    ):
        return out
    if set(algorithms) <= {"collnet"} and not job.sharp:
        out = kept(("ring", "tree"))
    return out or kept(("ring",))


def estimate(
    collective: str,
    size_bytes: int,
    job: Job,
    perf: PerfData | None = None,
    algorithms: tuple[str, ...] | None = None,
    protocols: tuple[str, ...] | None = None,
) -> Estimate:
    """The fastest candidate for one message size (among ``algorithms``, like NCCL_ALGO), with busbw as
    nccl-tests reports it."""
    perf = perf or perf_data()
    n = job.ranks
    if algorithms:
        unknown = sorted(set(algorithms) - set(ALGORITHMS))
        if unknown:
            raise PerfError(f"unknown algorithm `{unknown[0]}` (known: {', '.join(ALGORITHMS)})")
    if n <= 1:
        bus_factor(collective, 1)
        return Estimate(
            collective,
            size_bytes,
            n,
            0.0,
            0.0,
            0.0,
            "none",
            "none",
            0.0,
            "one rank: no communication",
            "one rank: no communication",
        )
    best = _chosen(collective, size_bytes, job, perf, algorithms, protocols)
    overhead = launch_overhead_s(perf)
    ramp = _ramp_s(collective, best, job, size_bytes, perf)
    t = best.time_s(size_bytes) + ramp + overhead
    algbw = size_bytes / t / 1e9 if t > 0 else 0.0
    share = perf.policy.latency_bound_share.value
    # the fixed part of the time (a site calibration scales only the rest): NCCL's latency and the overhead
    lat_us = best.latency_at(size_bytes) + overhead * 1e6
    bottleneck = f"latency {lat_us:.1f} µs" if lat_us * 1e-6 >= share * t else best.algbw.name
    return Estimate(
        collective,
        int(size_bytes),
        n,
        t,
        algbw,
        algbw * bus_factor(collective, n),
        best.algorithm,
        best.protocol,
        lat_us,
        best.algbw.name,
        bottleneck,
    )
