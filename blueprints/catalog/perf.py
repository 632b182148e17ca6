"""Constants of the performance model (``data/perf.yaml``), typed; each entry keeps its ``source``.

The model in ``generator/perf`` reads numbers only through :func:`perf_data`, so every figure it uses can
be traced back to the line of the YAML that says where it comes from.
"""

# No `from __future__ import annotations`: Pydantic takes the annotations as objects rather than evaluating
# strings again (~2.5 ms of each `validate`; blueprints/models/base.py says the same of the models).
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from blueprints.catalog.load import DATA_DIR, CatalogError, read_data, shipped
from blueprints.catalog.schema import PerfConstant

PERF_FILE = DATA_DIR / "perf.yaml"
Link = Literal["nvlink", "pci", "net"]
Algorithm = Literal["ring", "tree", "nvls", "nvls_tree", "collnet"]
Protocol = Literal["ll", "ll128", "simple"]


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # built on first use


class ByProtocol(_Entry):
    ll: float
    ll128: float
    simple: float

    def get(self, protocol: str) -> float:
        return float(getattr(self, protocol))


class ByAlgorithm(_Entry):
    ring: ByProtocol
    tree: ByProtocol
    nvls: ByProtocol
    nvls_tree: ByProtocol
    collnet: ByProtocol

    def get(self, algorithm: str, protocol: str) -> float:
        return getattr(self, algorithm).get(protocol)


class LatencyTable(ByAlgorithm):
    source: str


class HwLatencyTable(_Entry):
    source: str
    nvlink: ByAlgorithm
    pci: ByAlgorithm
    net: ByAlgorithm

    def get(self, link: str, algorithm: str, protocol: str) -> float:
        return getattr(self, link).get(algorithm, protocol)


class ByKind(_Entry):
    infiniband: PerfConstant
    roce: PerfConstant
    ethernet: PerfConstant

    def get(self, kind: str) -> float:
        return getattr(self, kind).value


class Nvlink(_Entry):
    gbytes_per_link: dict[int, PerfConstant]
    xgmi_gbytes_per_link: PerfConstant  # what one AMD xGMI link carries a direction (AMD's measurement)


class Pcie(_Entry):
    gbits_per_lane: dict[int, PerfConstant]


class Payloads(_Entry):
    source: str
    values: tuple[int, ...]


class Network(_Entry):
    in_mtu_bytes: ByKind
    framing_bytes: ByKind
    default_mtu: ByKind
    rdma_payloads: Payloads


class Calibration(_Entry):
    ndr_nic_busbw: PerfConstant
    ndr_nic_fabric: str  # fabrics.yaml id of the NIC of ndr_nic_busbw
    hdr_nic_busbw: PerfConstant
    h100_ring_busbw: PerfConstant
    h100_nvls_busbw: PerfConstant
    nvls_server: str  # servers.yaml id of the node of h100_nvls_busbw


class TreeCorrection(_Entry):
    """NCCL's tree bandwidth correction per protocol, by log2(bytes / 64)."""

    source: str
    ll: tuple[float, ...]
    ll128: tuple[float, ...]
    simple: tuple[float, ...]

    def get(self, protocol: str, size_bytes: float) -> float:
        table: tuple[float, ...] = getattr(self, protocol)
        chunks = int(size_bytes) >> 6
        index = chunks.bit_length() - 1 if chunks > 0 else 0
        return table[index] if index < len(table) else 1.0


class Series(_Entry):
    """A list of numbers from one source (NCCL's speed arrays, its per-node-count tables)."""

    source: str
    values: tuple[float, ...]


# NCCL's own spellings of the model's algorithm and protocol names (src/graph/tuning.cc ncclAlgoStr,
# ncclProtoStr), for what a message shows of an NCCL_ALGO / NCCL_PROTO setting
NCCL_SPELLINGS = {
    "ring": "Ring",
    "tree": "Tree",
    "nvls": "NVLS",
    "nvls_tree": "NVLSTree",
    "collnet": "CollNetDirect",
    "pat": "PAT",
    "ll": "LL",
    "ll128": "LL128",
    "simple": "Simple",
}


# NCCL's collective functions (src/init.cc ncclFuncStr: "Broadcast", "Reduce", "AllGather", "ReduceScatter",
# "AllReduce"), the prefixes of a per-collective NCCL_ALGO / NCCL_PROTO (tuning.cc 2.25.1 parseList, matched
# without case), by the model's collective (None: Reduce, which the model does not run)
NCCL_FUNCTIONS = {
    "Broadcast": "broadcast",
    "Reduce": None,
    "AllGather": "all_gather",
    "ReduceScatter": "reduce_scatter",
    "AllReduce": "all_reduce",
}


class TransportSettings(_Entry):
    """NCCL_ALGO / NCCL_PROTO a cloud transport's published setup (or its NCCL plugin) sets for every
    multi-node job; None: that one is left to NCCL."""

    algorithms: tuple[str, ...] | None = None
    protocols: tuple[str, ...] | None = None
    source: str

    def env(self) -> str:
        """``NCCL_ALGO=Ring,Tree NCCL_PROTO=Simple,LL128``: the settings as the setup writes them."""
        parts = []
        for name, values in (("NCCL_ALGO", self.algorithms), ("NCCL_PROTO", self.protocols)):
            if values:
                parts.append(f"{name}={','.join(NCCL_SPELLINGS.get(v, v) for v in values)}")
        return " ".join(parts)


class InstanceFigure(_Entry):
    """One figure shared by the instance types named (one hardware generation), with its source."""

    instances: tuple[str, ...]
    value: float
    unit: str
    source: str


class RailGroups(_Entry):
    """Instance types on which the plugin shows NCCL one device for each GPU's group of NICs (multi-rail),
    of the group's summed speed, and spreads each message over the group's NICs itself."""

    instances: tuple[str, ...]
    source: str


class DeviceOffload(_Entry):
    """How a net plugin has NCCL's GPU kernels handle what it moves (ncclNetProperties_t.netDeviceType other
    than NCCL_NET_DEVICE_HOST), with its source."""

    type: Literal["unpack"]
    source: str


class NetPlugin(_Entry):
    """A cloud transport's NCCL net plugin. ``reported_latency_us`` is what the plugin reports to NCCL
    (``ncclNetProperties_t.latency``, the graph's ``latencyInter`` in NCCL's tuner) by instance type, ``*``
    for any other: a tuner input, not a measurement. ``traversal_latency_us`` is what a run pays per network
    traversal when the model has a figure for it (None: the fabric's own hop latency);
    ``instance_traversal_latency_us`` replaces it on the instance types it names. ``settings`` are the
    NCCL_ALGO / NCCL_PROTO the transport's own setup runs multi-node jobs with, when it sets them;
    ``instance_settings`` those the plugin itself sets on some instance types (in place of ``settings``);
    ``rail_groups`` the instance types whose NICs it groups around the GPUs (None: one device a NIC);
    ``device_offload`` what it offloads to the GPU (None: NCCL's host path, the default)."""

    plugin: str
    source: str
    reported_latency_us: dict[str, float]
    traversal_latency_us: PerfConstant | None = None
    instance_traversal_latency_us: tuple[InstanceFigure, ...] = ()
    settings: TransportSettings | None = None
    instance_settings: dict[str, TransportSettings] = {}
    rail_groups: RailGroups | None = None
    device_offload: DeviceOffload | None = None

    def groups_rails(self, instance: str) -> bool:
        """Whether the plugin shows NCCL one device per GPU's group of NICs on ``instance``."""
        return self.rail_groups is not None and instance in self.rail_groups.instances

    def traversal_for(self, instance: str) -> float | None:
        """The time a run pays per network traversal on ``instance`` (None: no figure, the fabric's own)."""
        for group in self.instance_traversal_latency_us:
            if instance in group.instances:
                return group.value
        return None if self.traversal_latency_us is None else self.traversal_latency_us.value

    def settings_for(self, instance: str) -> TransportSettings | None:
        """The NCCL settings multi-node jobs run with on ``instance`` (None: NCCL's own choice)."""
        return self.instance_settings.get(instance, self.settings)

    def reported_for(self, instance: str) -> float | None:
        """The latency the plugin reports on ``instance`` (None: the plugin sets none for it)."""
        value = self.reported_latency_us.get(instance, self.reported_latency_us.get("*"))
        return None if value is None else float(value)


def _changed(table: ByAlgorithm, values: dict[Algorithm, dict[Protocol, float]]) -> dict[str, object]:
    """The rows of ``table`` that ``values`` changes, each with only the protocols it names changed."""
    return {
        algorithm: getattr(table, algorithm).model_copy(update=dict(protocols))
        for algorithm, protocols in values.items()
    }


class HwLatencyChange(_Entry):
    """hwLat entries a release changed, by link, algorithm and protocol (µs); every other entry stays as the
    releases before have it, so a release that changes one latency names that one only."""

    source: str
    values: dict[Link, dict[Algorithm, dict[Protocol, float]]]

    def applied_to(self, table: HwLatencyTable) -> HwLatencyTable:
        links: dict[str, object] = {
            link: getattr(table, link).model_copy(update=_changed(getattr(table, link), algorithms))
            for link, algorithms in self.values.items()
        }
        return table.model_copy(update={**links, "source": f"{table.source}; {self.source}"})


class BaseLatencyChange(_Entry):
    """baseLat entries a release changed, by algorithm and protocol (µs); the rest stay."""

    source: str
    values: dict[Algorithm, dict[Protocol, float]]

    def applied_to(self, table: LatencyTable) -> LatencyTable:
        return table.model_copy(
            update={**_changed(table, self.values), "source": f"{table.source}; {self.source}"}
        )


class NcclRelease(_Entry):
    """What a later NCCL release changed in its tuner (src/graph/tuning.cc), from ``first_release`` on
    (100·major + minor): every field given replaces the one of the releases before; a table keyed by compute
    capability replaces only the keys it names, and ``base_latency_changes`` / ``hw_latency_changes`` only the
    latencies they name."""

    first_release: int
    source: str
    base_latency_changes: BaseLatencyChange | None = None
    hw_latency_changes: HwLatencyChange | None = None
    ring_ll_factor_multi: PerfConstant | None = None
    ring_ll_factor_single: PerfConstant | None = None
    ring_ll128_factor_ppn1: PerfConstant | None = None
    ring_all_reduce_extra_net_steps: PerfConstant | None = None
    ppn1_tree_net_latency: PerfConstant | None = None
    ll128_sm_archs: Series | None = None
    ll_max_gbytes_single: dict[int, PerfConstant] | None = None
    tree_per_channel_max_gbytes: dict[int, Series] | None = None
    tree_ll128_per_channel_max_gbytes: dict[int, Series] | None = None
    ring_ll128_per_channel_max_gbytes: dict[int, Series] | None = None
    max_channels: PerfConstant | None = None
    pat: PerfConstant | None = None
    pat_net_latency_factor: PerfConstant | None = None
    algo_fallback: PerfConstant | None = None
    per_collective_lists: PerfConstant | None = None


# release fields that replace no field of the tables: what the release is, and changes merged one by one
_NOT_REPLACED = frozenset({"first_release", "source", "base_latency_changes", "hw_latency_changes"})
_KEYED = frozenset(
    {
        "ll_max_gbytes_single",
        "tree_per_channel_max_gbytes",
        "tree_ll128_per_channel_max_gbytes",
        "ring_ll128_per_channel_max_gbytes",
    }
)


class Nccl(_Entry):
    base_latency_us: LatencyTable
    hw_latency_us: HwLatencyTable
    net_overhead_us: PerfConstant
    net_overhead_simple_factor: PerfConstant
    net_latency_simple_factor: PerfConstant
    collnet_arity_latency_us: PerfConstant
    ring_ll_factor_multi: PerfConstant
    ring_ll_factor_single: PerfConstant
    ring_ll128_factor: PerfConstant
    ring_ll128_factor_ppn1: PerfConstant
    tree_factor: PerfConstant
    tree_ll_factor: PerfConstant
    tree_ll128_factor_multi: PerfConstant
    tree_ll128_factor_single: PerfConstant
    collnet_factor: PerfConstant
    collnet_direct_nic_ratio_relief: PerfConstant
    collnet_direct_factor: dict[int, PerfConstant]  # by compute capability (the highest key <= the GPU's)
    ll_max_gbytes_single: dict[int, PerfConstant]
    ll_max_gbytes_two_nodes: PerfConstant
    ll_max_gbytes_many_nodes: PerfConstant
    nvls_efficiency: dict[int, PerfConstant]
    nvls_tree_two_node_inter_factor: PerfConstant
    nvls_tree_many_node_inter_factor: PerfConstant
    ib_qps_per_connection: PerfConstant
    sharp_streaming_flows_per_switch: PerfConstant
    oldest_release: PerfConstant
    introduced_in: dict[str, PerfConstant]  # algorithm or protocol → its first release (100·major + minor)
    multi_node_nvls_min_release: PerfConstant
    mnnvl_nvls_min_release: PerfConstant
    max_channels: PerfConstant
    tree_correction_factor: TreeCorrection
    ring_plateau_latency_factor: dict[int, PerfConstant]
    ring_plateau_min_bytes: PerfConstant
    nvls_tree_multi_unit_efficiency: PerfConstant
    p2p_nvlink_efficiency: PerfConstant
    search_speeds_gbytes: dict[int, Series]
    search_stop_ratio: PerfConstant
    dup_channels_min_gbytes: PerfConstant
    dup_channels_sm90_gbytes: PerfConstant
    dup_channels_sm90_channels: PerfConstant
    dup_channels_sm90_above_sm_arch: PerfConstant
    postset_channel_factor: PerfConstant
    postset_sm90_double_above_gbytes: PerfConstant
    postset_sm90_double_below_channels: PerfConstant
    postset_sm90_double_min_sm_arch: PerfConstant
    postset_sm90_double_factor: PerfConstant
    nvls_channels: PerfConstant
    net_channel_gbytes: dict[int, PerfConstant]
    tree_per_channel_max_gbytes: dict[int, Series]
    tree_ll128_per_channel_max_gbytes: dict[int, Series]
    ring_ll128_per_channel_max_gbytes: dict[int, Series]
    mid_size_ramp_factor: PerfConstant
    mid_size_ramp_bytes: PerfConstant
    mid_size_ramp_latency_cap_us: PerfConstant
    launch_overhead_us: PerfConstant
    nvls_domain_ramp_us_per_rank: PerfConstant
    nvls_domain_ramp_bytes: PerfConstant
    cloud_transport_as_fabric: str  # fabrics.yaml id a cloud transport without its own entry is modelled as
    net_plugins: dict[str, NetPlugin]
    ring_all_reduce_extra_net_steps: PerfConstant
    ppn1_tree_net_latency: PerfConstant
    ll128_sm_archs: Series
    algo_fallback: PerfConstant  # 1: NCCL_ALGO leaving a collective no algorithm runs the ring (<= 2.22)
    per_collective_lists: PerfConstant  # 1: NCCL_ALGO / NCCL_PROTO may name collectives (2.25 on)
    pat: PerfConstant
    pat_base_latency_us: PerfConstant
    pat_log_latency_divisor: PerfConstant
    pat_per_rank_latency_us: PerfConstant
    pat_bus_factor: PerfConstant
    pat_net_latency_factor: PerfConstant
    releases: tuple[NcclRelease, ...] = ()

    def releases_up_to(self, release: int | None) -> list[NcclRelease]:
        """The later releases' changes that ``release`` (100·major + minor; None: none) has, oldest first."""
        if release is None:
            return []
        return sorted((r for r in self.releases if r.first_release <= release), key=lambda r: r.first_release)

    def predates(self, release: int | None) -> list[str]:
        """The algorithms and protocols of ``introduced_in`` that ``release`` (100·major + minor; None: not
        numbered so, taken as having them all) predates."""
        if release is None:
            return []
        return [name for name, first in self.introduced_in.items() if release < first.value]

    def ring_graph_max_channels(self) -> int:
        """The rings NCCL searches, each leaving a node or NVLink domain through one NIC: MAXCHANNELS/2
        (perf.yaml [NCCL-INIT]: src/init.cc ``ringGraph->maxChannels = MAXCHANNELS/2``)."""
        return int(self.max_channels.value) // 2

    def most_channels(self) -> int:
        """The most channels any release the tables know runs (its MAXCHANNELS): a run's NCCL_MAX_NCHANNELS
        above it is no channel count (NCCL clamps to it)."""
        counts = [self.max_channels, *(r.max_channels for r in self.releases if r.max_channels is not None)]
        return max(int(c.value) for c in counts)

    def for_release(self, release: int | None) -> "Nccl":
        """The tuner of ``release`` (None: the base tables): the base tables with every later release's
        changes up to it applied in order."""
        changes = self.releases_up_to(release)
        if not changes:
            return self
        update: dict[str, object] = {}
        for change in changes:
            for name in change.model_fields_set - _NOT_REPLACED:
                value = getattr(change, name)
                if name in _KEYED:
                    value = {**update.get(name, getattr(self, name)), **value}  # type: ignore[dict-item]
                update[name] = value
            if change.base_latency_changes is not None:
                base = update.get("base_latency_us", self.base_latency_us)
                assert isinstance(base, LatencyTable)
                update["base_latency_us"] = change.base_latency_changes.applied_to(base)
            if change.hw_latency_changes is not None:
                table = update.get("hw_latency_us", self.hw_latency_us)
                assert isinstance(table, HwLatencyTable)
                update["hw_latency_us"] = change.hw_latency_changes.applied_to(table)
        return self.model_copy(update=update)


class MscclAllPairs(_Entry):
    """RCCL's MSCCL all-pairs all_reduce on one fully connected node (perf.yaml rccl.msccl_allpairs)."""

    gpus: PerfConstant
    channels: PerfConstant
    min_bytes: PerfConstant
    max_bytes: PerfConstant
    latency_us: PerfConstant
    link_share: PerfConstant


class Rccl(_Entry):
    msccl_single_process_default: PerfConstant
    msccl_allpairs: MscclAllPairs
    pat_enabled_by_default: PerfConstant

    @model_validator(mode="after")
    def _switch_is_0_or_1(self) -> "Rccl":
        if self.msccl_single_process_default.value not in (0, 1):
            raise ValueError("rccl.msccl_single_process_default must be 0 or 1, as RCCL's setting is")
        return self


class Training(_Entry):
    flops_per_param_token: PerfConstant
    frozen_flops_per_param_token: PerfConstant
    forward_flops_per_param_token: PerfConstant
    model_flops_utilization: PerfConstant
    compute_efficiency: PerfConstant
    default_global_batch_tokens: PerfConstant
    ddp_bucket_bytes: PerfConstant
    grad_reduce_bytes: dict[str, PerfConstant]
    activation_bytes: PerfConstant
    tp_allreduces_per_layer: PerfConstant
    zero3_traffic_factor: PerfConstant
    micro_batch_sequences: PerfConstant


class Policy(_Entry):
    exposed_sync_share: PerfConstant
    busbw_shortfall: PerfConstant
    latency_bound_share: PerfConstant
    model_parallel_share: PerfConstant
    acceptance_ratio: PerfConstant
    acceptance_min_bytes: PerfConstant
    calibration_factor_min: PerfConstant
    calibration_factor_max: PerfConstant

    @model_validator(mode="after")
    def _calibration_range(self) -> "Policy":
        if not 0 < self.calibration_factor_min.value < self.calibration_factor_max.value:
            raise ValueError("calibration_factor_min must be above 0 and below calibration_factor_max")
        return self


class BudgetFabric(_Entry):
    technology: str
    nodes_max: int | None = None


class AdvisorFabrics(_Entry):
    source: str
    high: BudgetFabric
    medium: BudgetFabric
    low: BudgetFabric
    minimal: BudgetFabric

    def for_budget(self, budget: str) -> BudgetFabric:
        return getattr(self, budget)


class Management(_Entry):
    source: str
    technology: str
    leaf: str
    spine: str


class Advisor(_Entry):
    rack_power_kw: PerfConstant
    rack_units: PerfConstant
    single_gpu_server_units: PerfConstant
    probe_size_bytes: PerfConstant
    min_nodes_multi_node: PerfConstant
    racks_per_row: PerfConstant
    reserved_rack_units: PerfConstant
    compute_racks_per_switch_rack: PerfConstant
    spine_racks: PerfConstant
    site_growth_attempts: PerfConstant
    cables_per_switch_cost: PerfConstant
    time_target_rounds: PerfConstant
    management: Management
    fabrics: AdvisorFabrics
    switches: dict[str, str] = Field(description="fabric technology → switch catalogue id")


class PerfData(_Entry):
    nvlink: Nvlink
    pcie: Pcie
    network: Network
    calibration: Calibration
    nccl: Nccl
    rccl: Rccl
    training: Training
    policy: Policy
    advisor: Advisor

    def for_release(self, release: int | None) -> "PerfData":
        """These constants with NCCL's tuner as ``release`` has it (``Nccl.for_release``)."""
        if release is None or not self.nccl.releases_up_to(release):
            return self
        key = (id(self), release)
        if key not in _TUNED:
            _TUNED[key] = (self, self.model_copy(update={"nccl": self.nccl.for_release(release)}))
        return _TUNED[key][1]


# (id of the base constants, release) → (the base, kept so its id is not reused; the release's constants)
_TUNED: dict[tuple[int, int], tuple[PerfData, PerfData]] = {}


def by_capability(table: dict[int, PerfConstant], sm_arch: int) -> PerfConstant | None:
    """The entry NCCL would use: the highest key not above ``sm_arch`` (None below the lowest)."""
    keys = [k for k in sorted(table) if k <= sm_arch]
    return table[keys[-1]] if keys else None


def load_perf(path: Path = PERF_FILE) -> PerfData:
    try:
        raw = read_data(path.read_bytes(), str(path))  # through the parse cache, as the catalogue
        return PerfData.model_validate(raw)
    except OSError as exc:
        raise CatalogError(f"cannot read {path}: {exc}", source=str(path)) from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise CatalogError(f"{path.name}: {loc}: {first['msg']}", source=str(path)) from exc


@cache
def perf_data() -> PerfData:
    return shipped("perf", [PERF_FILE.name], PerfData, load_perf)  # validated once per change
