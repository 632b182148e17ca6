"""What the collective model needs to know about a cluster: bandwidth limits with their names.

``system_for(cluster, plan)`` reads the resolved cluster (GPU, NVLink, NIC ports and their PCIe slots,
fabric technology) and the plan (hops, oversubscription, bisection) once and turns them into a
``System``: the per-GPU bandwidth inside an NVLink domain, the per-node network bandwidth after protocol
efficiency and PCIe, the latency of one network hop, and the bound the fabric puts on traffic that leaves
a leaf or group. Every number comes from the catalogue or ``data/perf.yaml``.
"""

from __future__ import annotations

import math
import re
import weakref
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, NamedTuple

from blueprints.catalog.perf import PerfData, TransportSettings, by_capability, perf_data
from blueprints.catalog.schema import FabricTech, Gpu, Server, Switch
from generator.perf.ecmp import ecmp_efficiency
from generator.perf.global_links import GlobalLinks, global_links
from generator.perf.routes import RoutedFabric, routed_fabric

if TYPE_CHECKING:
    from generator.plan.model import Plan
    from generator.resolve import NicPort, ResolvedCluster, ResolvedFabric, ResolvedPool
    from generator.topology.metrics import FabricMetrics


class PerfError(ValueError):
    """The cluster has nothing the model can predict for (no GPU pool, a job larger than the pool)."""


@dataclass(frozen=True)
class Limit:
    """A bandwidth ceiling (GB/s, one direction), what imposes it (short, for table rows) and how."""

    gbytes: float
    name: str
    detail: str = ""

    def scaled(self, factor: float, name: str | None = None) -> Limit:
        return Limit(self.gbytes * factor, name or self.name, self.detail)

    def describe(self) -> str:
        return f"{self.name}: {self.detail}" if self.detail else self.name


def tighter(*limits: Limit | None) -> Limit | None:
    """The smallest of the given limits (first wins a tie); None when none is given."""
    out: Limit | None = None
    for lim in limits:
        if lim is not None and (out is None or lim.gbytes < out.gbytes - 1e-12):
            out = lim
    return out


@dataclass(frozen=True)
class FabricBound:
    """What the fabric allows a node for traffic spread over the whole fabric (scattered ranks, alltoall)."""

    limit: Limit
    oversubscription: float
    bisection_gbps: float
    fabric_nodes: int
    domain_nodes: float  # nodes per leaf group / SU / dragonfly group (traffic inside stays local)


@dataclass(frozen=True)
class SpreadShape:
    """What the fabric's bounds on spread traffic are worked out from, for the whole fabric or a packed job
    (``spread_bound``, ``rail_crossing_bound``): a node's network, the fabric's metrics, its node count,
    nodes per leaf group / SU and in the smallest one, the wire's payload share, the ECMP share, the rails."""

    net: Limit
    metrics: FabricMetrics
    fabric_nodes: int
    domain_nodes: float
    smallest_domain_nodes: int
    eff: float
    ecmp: float
    rails: int
    # a torus, hypercube or dragonfly routed over its own cables (generator/perf/routes.py); None: the closed
    # forms
    routes: RoutedFabric | None = None
    flows_per_path: int = 1  # flows a connection hashes onto the paths (NCCL_IB_QPS_PER_CONNECTION)
    # a dragonfly's groups and the global links between them, as minimal routing loads them
    # (generator/perf/global_links.py); None: not a dragonfly
    global_links: GlobalLinks | None = None

    @property
    def oversubscription(self) -> float:
        return max(self.metrics.oversubscription.values(), default=1.0)


@dataclass(frozen=True)
class System:
    name: str
    pool: str
    gpu_id: str
    gpu: Gpu
    gpus_per_node: int
    pool_nodes: int
    sm_arch: int
    unit_nodes: int  # nodes per NVLink domain (1 unless the NVLink domain spans nodes, e.g. NVL72)
    intra: Limit | None  # per-GPU bandwidth inside an NVLink domain / node (None: one GPU per node)
    intra_class: str  # "nvlink" or "pci": which NCCL latency row applies inside a node
    nvlink_raw_gbytes: float  # NVLink per GPU per direction, before NCCL's efficiency (NVLS uses it)
    nvls: bool
    ll128: bool
    net: Limit | None  # per-node network bandwidth (all compute NICs); None: no compute network
    net_kind: str | None  # infiniband | roce | ethernet
    net_ports: int
    net_line_gbps: float  # per node, line rate
    net_latency_us: float  # one network traversal: adapter to adapter across the mean hop count
    sharp: bool
    fabric: FabricBound | None
    sharp_share: float = 1.0  # share of the rails IB SHARP aggregates (switch streaming-flow limit)
    technology: str | None = None
    topology: str | None = None
    mean_hops: float = 0.0
    notes: tuple[str, ...] = field(default=())
    multi_node_nvls: bool = True  # the pinned NCCL runs NVLS across nodes (2.18+)
    mnnvl_nvls: bool = False  # the NCCL runs NVLS inside one NVLink domain that spans nodes (2.25+)
    nic_gbytes: float = 0.0  # one compute NIC as NCCL's graph search counts it: min(line rate, PCIe slot)
    # the NICs NCCL's graph counts: ``net_ports``, or fewer where the net plugin shows NCCL one device per
    # GPU's group of NICs (aws-ofi-nccl's multi-rail; ``nic_gbytes`` is then the group's); 0: no network
    nccl_nics: int = 0
    nccl_version: str = ""  # the NCCL release the prediction is for (software.nccl or --nccl-version)
    # the latency the cloud transport's NCCL net plugin reports to NCCL's tuner (None: none reported, NCCL's
    # IB/RoCE transports): steers NCCL's choice only, perf.yaml nccl.net_plugins
    tuner_net_latency_us: float | None = None
    # NCCL_ALGO / NCCL_PROTO the cloud transport's published setup runs multi-node jobs with (perf.yaml
    # nccl.net_plugins settings); None: NCCL's own choice
    transport_settings: TransportSettings | None = None
    # what ``fabric`` and ``rail_crossing`` are worked out from, for a packed job of fewer nodes than the
    # fabric's (``spread_bound``, ``rail_crossing_bound``); None: no planned fabric of two nodes or more
    spread_shape: SpreadShape | None = None
    # share of ``intra`` a GPU reaches sending to ONE peer of its node: 1 through NVSwitch or PCIe; on a
    # GPU mesh without a switch, the links joining the pair over all the GPU's links
    intra_peer_share: float = 1.0
    # NCCL runs PAT for all_gather / reduce_scatter at one rank per node (perf.yaml nccl.pat): its release has
    # PAT and the transport's net plugin offloads nothing to the GPU
    pat: bool = False

    @property
    def gpus(self) -> int:
        return self.pool_nodes * self.gpus_per_node

    @property
    def rail_crossing(self) -> Limit | None:
        """What the fabric allows a node for spread traffic over the whole fabric sent through each GPU's own
        NIC (no PXN: NCCL_PXN_DISABLE, or no NVLink to relay over) on a rail-optimised fabric; None: one rail,
        not rail-optimised, or nothing binds."""
        shape = self.spread_shape
        return rail_crossing_bound(shape, shape.fabric_nodes) if shape is not None else None

    @property
    def nccl_release(self) -> int | None:
        """The NCCL release as 100·major + minor (None: not numbered so): whose tuner tables apply."""
        return nccl_release(self.nccl_version)


# ---- efficiencies -------------------------------------------------------------------------------


def wire_efficiency(kind: str, mtu: int | None, perf: PerfData | None = None) -> float:
    """Payload share of the bytes on the wire for ``kind`` at link MTU ``mtu`` (default: perf.yaml's)."""
    perf = perf or perf_data()
    net = perf.network
    link_mtu = int(mtu if mtu is not None else net.default_mtu.get(kind))
    inner = net.in_mtu_bytes.get(kind)
    if kind in ("infiniband", "roce"):
        fitting = [p for p in net.rdma_payloads.values if p + inner <= link_mtu]
        payload = float(max(fitting) if fitting else min(net.rdma_payloads.values))
    else:
        payload = float(link_mtu - inner)
    return payload / (payload + inner + net.framing_bytes.get(kind))


def transport_efficiency(perf: PerfData | None = None) -> float:
    """NCCL's share of the payload rate, from the NDR calibration fact: busbw / (line rate × wire share), the
    line rate and wire share those of the fact's fabric in the shipped catalogue."""
    perf = perf or perf_data()
    cal = perf.calibration
    fabric = _shipped_fabric(cal.ndr_nic_fabric)
    return cal.ndr_nic_busbw.value / (fabric.speed_gbps / 8 * wire_efficiency(fabric.kind, None, perf))


@cache
def _shipped_fabric(name: str) -> FabricTech:
    from blueprints.catalog import default_catalog

    fabric = default_catalog().fabrics.get(name)
    if fabric is None:
        raise PerfError(f"no fabric `{name}` in the catalogue: the model is calibrated on it")
    return fabric


class NvlsCalibration(NamedTuple):
    """The node of the NVLS fact (perf.yaml calibration.nvls_server), as the catalogue describes it."""

    nvlink_gbytes_dir: float  # NVLink per GPU and direction: links × the generation's rate / 2
    gpus: int
    sm_arch: int


def nvls_calibration(perf: PerfData | None = None) -> NvlsCalibration:
    return _shipped_nvls_node((perf or perf_data()).calibration.nvls_server)


@cache
def _shipped_nvls_node(name: str) -> NvlsCalibration:
    """Looked up once per process: NVLS candidates ask for it on every prediction."""
    from blueprints.catalog import default_catalog

    cat = default_catalog()
    server = cat.servers.get(name)
    gpu = cat.gpus.get(server.gpu) if server is not None and server.gpu is not None else None
    ic = server.gpu_interconnect if server is not None else ""
    gen = cat.interconnects.nvlink.get(int(ic[6:])) if ic.startswith("nvlink") else None
    if server is None or gpu is None or gpu.nvlink is None or gen is None:
        raise PerfError(f"the catalogue does not describe `{name}`, the NVLink node the model calibrates on")
    return NvlsCalibration(gpu.nvlink.links * gen.link_gbytes_bidir / 2, server.gpus, gpu.sm_arch)


def nvls_efficiency(perf: PerfData | None = None, sm_arch: int | None = None) -> float:
    """Share of NVLink NVLS reaches, fitted to the H100 fact: NVLS moves S·(n+1)/n per GPU each way for an
    all_reduce of S, so its ideal busbw is B·2(n−1)/(n+1). Other generations scale it by NCCL's own
    nvlsEfficiency ratio to the fact's (Blackwell 0.74 / Hopper 0.85), so Blackwell is not fitted."""
    perf = perf or perf_data()
    ref = nvls_calibration(perf)
    n = ref.gpus
    ideal = ref.nvlink_gbytes_dir * 2 * (n - 1) / (n + 1)
    fitted = perf.calibration.h100_nvls_busbw.value / ideal
    table = perf.nccl.nvls_efficiency
    mine = by_capability(table, ref.sm_arch if sm_arch is None else sm_arch)
    theirs = by_capability(table, ref.sm_arch)
    if mine is None or theirs is None:
        return fitted
    return fitted * mine.value / theirs.value


def nvls_allreduce_link_share(perf: PerfData | None = None) -> float:
    """n/(n+1) of the n-GPU NVLS fact: the share of the NVLS link rate an all_reduce moves as algbw (S·(n+1)/n
    each way per GPU), kept at every domain size (predict.py ``_nvls_limit``)."""
    n = nvls_calibration(perf).gpus
    return n / (n + 1)


def pcie_gbytes(gen: int, lanes: int, perf: PerfData | None = None) -> float:
    """What NCCL counts for a PCIe link (GB/s per direction)."""
    perf = perf or perf_data()
    table = perf.pcie.gbits_per_lane
    rate = table.get(gen) or table[max(k for k in table if k <= max(gen, min(table)))]
    return lanes * rate.value / 8


# ---- intra-node ---------------------------------------------------------------------------------


def _nccl_nvlink_count(
    sm_arch: int, generation: int, cluster: ResolvedCluster, perf: PerfData
) -> tuple[float, float]:
    """What NCCL counts for one NVLink of a GPU of compute capability ``sm_arch`` (perf.yaml
    nvlink.gbytes_per_link; a GPU older than every figure gets the oldest), and that generation's link rate
    per direction (interconnects.yaml), both in GB/s."""
    per_link = by_capability(perf.nvlink.gbytes_per_link, sm_arch)
    if per_link is None:
        per_link = perf.nvlink.gbytes_per_link[min(perf.nvlink.gbytes_per_link)]
    return per_link.value, cluster.catalog.interconnects.nvlink[generation].link_gbytes_bidir / 2


def _intra(
    pool: ResolvedPool, cluster: ResolvedCluster, perf: PerfData, nvlink: bool = True
) -> tuple[Limit | None, str, float, list[str]]:
    """The GPUs' exchange inside a node: NVLink, Infinity Fabric, or else PCIe; with its class ("nvlink",
    "pci"), the per-GPU NVLink rate a direction, and notes."""
    gpu = pool.gpu
    assert gpu is not None
    server = pool.server
    notes: list[str] = []
    g = server.gpus
    nv_dir = pool.nvlink_gbytes_per_gpu_dir if nvlink else 0.0
    domain = server.nvlink_domain_gpus if nvlink else min(server.nvlink_domain_gpus, g)
    if not nvlink:
        # NCCL_P2P_DISABLE: "disables the peer to peer (P2P) transport, which uses CUDA direct access between
        # GPUs, using NVLink or PCI"; SHM then goes "through host memory" (NCCL env docs): each GPU's PCIe.
        notes.append(
            "NVLink off (like NCCL_P2P_DISABLE=1): GPUs of a node exchange through host memory over PCIe"
        )
    if g < 2 and domain <= g:
        return None, "nvlink" if nv_dir > 0 else "pci", nv_dir, notes
    if nv_dir > 0 and domain >= g and pool.nvlink_generation is not None and gpu.nvlink is not None:
        if server.nvswitches == 0 and domain <= g:
            notes.append(f"{server.gpus} GPUs on NVLink without NVSwitch: rings use the direct links")
        return _nvlink_limit(pool, cluster, perf, nv_dir), "nvlink", nv_dir, notes
    if nvlink and server.gpu_interconnect == "infinity-fabric" and gpu.infinity_fabric_gbps:
        raw = gpu.infinity_fabric_gbps / 2
        return _xgmi_limit(raw, gpu, perf), "nvlink", raw, notes
    if nvlink and (nv_dir > 0 or gpu.nvlink_bridge_gpus):
        notes.append(f"NVLink joins only {max(domain, gpu.nvlink_bridge_gpus)} GPUs; rings cross PCIe")
    return _pcie_limit(pool, perf), "pci", nv_dir, notes


def _node_side(
    pool: ResolvedPool, cluster: ResolvedCluster, perf: PerfData, nvlink: bool
) -> tuple[Limit | None, str, float, float, list[str]]:
    """The GPUs' exchange inside a node (``_intra``) and the share of it one GPU reaches to one peer."""
    intra, intra_class, nv_raw, notes = _intra(pool, cluster, perf, nvlink)
    peer_share = _intra_peer_share(pool, intra_class, notes) if intra is not None else 1.0
    return intra, intra_class, nv_raw, peer_share, notes


def _intra_peer_share(pool: ResolvedPool, intra_class: str, notes: list[str]) -> float:
    """What one GPU reaches sending to one peer of its node, as a share of all its links: everything through
    an NVSwitch (or over PCIe, the GPU's own slot either way); on a mesh without a switch only the links that
    join the pair: in a fully connected mesh (AMD MI300X: 7 xGMI links to 7 peers) links ÷ peers of them.
    Where not every pair is joined (DGX-1's 6 NVLinks for 7 peers) the catalogue has no pair map: one link is
    assumed, and a note says so."""
    gpu, server = pool.gpu, pool.server
    assert gpu is not None
    if intra_class != "nvlink" or server.nvswitches > 0 or server.nvlink_domain_gpus > server.gpus:
        return 1.0
    links = gpu.nvlink.links if gpu.nvlink is not None else (gpu.infinity_fabric_links or 0)
    peers = min(server.nvlink_domain_gpus, server.gpus) - 1
    if links <= 0 or peers <= 0:
        return 1.0
    if links >= peers:
        return (links // peers) / links
    notes.append(
        f"{links} GPU links for {peers} peers without a switch: which pairs they join is not in the "
        "catalogue, so a send to one peer (pipeline stages) is given one link"
    )
    return 1 / links


def _nvlink_limit(pool: ResolvedPool, cluster: ResolvedCluster, perf: PerfData, nv_dir: float) -> Limit:
    """NVLink as NCCL counts it: the GPU's links at NCCL's per-link figure, not the links' rate."""
    gpu = pool.gpu
    assert gpu is not None and gpu.nvlink is not None and pool.nvlink_generation is not None
    per_link, link_dir = _nccl_nvlink_count(gpu.sm_arch, pool.nvlink_generation, cluster, perf)
    detail = (
        f"{gpu.nvlink.links} links × {per_link:g} GB/s per GPU, what NCCL counts of "
        f"{link_dir:g} GB/s per link and direction"
    )
    return Limit(nv_dir * per_link / link_dir, f"NVLink {pool.nvlink_generation}", detail)


def _xgmi_limit(raw: float, gpu: Gpu, perf: PerfData) -> Limit:
    """AMD Infinity Fabric: the GPU's xGMI links, each at what AMD measures one carries (perf.yaml
    nvlink.xgmi_gbytes_per_link), never above the rated ``raw`` GB/s a direction."""
    if not gpu.infinity_fabric_links:
        raise PerfError(
            f"the catalogue gives no xGMI link count for {gpu.name} (gpus.yaml infinity_fabric_links)"
        )
    per_link = perf.nvlink.xgmi_gbytes_per_link.value
    rated = raw / gpu.infinity_fabric_links
    usable = min(per_link, rated)
    detail = (
        f"{gpu.infinity_fabric_links} xGMI links × {usable:g} GB/s per GPU, what a link carries of its "
        f"{rated:g} GB/s a direction (AMD's measurement)"
    )
    return Limit(gpu.infinity_fabric_links * usable, "Infinity Fabric", detail)


def _pcie_limit(pool: ResolvedPool, perf: PerfData) -> Limit:
    """GPU-GPU over PCIe: each GPU's own host link (``_gpu_host_link``)."""
    gpu = pool.gpu
    assert gpu is not None
    host = _gpu_host_link(pool, perf)
    if host is None:
        field = "pcie_gen" if gpu.pcie_gen is None else "pcie_lanes"
        raise PerfError(
            f"the catalogue gives no host PCIe {'generation' if gpu.pcie_gen is None else 'width'} for "
            f"{gpu.name} (gpus.yaml {field}: no vendor text found), and its GPUs would exchange over PCIe "
            "here: not modelled"
        )
    pcie_gen, bw = host
    detail = f"x{gpu.pcie_lanes} per GPU, {bw:g} GB/s as NCCL counts it"
    return Limit(bw, f"PCIe Gen{pcie_gen} GPU-GPU", detail)


def _gpu_host_link(pool: ResolvedPool, perf: PerfData) -> tuple[int, float] | None:
    """A GPU's own host PCIe link: the slower of the GPU's and the server's generation at the GPU's width
    (gpus.yaml pcie_gen / pcie_lanes), as NCCL counts it; None where the catalogue gives none (GB200's host
    link is NVLink-C2C)."""
    gpu = pool.gpu
    if gpu is None or gpu.pcie_gen is None or gpu.pcie_lanes is None:
        return None
    gen = min(gpu.pcie_gen, pool.server.pcie_gen)
    return gen, pcie_gbytes(gen, gpu.pcie_lanes, perf)


# ---- network ------------------------------------------------------------------------------------


_KIND_NAMES = {"infiniband": "InfiniBand", "roce": "RoCE v2", "ethernet": "Ethernet (TCP)"}


def _net_technology(
    cluster: ResolvedCluster, pool: ResolvedPool
) -> tuple[str | None, FabricTech | None, list[str]]:
    notes: list[str] = []
    fab = cluster.fabrics.get("compute")
    if fab is not None:
        return fab.technology, fab.tech, notes
    if pool.cloud is not None:
        tech = cluster.catalog.fabrics.get(pool.cloud.fabric)
        if tech is not None:
            return pool.cloud.fabric, tech, notes
        as_id = perf_data().nccl.cloud_transport_as_fabric
        as_tech = cluster.catalog.fabrics.get(as_id)
        if as_tech is None:
            raise PerfError(
                f"perf.yaml nccl.cloud_transport_as_fabric `{as_id}` is no fabric of fabrics.yaml"
            )
        notes.append(_cloud_fabric_note(pool.cloud.fabric, as_id, as_tech))
        return pool.cloud.fabric, as_tech, notes
    return None, None, notes


def _cloud_fabric_note(fabric: str, as_id: str, as_tech: FabricTech) -> str:
    """How a cloud transport the catalogue has no fabric for is modelled: as perf.yaml's
    nccl.cloud_transport_as_fabric, plus what its NCCL net plugin entry (nccl.net_plugins) gives."""
    kind = _KIND_NAMES[as_tech.kind]
    head = f"cloud fabric `{fabric}` is not in the catalogue: modelled as {kind} (`{as_id}`)"
    plugin = perf_data().nccl.net_plugins.get(fabric)
    if plugin is None:
        return head + " (its own transport efficiency is not modelled)"
    given = ["the latency it reports to NCCL's tuner"]
    if plugin.traversal_latency_us is not None:
        given.append("a traversal latency")
    if plugin.settings is not None:
        given.append("the NCCL settings its setup runs with")
    return f"{head}, with {', '.join(given)} from its NCCL net plugin entry ({plugin.plugin}, perf.yaml)"


def _by_adapter(ports: tuple[NicPort, ...]) -> dict[str, list[NicPort]]:
    """The ports of each RDMA device (a dual-port adapter's two ports share its PCIe slot)."""
    adapters: dict[str, list[NicPort]] = {}
    for p in ports:
        adapters.setdefault(p.rdma_dev, []).append(p)
    return adapters


def nic_nccl_gbytes(pool: ResolvedPool, perf: PerfData) -> float:
    """One compute port as NCCL's graph search counts it: line rate / 8, or its share of the adapter's PCIe
    slot when that is less (the slowest port of the pool)."""
    ports: tuple[NicPort, ...] = pool.ports_for("compute")
    adapters = _by_adapter(ports)
    out = math.inf
    for dev_ports in adapters.values():
        first = dev_ports[0]
        slot = pcie_gbytes(first.pcie_gen, first.pcie_lanes, perf) if first.model != "cloud" else math.inf
        for p in dev_ports:
            out = min(out, p.speed_gbps / 8, slot / len(dev_ports))
    return 0.0 if out == math.inf else out


def _link_gbps(port: NicPort, tech: FabricTech) -> float:
    """A port links at the lower of its own and the fabric's speed (rule NET007 says so of the same ports);
    a cloud instance's ports are the provider's, at their own speed."""
    return port.speed_gbps if port.model == "cloud" else min(port.speed_gbps, tech.speed_gbps)


def _node_network(
    pool: ResolvedPool, tech: FabricTech, mtu: int | None, transport: float, perf: PerfData
) -> tuple[Limit | None, int, float]:
    ports: tuple[NicPort, ...] = pool.ports_for("compute")
    if not ports:
        return None, 0, 0.0
    eff = wire_efficiency(tech.kind, mtu, perf) * transport
    adapters = _by_adapter(ports)
    total = 0.0
    pcie_bound = 0
    pcie_text = ""
    link = {id(p): _link_gbps(p, tech) for p in ports}
    for dev_ports in adapters.values():
        first = dev_ports[0]
        line = sum(link[id(p)] for p in dev_ports) / 8 * eff
        slot = pcie_gbytes(first.pcie_gen, first.pcie_lanes, perf) if first.model != "cloud" else math.inf
        if slot < line:
            pcie_bound += 1
            pcie_text = f"PCIe Gen{first.pcie_gen} x{first.pcie_lanes} = {slot:g} GB/s"
        total += min(line, slot)
    line_gbps = sum(link.values())
    speeds = sorted(set(link.values()))
    speed = "/".join(f"{s:g}" for s in speeds)
    kind = _KIND_NAMES[tech.kind]
    nics = f"{len(ports)} × {speed} Gb/s {kind} × {eff:.1%} protocol efficiency"
    host = _gpu_host_link(pool, perf)
    g = pool.server.gpus
    if host is not None and g * host[1] < total:
        # every byte a node sends or receives crosses one of its GPUs' own host links (PXN only moves it to
        # another GPU's): with few or slow GPUs behind many NICs those links, not the NICs, bind
        what = f"{g} GPU{'s' if g > 1 else ''} × {host[1]:g} GB/s host PCIe each, behind {nics}"
        return Limit(g * host[1], "GPUs' own PCIe links", what), len(ports), line_gbps
    if pcie_bound:
        return (
            Limit(
                total,
                "PCIe GPU-NIC",
                f"{pcie_bound} of {len(adapters)} adapters capped at {pcie_text}; {nics}",
            ),
            len(ports),
            line_gbps,
        )
    return Limit(total, "NIC line rate", nics), len(ports), line_gbps


def ib_sharp(cluster: ResolvedCluster) -> bool:
    """IB SHARP on the compute fabric: its switches aggregate and its subnet manager runs SHARP."""
    fab = cluster.fabrics.get("compute")
    if fab is None or fab.kind != "infiniband" or fab.switch is None:
        return False
    sm = fab.spec.subnet_manager
    return bool(fab.switch.sharp and sm is not None and sm.sharp)


def _sharp_share(cluster: ResolvedCluster, rails: int, perf: PerfData) -> float:
    """Share of the node's rails IB SHARP can aggregate: NCCL opens one streaming aggregation flow per HCA
    rail and a switch holds at most two ([HPCX-SHARP]); rail-optimised leaves see one rail each, otherwise a
    leaf sees every rail of its nodes and only two of them aggregate."""
    fab = cluster.fabrics.get("compute")
    topo = fab.spec.topology if fab is not None else None
    if rails <= 1 or getattr(topo, "rail_optimized", False):
        return 1.0
    flows = perf.nccl.sharp_streaming_flows_per_switch.value
    return min(1.0, flows / rails)


def _rails(fab: ResolvedFabric | None, ports: int) -> int:
    """Rails a node's traffic spreads over on separate leaves: its compute ports when the topology is
    rail-optimised (each port on its rail's leaf), else 1 (every port on the node's own leaves)."""
    topo = fab.spec.topology if fab is not None else None
    return ports if getattr(topo, "rail_optimized", False) else 1


def _hop_latency_us(tech: FabricTech, switch: Switch | None, mean_hops: float) -> float:
    """Adapter to adapter: the article's fabric latency covers one switch; further switches add theirs."""
    switches = max(1.0, mean_hops - 1) if mean_hops else 1.0
    extra = switches - 1
    per = switch.latency_ns / 1000 if switch is not None else tech.latency_us
    return tech.latency_us + extra * per


def _roce_notes(kind: str, fab: ResolvedFabric | None) -> list[str]:
    """What the model does not put a number on for RoCE: loss recovery without PFC/ECN (go-back-N)."""
    if kind != "roce" or fab is None:
        return []
    ll = fab.spec.lossless
    if ll is None or not (ll.pfc or ll.ecn):
        return [
            "RoCE without PFC or ECN: drops under congestion trigger go-back-N retransmission; "
            "the predicted busbw assumes a lossless fabric (NET004)"
        ]
    if not ll.ecn:
        return [
            "RoCE with PFC but no ECN: congestion spreads by pause frames (head-of-line blocking); not "
            "modelled"
        ]
    return []


def _sharp_notes(cluster: ResolvedCluster) -> list[str]:
    """What the CollNet figure assumes of IB SHARP: streaming aggregation (SAT), which the generated NCCL
    settings turn on and SHARP itself leaves off ("SHARP_COLL_ENABLE_SAT ... Default: 0 (Disabled)", NVIDIA
    SHARP v2.6.1 documentation, NVIDIA SHARP Collective Library). Without it SHARP aggregates in low-latency
    trees, slower for large messages (ABCI's two-node A100 run, benchmarks/evaluation.yaml: 105 GB/s where
    the model gives 157)."""
    if not ib_sharp(cluster):
        return []
    return [
        "IB SHARP: CollNet is predicted with streaming aggregation (SHARP_COLL_ENABLE_SAT=1, as the "
        "generated NCCL settings set it; SHARP's default is 0); without it SHARP runs low-latency trees, "
        "slower for large messages, which the model has no figure for"
    ]


_HOMES: dict[int, tuple[weakref.ref[Plan], dict[str, str]]] = {}


def _homes(plan: Plan) -> dict[str, str]:
    """Each node's leaf group / SU on the compute fabric (cached per plan: a pass over every cable)."""
    hit = _HOMES.get(id(plan))
    if hit is not None and hit[0]() is plan:
        return hit[1]
    # a node's home through a switch: the switch's SU, else the switch; through any other device (direct
    # topologies): the node itself. One lookup per cable end (the dragonfly example has 20,000 cables).
    via_switch = {
        d.name: f"su{d.su}" if d.su is not None else d.name for d in plan.devices if d.kind == "switch"
    }
    nodes = {d.name for d in plan.devices if d.kind == "node"}
    devices = plan.device_by_name
    home: dict[str, str] = {}
    for link in plan.links_of("compute"):
        a, b = link.a.device, link.b.device
        for node, peer in ((a, b), (b, a)):
            if node in nodes and node not in home and peer in devices:
                home[node] = via_switch.get(peer, node)
    for key in [k for k, (ref, _) in _HOMES.items() if ref() is None]:
        del _HOMES[key]
    _HOMES[id(plan)] = (weakref.ref(plan), home)
    return home


def _ecmp_share(
    tech: FabricTech, fab: ResolvedFabric | None, plan: Plan | None, perf: PerfData, ports: int
) -> float:
    """Share of uplink capacity left after ECMP hash collisions (1.0 where flows are not hashed).

    The hash picks among the first router's equal-cost next hops: the fabric's equal-cost path count, but no
    more than half the switch's ports (the other half face the nodes), or on a fabric without switches (a
    directly cabled torus or hypercube, whose nodes route) no more than the node's ``ports``: a torus's path
    count grows as a multinomial of its offsets, far past any router's choice."""
    if tech.kind == "infiniband" or plan is None or fab is None or fab.spec.adaptive_routing:
        return 1.0  # IB: the subnet manager routes by destination; AR / Spectrum-X spray packets
    m = plan.metrics.get("compute")
    if m is None or m.ecmp_paths < 2:
        return 1.0
    paths = m.ecmp_paths
    if fab.switch is not None:
        paths = min(paths, max(2, fab.switch.ports_at(tech.speed_gbps) // 2 or fab.switch.ports // 2))
    else:
        paths = min(paths, max(2, ports))
    return ecmp_efficiency(paths, int(perf.nccl.ib_qps_per_connection.value))


def _fabric_shape(plan: Plan | None) -> tuple[FabricMetrics, int, int] | None:
    """The compute fabric's metrics, its node count and its count of leaf groups (SUs); None without a
    planned compute fabric of two nodes or more."""
    m = plan.metrics.get("compute") if plan is not None else None
    if plan is None or m is None:
        return None
    home = _homes(plan)
    return (m, len(home), len(set(home.values()))) if len(home) >= 2 else None


def _spread_shape(
    plan: Plan | None, rp: ResolvedPool, net: Limit, eff: float, ecmp: float, rails: int, perf: PerfData
) -> SpreadShape | None:
    """The fabric's shape for spread traffic: None without a planned compute fabric of two nodes or more. A
    torus, hypercube or dragonfly is also routed over its cables, the pool's nodes first (a packed job takes
    them in plan order)."""
    shape = _fabric_shape(plan)
    if shape is None:
        return None
    assert plan is not None  # _fabric_shape has a plan
    m, fabric_nodes, domains = shape
    smallest = min(Counter(_homes(plan).values()).values())
    pool = frozenset(rp.hostnames)
    routes = routed_fabric(plan, pool)
    flows = int(perf.nccl.ib_qps_per_connection.value)
    return SpreadShape(
        net,
        m,
        fabric_nodes,
        fabric_nodes / domains,
        smallest,
        eff,
        ecmp,
        rails,
        routes,
        flows,
        global_links(plan, pool),
    )


def _job_shares(shape: SpreadShape, nodes: int) -> tuple[float, float, float]:
    """For a node of a packed job of ``nodes`` nodes (taken in leaf order; the whole fabric at most): the
    share of its peers outside its leaf group / SU, which climbs its group's uplinks; the share the bisection
    is charged for; and the share inside its group (the node itself aside). In a fat-tree the bytes between
    groups climb the sender's uplinks and come down the receiver's, and the tiers above carry what the
    uplinks feed them, so the job's own share is charged. On a dragonfly the bytes between groups take the
    global links joining them directly (minimal routing, ``_global_limit``), so no bisection share is
    charged. Elsewhere the bisection is charged as for the whole fabric (each node's allotment of it, for the
    fabric's share of remote peers) unless the job stays in one group."""
    n = min(nodes, shape.fabric_nodes)
    if n <= shape.smallest_domain_nodes:
        return 0.0, 0.0, 1.0
    d, total = shape.domain_nodes, shape.fabric_nodes
    cross = max(0.0, (n - d) / (n - 1))
    if shape.metrics.topology == "fat-tree":
        between = cross
    elif shape.global_links is not None and shape.global_links.crossing(n) is not None:
        between = 0.0
    else:
        between = max(0.0, (total - d) / (total - 1))
    return cross, between, max(0.0, (min(n, d) - 1) / (n - 1))


def _global_limit(shape: SpreadShape, nodes: int) -> Limit | None:
    """What a dragonfly's global links allow a node of a packed job of ``nodes`` nodes for spread traffic
    under minimal routing (global_links.py): the tightest pair of groups' direct links over the share of a
    node's bytes between them, at the wire's payload share and ECMP's (flows hashed onto those links, as the
    uplinks' are). None: not a dragonfly, or the job in one group."""
    crossing = shape.global_links.crossing(nodes) if shape.global_links is not None else None
    if crossing is None:
        return None
    (i, j), (mi, mj) = crossing.groups, crossing.nodes
    hashed = f", ECMP hashing leaves {shape.ecmp:.0%} of them usable" if shape.ecmp < 1.0 else ""
    n = min(nodes, shape.fabric_nodes)
    return Limit(
        crossing.gbps / 8 * shape.eff * shape.ecmp,
        GLOBAL_LINKS_LIMIT,
        f"minimal routes between groups {i} and {j} ({mi} and {mj} of the job's {n} nodes) share the "
        f"{crossing.links} global links joining them, {crossing.link_gbps:g} Gb/s{hashed}",
    )


# the name of the limit a dragonfly's global links set (_global_limit)
GLOBAL_LINKS_LIMIT = "global links"


def spread_bound(shape: SpreadShape, nodes: int) -> Limit:
    """What the fabric allows a node of a packed job of ``nodes`` nodes for traffic spread over the job (the
    whole fabric's bound at the fabric's node count): the share of its peers outside its leaf group / SU
    climbs the uplinks (oversubscription, ECMP hashing) and crosses the bisection, or on a dragonfly the
    global links joining its groups (``_global_limit``). A job inside one group sends nothing over them, as
    its rings do not. A torus, hypercube or dragonfly routes the job's traffic over its own cables instead
    (``routed_bound``) while the job is small enough to route."""
    routed = routed_bound(shape, "spread", nodes)
    if routed is not None:
        return routed
    cross, between, _ = _job_shares(shape, nodes)
    what = f"{cross:.0%} of peers outside the {shape.domain_nodes:g}-node leaf group"
    return tighter(_spread_limit(shape, (cross, between), what), _global_limit(shape, nodes)) or shape.net


# the name of the limit a routed fabric's busiest cable sets (routed_bound): rules tell it from the NICs' own
ROUTED_LIMIT = "busiest cable"


def routed_bound(shape: SpreadShape, pattern: str, nodes: int, shuffled: bool = False) -> Limit | None:
    """What a routed fabric's busiest cable (a torus's, a hypercube's, a dragonfly's) allows a node of a
    packed job of ``nodes`` nodes for ``pattern`` traffic (routes.py: "spread" to every peer alike, "ring" to
    the next node in order, "tree" to its parents and children in NCCL's two binary trees): the cable's rate
    over its load per unit a node sends (with what ECMP hashing adds where the fabric hashes flows), at the
    wire's payload share; ``net`` where no cable binds. ``shuffled``: the ranks on ``nodes`` nodes of the
    fabric drawn at random, in random order (the mean busiest cable of the draws routes.py makes); where not
    one draw fits the routing budget, rank order's bound: a random order's next nodes are farther, and its
    hops share cables rank order's do not (on the three routed examples, scattered ranks routed in draws read
    no faster than rank order; the uniform load, which scattered ranks meet as well, reads 4.7 times what the
    routed draws give the dragonfly example's rings). None: not routed, or too large to route."""
    flows = shape.flows_per_path if shape.ecmp < 1.0 else None  # ecmp < 1: the fabric hashes flows
    routes = shape.routes
    load = routes.load(pattern, nodes, flows, shuffled) if routes is not None else None
    in_rank_order = False
    if load is None and shuffled and routes is not None:
        load, in_rank_order = routes.load(pattern, nodes, flows), True
    if load is None:
        return None
    gbytes = shape.eff / (8 * load.per_gbps) if load.per_gbps > 0 else math.inf
    if gbytes >= shape.net.gbytes:
        return shape.net
    what = {
        "spread": "spread over the job's nodes",
        "ring": "to the next node of the ring",
        "tree": "to its neighbours in NCCL's two trees",
        "pat": "to the nodes 2^d ranks on in NCCL's PAT",
    }[pattern]
    hashing = ", flows hashed onto its equal-cost next hops collide on it" if load.hashed else ""
    if in_rank_order:
        order = " in random order, past the routing budget: taken as no faster than in rank order, routed"
    elif shuffled:
        draws = f"{load.draws} draw{'s' if load.draws > 1 else ''}"
        order = f" in random order (mean of {draws} of the fabric's nodes)"
    else:
        order = " routed"
    drawn = shuffled and not in_rank_order
    busiest = "the busiest cable, on average over the draws, lets" if drawn else "the busiest cable lets"
    return Limit(
        gbytes,
        ROUTED_LIMIT,
        f"{nodes} nodes' traffic {what}{order} over the {shape.metrics.topology}'s shortest paths: "
        f"{busiest} each node send {1 / load.per_gbps:,.4g} Gb/s{hashing}",
    )


def rail_crossing_bound(shape: SpreadShape, nodes: int) -> Limit | None:
    """What a rail-optimised fabric allows a node of a packed job of ``nodes`` nodes for spread traffic sent
    through each GPU's own NIC, as without PXN (NCCL_PXN_DISABLE=1, or GPUs without NVLink): a peer on
    another rail sits on another leaf even inside the node's own leaf group, so (rails − 1)/rails of that
    group's bytes climb the leaf uplinks too. With PXN (NCCL 2.12+, on by default) NCCL first moves the bytes
    over NVLink to the local GPU on the destination's rail, whose NIC sends them rail to rail (NVIDIA/nccl
    src/graph/paths.cc, "PXN = PCI + NVLink"; NVIDIA blog "Doubling all2all Performance with NCCL 2.12"): the
    bound is then ``spread_bound``. The bisection carries only the bytes between leaf groups either way.
    None: one rail, or nothing in the fabric binds."""
    if shape.rails < 2:
        return None
    cross, between, within = _job_shares(shape, nodes)
    leaving = cross + within * (shape.rails - 1) / shape.rails
    what = (
        f"{leaving:.0%} of the bytes leave their leaf (peers outside the {shape.domain_nodes:g}-node leaf "
        f"group, or on another of its {shape.rails} rails: no PXN)"
    )
    lim = tighter(_spread_limit(shape, (leaving, between), what), _global_limit(shape, nodes)) or shape.net
    return None if lim is shape.net else lim


def _fabric_bound(shape: SpreadShape | None) -> FabricBound | None:
    """The whole fabric's bound on spread traffic; None where every node sits in one leaf group."""
    if shape is None or shape.domain_nodes >= shape.fabric_nodes:
        return None  # every node on the same leaves: spread traffic never leaves them
    m = shape.metrics
    lim = spread_bound(shape, shape.fabric_nodes)
    return FabricBound(lim, shape.oversubscription, m.bisection_gbps, shape.fabric_nodes, shape.domain_nodes)


def _spread_limit(shape: SpreadShape, shares: tuple[float, float], what: str) -> Limit:
    """The tightest of the leaf uplinks (oversubscription, ECMP hashing) for the share of a node's spread
    bytes that climbs them (``shares[0]``, ``what`` says which) and the fabric bisection for the share bound
    for another leaf group (``shares[1]``); ``net`` when neither binds."""
    net, m, eff, ecmp, fabric_nodes = shape.net, shape.metrics, shape.eff, shape.ecmp, shape.fabric_nodes
    over = shape.oversubscription
    leaving, between = shares
    hashed = f", ECMP hashing leaves {ecmp:.0%} of the uplinks usable" if ecmp < 1.0 else ""
    limits: list[Limit] = []
    if over > 1.0 and leaving > 0:
        limits.append(
            Limit(
                net.gbytes * ecmp / (over * leaving),
                f"uplinks {over:g}:1",
                f"{over:g}:1 oversubscription, {what}{hashed}",
            )
        )
    elif ecmp < 1.0 and leaving > 0:
        # bytes leaving the leaf move at the hashed share of the uplinks, the rest at line rate
        limits.append(
            Limit(
                net.gbytes / (leaving / ecmp + (1 - leaving)),
                "ECMP hash collisions",
                f"{m.ecmp_paths} equal-cost paths, flows hashed without adaptive routing: the busiest path "
                f"carries E[max] flows, {ecmp:.0%} of capacity; {what}",
            )
        )
    if m.bisection_gbps > 0 and between > 0:
        # uniform traffic sends half its cross-domain bytes over the bisection: 2·B_bis / (N · cross) per node
        per_node = 2 * m.bisection_gbps / 8 * eff * ecmp / (fabric_nodes * between)
        limits.append(
            Limit(
                per_node, "fabric bisection", f"{m.bisection_gbps:g} Gb/s across {fabric_nodes} nodes{hashed}"
            )
        )
    lim = tighter(*limits)
    return net if lim is None or lim.gbytes >= net.gbytes else lim


# ---- the system ---------------------------------------------------------------------------------


def job_pool(cluster: ResolvedCluster, pool: str | None = None) -> ResolvedPool:
    """The GPU pool a job runs on: ``pool`` by name, else the one with the most GPUs (first on a tie)."""
    gpu_pools = [p for p in cluster.gpu_pools if p.gpu is not None]
    if not gpu_pools:
        raise PerfError(f"`{cluster.name}` has no GPU pool: nothing to predict")
    if pool is not None:
        for p in gpu_pools:
            if p.name == pool:
                return p
        raise PerfError(f"no GPU pool named `{pool}` (GPU pools: {', '.join(p.name for p in gpu_pools)})")
    return max(gpu_pools, key=lambda p: (p.count * p.server.gpus, -gpu_pools.index(p)))


class _Network(NamedTuple):
    """The compute network as one node of the pool sees it (phase of ``system_for``)."""

    technology: str | None
    kind: str | None
    net: Limit | None
    ports: int
    line_gbps: float
    latency_us: float
    fabric: FabricBound | None
    mean_hops: float
    topology: str | None
    notes: list[str]
    plugin_latency_us: float | None = None
    settings: TransportSettings | None = None
    spread_shape: SpreadShape | None = None


def _network(cluster: ResolvedCluster, plan: Plan | None, rp: ResolvedPool, perf: PerfData) -> _Network:
    technology, tech, notes = _net_technology(cluster, rp)
    if tech is None:
        return _Network(technology, None, None, 0, 0.0, 0.0, None, 0.0, None, notes)
    fab = cluster.fabrics.get("compute")
    mtu = fab.spec.mtu if fab is not None else None
    transport = transport_efficiency(perf)
    net, ports, line = _node_network(rp, tech, mtu, transport, perf)
    m = plan.metrics.get("compute") if plan is not None else None
    mean_hops = m.mean_hops if m is not None else 0.0
    topology = m.topology if m is not None else (fab.topology_kind if fab is not None else None)
    latency = _hop_latency_us(tech, fab.switch if fab is not None else None, mean_hops)
    plugin_latency, traversal, settings = _net_plugin(technology, rp, perf, notes)
    latency = traversal if traversal is not None else latency
    fabric = None
    spread_shape = None
    if net is not None:
        eff = wire_efficiency(tech.kind, mtu, perf) * transport
        ecmp = _ecmp_share(tech, fab, plan, perf, ports)
        spread_shape = _spread_shape(plan, rp, net, eff, ecmp, _rails(fab, ports), perf)
        fabric = _fabric_bound(spread_shape)
        notes.extend(_roce_notes(tech.kind, fab) + _sharp_notes(cluster))
        if tech.kind == "ethernet":
            notes.append("Ethernet without RDMA: NCCL's socket transport; its CPU cost is not modelled")
    if plan is None or m is None:
        notes.append("no fabric plan: the network is taken as non-blocking")
    return _Network(
        technology,
        tech.kind,
        net,
        ports,
        line,
        latency,
        fabric,
        mean_hops,
        topology,
        notes,
        plugin_latency,
        settings,
        spread_shape,
    )


def _net_plugin(
    technology: str | None, pool: ResolvedPool, perf: PerfData, notes: list[str]
) -> tuple[float | None, float | None, TransportSettings | None]:
    """A cloud transport's NCCL net plugin (perf.yaml nccl.net_plugins, by cloud fabric id): the latency it
    reports to NCCL's tuner on this instance type, the traversal latency a run pays and the NCCL settings
    its published setup runs multi-node jobs with, when the model has them (else the fabric's own)."""
    plugin = perf.nccl.net_plugins.get(technology or "") if pool.cloud is not None else None
    if plugin is None:
        return None, None, None
    instance = pool.server_id.split("/")[-1]
    reported = plugin.reported_for(instance)
    if reported:
        notes.append(
            f"{plugin.plugin} reports {reported:g} µs of network latency to NCCL's tuner on {instance}: "
            "it steers NCCL's choice of algorithm and protocol, it is not the time a run pays"
        )
    settings = plugin.settings_for(instance)
    if settings is not None:
        who = "its NCCL plugin" if instance in plugin.instance_settings else "its published setup"
        notes.append(
            f"{technology} jobs across nodes run {settings.env()} on {instance}, as {who} sets them: "
            "the model runs the same unless the estimate names others"
        )
    return reported, plugin.traversal_for(instance), settings


def _nccl_devices(nw: _Network, pool: ResolvedPool, perf: PerfData, notes: list[str]) -> tuple[int, float]:
    """The NICs NCCL's channel graph counts and one's speed: the node's compute ports, or, where the cloud
    transport's plugin groups them around the GPUs (perf.yaml nccl.net_plugins rail_groups), one device per
    GPU of its group's summed speed. The node's line rate is the same either way. (0, 0) without a compute
    network, which holds a collective of a pool of several nodes to one (said)."""
    if nw.net is None:
        if pool.count > 1:
            notes.append("no compute network: only one node can take part in a collective")
        return 0, 0.0
    nic = nic_nccl_gbytes(pool, perf)
    plugin = perf.nccl.net_plugins.get(nw.technology or "") if pool.cloud is not None else None
    gpus = pool.server.gpus
    instance = pool.server_id.split("/")[-1]
    if plugin is None or not plugin.groups_rails(instance) or nw.ports <= gpus or nw.ports % gpus:
        return nw.ports, nic
    rails = nw.ports // gpus
    notes.append(
        f"{plugin.plugin} shows NCCL one device per GPU on {instance}, its {rails} NICs of "
        f"{nic * 8:g} Gb/s together (multi-rail): NCCL's channel graph counts {gpus} devices of "
        f"{nic * 8 * rails:g} Gb/s"
    )
    return gpus, nic * rails


# the major and minor numbers a release starts with, in ASCII digits (str.isdigit() also takes `²`, which
# int() refuses, and int() of thousands of digits raises)
_MAJOR_MINOR = re.compile(r"([0-9]{1,4})\.([0-9]{1,4})(?![0-9])", re.ASCII)


def refuse_per_collective_lists(given: list[str], system: System, fix: str) -> None:
    """A per-collective NCCL_ALGO / NCCL_PROTO (``given``, as ``NCCL_ALGO=...``) needs a release that reads
    one (perf.yaml nccl.per_collective_lists: tuning.cc 2.25.1 parseList); 2.22.3's reads one list of names
    for every collective, so PerfError, ending in ``fix``."""
    nc = perf_data().for_release(system.nccl_release).nccl
    if given and not nc.per_collective_lists.value:
        raise PerfError(
            f"{' and '.join(given)} name collectives, which NCCL reads from 2.25 (tuning.cc 2.25.1 "
            f"parseList); NCCL {system.nccl_version} reads one list of names for every collective (tuning.cc "
            f"2.22.3): {fix}"
        )


def nccl_release(version: str) -> int | None:
    """``2.18.1`` → 218 (100·major + minor); None when the pin is not a version NCCL numbers that way."""
    m = _MAJOR_MINOR.match(version)
    return 100 * int(m.group(1)) + int(m.group(2)) if m else None


def _multi_node_nvls(version: str, given: bool, perf: PerfData, notes: list[str]) -> bool:
    """NVLS across nodes (NVLS + IB SHARP, NVLS-tree) needs the NCCL the blueprint pins (or the run uses)
    to have it."""
    release = nccl_release(version)
    floor = int(perf.nccl.multi_node_nvls_min_release.value)
    if release is None or release >= floor:
        return True
    where = "--nccl-version" if given else "software.nccl"
    notes.append(
        f"NCCL {version} ({where}) predates NVLS across nodes (NCCL {floor // 100}.{floor % 100}): "
        "multi-node NVLS and NVLS-tree are not candidates"
    )
    return False


def mnnvl_nvls_first_release(perf: PerfData) -> str:
    """The first NCCL release (major.minor) that runs NVLS inside one NVLink domain spanning nodes."""
    release = int(perf.nccl.mnnvl_nvls_min_release.value)
    return f"{release // 100}.{release % 100}"


def mnnvl_nvls(version: str, perf: PerfData) -> bool:
    """Whether the NCCL release runs NVLS inside one NVLink domain that spans nodes: from 2.21 (tuning.cc
    2.21.5: a domain counts as one node), not before (2.20.3: "MNNVL: NVLS not yet supported")."""
    release = nccl_release(version)
    return release is not None and release >= perf.nccl.mnnvl_nvls_min_release.value


def _mnnvl_notes(
    cluster: ResolvedCluster, nvls: bool, unit_nodes: int, version: str, perf: PerfData
) -> list[str]:
    """What NVLS does on NVLink domains that span nodes (predict.py ``_mnnvl_without_nvls``): off before
    NCCL 2.21 without IB SHARP (rings across the trays); from 2.21 on inside one domain, while NVLS-tree
    across domains stays off in the model (docs/performance.md)."""
    if not nvls or unit_nodes < 2 or ib_sharp(cluster):
        return []
    first = mnnvl_nvls_first_release(perf)
    if not mnnvl_nvls(version, perf):
        return [
            f"NCCL {version} turns NVLS off on an NVLink domain spanning nodes without IB SHARP (tuning.cc "
            f'before {first}: "MNNVL: NVLS not yet supported"): collectives spanning trays run rings'
        ]
    return [
        f"NCCL {version} runs NVLS inside one NVLink domain spanning nodes (tuning.cc {first}: a domain "
        "counts as one node); across domains the model keeps NVLS-tree off, as published multi-rack runs "
        "show no NVLS-tree gain (docs/performance.md)"
    ]


def _tuner_notes(version: str, perf: PerfData) -> list[str]:
    """Which release's tuner tables predict this NCCL, when a later release's changes apply, and what it
    predates of the model's algorithms and protocols."""
    later = perf.nccl.releases_up_to(nccl_release(version))
    tables = [f"NCCL {version}: predicted with the tuner tables of {later[-1].source}"] if later else []
    return tables + _introduced_notes(version, perf)


def _ll128(gpu: Gpu, intra_class: str, perf: PerfData) -> bool:
    """NCCL turns LL128 on by default only over NVLink, on NVIDIA GPUs of the compute capabilities its
    release lists (perf.yaml ll128_sm_archs: 2.20.3 stops at Hopper, 2.25.1 adds Blackwell)."""
    archs = {int(a) for a in perf.nccl.ll128_sm_archs.values}
    return gpu.vendor == "nvidia" and intra_class == "nvlink" and gpu.sm_arch in archs


# major.minor[.patch] as NCCL numbers its releases (makefiles/version.mk), or the package version NVIDIA's
# repositories give it (libnccl2 2.21.5-1+cuda12.4: the SFT004 rule's `<nccl>-1+cuda<X.Y>`)
_RELEASE = re.compile(
    r"(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})(\.(0|[1-9][0-9]{0,3}))?(-[1-9][0-9]{0,3}\+cuda[0-9]{1,3}\.[0-9]{1,3})?",
    re.ASCII,
)


def check_nccl_version(version: str) -> str:
    """A release as NCCL numbers it (2.21.5, or the package's 2.21.5-1+cuda12.4), else PerfError."""
    if _RELEASE.fullmatch(version.strip()) is None:
        shown = (
            f"`{version}`"
            if version.isascii() and version.isprintable() and len(version) <= 64
            else "(not printable)"
        )
        raise PerfError(
            f"NCCL version {shown} is not a release like 2.21.5 (or libnccl2's 2.21.5-1+cuda12.4)"
        )
    return version.strip()


def _modelled(given: str | None, pinned: str, perf: PerfData) -> str:
    """The run's release (``given``, --nccl-version, else the blueprint's ``pinned``) when the model predicts
    it (perf.yaml nccl.oldest_release on), else PerfError."""
    version = check_nccl_version(given) if given else pinned
    release = nccl_release(version)
    oldest = int(perf.nccl.oldest_release.value)
    if release is not None and release < oldest:
        where = "--nccl-version" if given else "software.nccl"
        raise PerfError(
            f"NCCL {version} ({where}) predates NCCL {oldest // 100}.{oldest % 100}, the oldest release the "
            f"model predicts ({perf.nccl.oldest_release.source})"
        )
    return version


def _introduced_notes(version: str, perf: PerfData) -> list[str]:
    """What the release predates of the model's algorithms and protocols (perf.yaml nccl.introduced_in)."""
    first = perf.nccl.introduced_in
    return [
        f"NCCL {version} predates {name} (NCCL {first[name].value // 100:g}.{first[name].value % 100:g}): "
        "not a candidate"
        for name in perf.nccl.predates(nccl_release(version))
    ]


def _unit_nodes(server: Server, nv_raw: float) -> int:
    """Nodes per NVLink domain as the run sees it: the server's span, or 1 with NVLink off."""
    return server.nodes_per_nvlink_domain if nv_raw > 0 else 1


def system_for(
    cluster: ResolvedCluster,
    plan: Plan | None = None,
    pool: str | None = None,
    *,
    nvlink: bool = True,
    nccl_version: str | None = None,
) -> System:
    """Phases: the pool, its NVLink side (``nvlink=False``: NCCL_P2P_DISABLE), network side, NCCL release."""
    perf = perf_data()
    version = _modelled(nccl_version, cluster.software.nccl, perf)
    rp = job_pool(cluster, pool)
    gpu = rp.gpu
    assert gpu is not None
    intra, intra_class, nv_raw, peer_share, notes = _node_side(rp, cluster, perf, nvlink)
    server, g, unit_nodes = rp.server, rp.server.gpus, _unit_nodes(rp.server, nv_raw)
    nvls = bool(gpu.nvls and nv_raw > 0 and (server.nvswitches > 0 or server.nvlink_domain_gpus > g))
    ll128 = _ll128(gpu, intra_class, perf.for_release(nccl_release(version)))
    nw = _network(cluster, plan, rp, perf)
    notes.extend(nw.notes)
    nccl_nics, nic_gb = _nccl_devices(nw, rp, perf, notes)
    multi_node_nvls = _multi_node_nvls(version, nccl_version is not None, perf, notes) if nvls else True
    notes.extend(_mnnvl_notes(cluster, nvls, unit_nodes, version, perf) + _tuner_notes(version, perf))
    return System(
        name=cluster.name,
        pool=rp.name,
        gpu_id=rp.gpu_id or "",
        gpu=gpu,
        gpus_per_node=g,
        pool_nodes=rp.count,
        sm_arch=gpu.sm_arch,
        unit_nodes=unit_nodes,
        intra=intra,
        intra_class=intra_class,
        nvlink_raw_gbytes=nv_raw,
        nvls=nvls,
        ll128=ll128,
        net=nw.net,
        net_kind=nw.kind,
        net_ports=nw.ports,
        net_line_gbps=nw.line_gbps,
        net_latency_us=nw.latency_us,
        sharp=ib_sharp(cluster),
        fabric=nw.fabric,
        sharp_share=_sharp_share(cluster, nw.ports, perf),
        technology=nw.technology,
        topology=nw.topology,
        mean_hops=nw.mean_hops,
        notes=tuple(notes),
        multi_node_nvls=multi_node_nvls,
        mnnvl_nvls=mnnvl_nvls(version, perf),
        nic_gbytes=nic_gb,
        nccl_nics=nccl_nics,
        nccl_version=version,
        tuner_net_latency_us=nw.plugin_latency_us,
        transport_settings=nw.settings,
        spread_shape=nw.spread_shape,
        intra_peer_share=peer_share,
        pat=_runs_pat(version, nw.technology, rp, perf),
    )


def _runs_pat(version: str, technology: str | None, pool: ResolvedPool, perf: PerfData) -> bool:
    """Whether NCCL can run PAT here (ncclPatEnable, perf.yaml nccl.pat): a release that has it, NVIDIA's NCCL
    (RCCL turns it off by default: rccl.pat_enabled_by_default), over NCCL's host network path (netDeviceType
    NCCL_NET_DEVICE_HOST): not over a net plugin that has the GPU unpack what it receives (nccl.net_plugins
    device_offload). One rank per node is the job's to say."""
    if perf.for_release(nccl_release(version)).nccl.pat.value != 1:
        return False
    if pool.gpu is not None and pool.gpu.vendor != "nvidia" and perf.rccl.pat_enabled_by_default.value != 1:
        return False
    plugin = perf.nccl.net_plugins.get(technology or "") if pool.cloud is not None else None
    return plugin is None or plugin.device_offload is None
