"""The resolved cluster every later stage reads: pools (servers, GPUs, NIC ports, host names), fabrics
(technology and switch models) and the software pins, all frozen."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from blueprints.catalog import Catalog
from blueprints.catalog.schema import CloudInstance, FabricTech, Gpu, Server, Switch
from blueprints.models import Blueprint, Fabric
from blueprints.models.software import Software
from blueprints.models.targets import is_provider
from generator.findings import Path
from generator.platform.ports import PortName

FABRIC_NAMES = ("compute", "storage", "management")


@dataclass(frozen=True)
class NicPort:
    """One cabled NIC port of a node."""

    purpose: str  # compute | storage | management
    index: int  # position among this node's ports of the same purpose (= rail for compute)
    rdma_dev: str  # mlx5_<n>
    port: int  # port number on that adapter (1 or 2)
    netdev: str  # ib<k> / eth<k>
    model: str  # NIC catalogue id
    speed_gbps: float
    pcie_gen: int
    pcie_lanes: int
    pcie_gbytes_per_dir: float
    cage: int | None  # twin-port cage number on the server, if any (1-based)
    cage_port: int | None  # 1 or 2 inside the cage
    # Names from the port map (generator/platform/ports.py). rdma_dev / netdev above are the real OS names
    # when *_known, else the plan's placeholder ids (never written into host configuration).
    faceplate: str | None = None  # chassis label (OSFP1P1) when published or declared
    role: str = ""  # port-map role: compute | storage | inband | bmc | frontend ("" = no map entry)
    rdma_known: bool = False
    netdev_known: bool = False
    names_source: str = ""  # where the names come from (catalogue entry + document, or blueprint path)
    label: str | None = None  # the site's name for the adapter (HCA-1, pools[].ports[].label): verification
    # and cable labels only; NCCL_IB_HCA and QoS use rdma_dev

    @property
    def has_rdma(self) -> bool:
        """False for plain Ethernet NICs (a management/BMC port is never an RDMA device)."""
        return self.rdma_dev != ""

    @property
    def plan_port(self) -> str:
        """The port id in the plan: ``mlx5_11/1`` for RDMA ports (a placeholder device when the name is
        not published), the faceplate / interface for plain Ethernet ports."""
        if self.has_rdma:
            return f"{self.rdma_dev}/{self.port}"
        return self.faceplate or self.netdev

    @property
    def os_netdev(self) -> str | None:
        """The interface name on the host, or None when neither published nor declared."""
        return self.netdev if self.netdev_known else None


@dataclass(frozen=True)
class ResolvedPool:
    """A node pool with its server, ports and host names looked up."""

    name: str
    role: str
    count: int
    server_id: str
    server: Server
    gpu_id: str | None
    gpu: Gpu | None
    nvlink_generation: int | None
    nvlink_gbytes_per_gpu_bidir: float  # article convention (0 without NVLink)
    nvlink_gbytes_per_gpu_dir: float
    ports: tuple[NicPort, ...]
    hostnames: tuple[str, ...]
    nodes_per_rack: int | None
    rows: tuple[int, ...] | None
    cloud: CloudInstance | None = None
    source_path: Path = ()
    extra_ports: tuple[PortName, ...] = ()  # named host ports that carry no fabric (cloud front-end NICs)

    @property
    def gpus_per_node(self) -> int:
        return self.server.gpus

    @property
    def gpu_memory_per_node_gb(self) -> float:
        return (self.gpu.memory_gb if self.gpu else 0.0) * self.server.gpus

    def ports_for(self, purpose: str) -> tuple[NicPort, ...]:
        return tuple(p for p in self.ports if p.purpose == purpose)

    @property
    def nvlink_domains(self) -> tuple[tuple[str, ...], ...]:
        """The hosts of each multi-node NVLink domain (a GB200 NVL72 rack's 18 trays), in name order; none
        where NVLink stays inside a server. The one grouping the Slurm blocks name and PWR007 holds the
        racks to."""
        per = self.server.nodes_per_nvlink_domain
        if per <= 1:
            return ()
        names = self.hostnames
        return tuple(names[i : i + per] for i in range(0, len(names), per))


@dataclass(frozen=True)
class ResolvedFabric:
    """A fabric with its technology, switch models and speed looked up."""

    name: str  # compute | storage | management
    technology: str
    tech: FabricTech
    spec: Fabric
    switch_id: str | None
    switch: Switch | None
    spine_switch_id: str | None
    spine_switch: Switch | None
    source_path: Path

    @property
    def kind(self) -> str:
        return self.tech.kind

    @property
    def speed_gbps(self) -> float:
        return self.tech.speed_gbps

    @property
    def topology_kind(self) -> str | None:
        return self.spec.topology.kind if self.spec.topology else None


@dataclass(frozen=True)
class ResolvedCluster:
    """The blueprint with every catalogue id resolved: what the rules, the plan and the emitters read."""

    blueprint: Blueprint
    catalog: Catalog
    pools: tuple[ResolvedPool, ...]
    fabrics: Mapping[str, ResolvedFabric]
    suppressed: Mapping[str, str] = field(default_factory=dict)
    source_file: str = "<blueprint>"
    sha256: str = ""
    pins: Software | None = None  # effective software pins (GPU-dependent defaults filled in)

    @property
    def software(self) -> Software:
        """The software pins to install: the blueprint's, with defaults that suit the GPUs."""
        return self.pins or self.blueprint.software

    @property
    def name(self) -> str:
        return self.blueprint.name

    @property
    def gpu_pools(self) -> tuple[ResolvedPool, ...]:
        return tuple(p for p in self.pools if p.server.gpus > 0)

    @property
    def node_count(self) -> int:
        return sum(p.count for p in self.pools)

    @property
    def gpu_node_count(self) -> int:
        return sum(p.count for p in self.gpu_pools)

    @property
    def gpu_count(self) -> int:
        return sum(p.count * p.server.gpus for p in self.pools)

    @property
    def target(self) -> str:
        return self.blueprint.deployment.target

    @property
    def is_cloud(self) -> bool:
        return is_provider(self.target)  # blueprints/models/targets.yaml: the one list of targets

    @property
    def routed_fabrics(self) -> tuple[str, ...]:
        """Ethernet/RoCE compute and storage fabrics with switches: the ones build/switches/ configures and
        ``switch_os`` applies to (the management network stays layer 2; a cloud has no switches of ours)."""
        if self.is_cloud:
            return ()
        return tuple(
            sorted(
                name
                for name, f in self.fabrics.items()
                if f.kind in ("ethernet", "roce")
                and name != "management"
                and f.spec.topology is not None
                # a direct torus/hypercube has no switches (the nodes are the vertices): nothing to configure
                and getattr(f.spec.topology, "attach", "switch") != "direct"
            )
        )

    def pools_on(self, fabric: str) -> tuple[ResolvedPool, ...]:
        """Pools with at least one port on ``fabric``."""
        return tuple(p for p in self.pools if p.ports_for(fabric))
