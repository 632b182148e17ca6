"""Defaults and catalogue look-ups → one immutable ResolvedCluster that every later stage reads.

Naming scheme (docs/blueprint.md, docs/ports.md): hosts are ``<prefix><NNN>`` numbered from 1 per
pool; compute port *k* of a node carries rail *k*. Port names (RDMA device, interface, faceplate) come
from the platform's port map or the pool's declared ``ports`` (generator/platform/ports.py); where none
is published the plan keeps placeholder ids (``mlx5_<n>``, ``ib<k>``/``eth<k>``, ``nic<n>`` on mapped
servers) that are flagged unknown and never written into host configuration.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path as FsPath
from typing import NamedTuple

from blueprints.catalog import Catalog, CatalogError, default_catalog
from blueprints.catalog.schema import CloudInstance, FabricTech, Gpu, Nic, Server, ServerNic, Switch
from blueprints.models import Blueprint, Fabric, NodePool
from blueprints.models.naming import is_safe_name, render_template, template_fields
from blueprints.models.nodes import PcieSlot, ServerSpec
from blueprints.models.software import Software
from blueprints.models.topology import Dragonfly, Hypercube, Torus
from generator.findings import BlueprintError, Finding, Location, Path, Severity
from generator.limits import IDLE_FACTOR, IDLE_FLOOR, MAX_NODES, MAX_SWITCHES
from generator.load import LoadedBlueprint
from generator.platform.ports import PortName, port_names

CLOUD_PROVIDERS = ("aws", "azure", "gcp", "oci")
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


@dataclass(frozen=True)
class ResolvedFabric:
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
        return self.target in CLOUD_PROVIDERS

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


def _server_from_spec(spec: ServerSpec) -> Server:
    return Server(
        name="custom server",
        gpu=spec.gpu,
        gpus=spec.gpus,
        gpu_interconnect=spec.gpu_interconnect,
        nvswitches=spec.nvswitches,
        nvlink_domain_gpus=spec.nvlink_domain_gpus
        if spec.nvlink_domain_gpus is not None
        else (spec.gpus if spec.gpu_interconnect.startswith("nvlink") else 1),
        pcie_gen=spec.pcie_gen,
        power_kw=spec.power_kw,
        rack_units=spec.rack_units,
        nics=tuple(
            ServerNic(
                purpose=n.purpose,
                model=n.model,
                count=n.count,
                ports=n.ports,
                speed_gbps=n.speed_gbps,
                cage_ports=n.cage_ports,
            )
            for n in spec.nics
        ),
    )


def _server_from_cloud(inst: CloudInstance) -> Server:
    return Server(
        name="cloud instance",
        gpu=inst.gpu,
        gpus=inst.gpus,
        gpu_interconnect=inst.gpu_interconnect,
        nvswitches=inst.nvswitches,
        nvlink_domain_gpus=inst.gpus,
        pcie_gen=5,
        power_kw=0.0,  # the provider's racks, not the blueprint's: nothing to place or budget
        rack_units=1,
        nics=(
            ServerNic(purpose="compute", model="cloud", count=inst.network_cards, speed_gbps=inst.nic_gbps),
        ),
    )


def _hostnames(pool: NodePool, su_size: int | None = None) -> tuple[str, ...]:
    """Explicit names, names from the pool's template, or ``<prefix><NNN>``."""
    if pool.hostnames is not None:
        return tuple(pool.hostnames)
    if pool.hostname_template is not None:
        per_rack = pool.placement.nodes_per_rack
        out = []
        for i in range(1, pool.count + 1):
            values: dict[str, object] = {"pool": pool.name, "index": i}
            if su_size:
                values.update(su=(i - 1) // su_size + 1, su_index=(i - 1) % su_size + 1)
            if per_rack:
                values.update(rack=(i - 1) // per_rack + 1, slot=(i - 1) % per_rack + 1)
            out.append(render_template(pool.hostname_template, values))
        return tuple(out)
    prefix = pool.hostname_prefix or pool.name
    width = max(3, len(str(pool.count)))
    return tuple(f"{prefix}{i:0{width}d}" for i in range(1, pool.count + 1))


def _netdev(purpose: str, idx: int, fabric_kind: str, counters: dict[str, int]) -> str:
    """A plan id: ``mgmt<idx>`` for management (its OS name is unknown without a port map), else the
    next ``ib<k>`` (InfiniBand) or ``eth<k>`` (Ethernet)."""
    if purpose == "management":
        return f"mgmt{idx}"
    family = "ib" if fabric_kind == "infiniband" else "eth"
    name = f"{family}{counters[family]}"
    counters[family] += 1
    return name


def _named(port: NicPort, name: PortName | None, link: str, mapped: bool = False) -> NicPort:
    """``port`` with the published/declared names of ``name`` (unknown names keep the placeholder ids).

    ``mapped``: the server has a port map (catalogue or declared ports), so a port it does not list must
    not keep an ``mlx5_<n>`` placeholder that may be another port's real device name."""
    if name is None:
        if mapped and port.has_rdma:
            return replace(port, rdma_dev=port.rdma_dev.replace("mlx5_", "nic"))
        return port
    cage, cage_port = port.cage, port.cage_port
    # an interface name published for the other link layer (IPoIB vs Ethernet) is not this port's name
    netdev = name.netdev_for(link)
    if name.cage is not None and name.cage_port is not None:
        cage, cage_port = name.cage, name.cage_port
    return replace(
        port,
        # On a mapped server an unpublished device gets `nic<n>`, so it can never collide with (or pass
        # for) another port's real `mlx5_<n>`.
        rdma_dev=(name.rdma or port.rdma_dev.replace("mlx5_", "nic")) if port.has_rdma else "",
        netdev=netdev or port.netdev,
        cage=cage,
        cage_port=cage_port,
        faceplate=name.faceplate,
        role=name.role,
        rdma_known=bool(name.rdma) and port.has_rdma,
        netdev_known=bool(netdev),
        names_source=name.source,
        label=name.label,
    )


class _PcieLink(NamedTuple):
    gen: int
    lanes: int
    gbytes_per_dir: float


def _pcie_link(server: Server, nic: Nic | None, slot: PcieSlot | None, catalog: Catalog) -> _PcieLink:
    """The declared slot, else the NIC's own link capped by the server's PCIe generation."""
    gen = slot.gen if slot else (min(nic.pcie.gen, server.pcie_gen) if nic else server.pcie_gen)
    lanes = slot.lanes if slot else (nic.pcie.lanes if nic else 16)
    pcie = catalog.interconnects.pcie.get(gen)
    return _PcieLink(gen, lanes, pcie.gbytes_per_dir(lanes) if pcie else 0.0)


def _template_errors(pool: NodePool, su_size: int | None, path: tuple[str | int, ...]) -> list[Finding]:
    """Fields a host template uses that this blueprint cannot fill, as located errors."""
    if pool.hostname_template is None:
        return []
    need = {"su": su_size, "su_index": su_size, "rack": pool.placement.nodes_per_rack}
    need["slot"] = need["rack"]
    missing = [f for f in template_fields(pool.hostname_template) if f in need and not need[f]]
    bad = [n for n in dict.fromkeys(_hostnames(pool, su_size) if not missing else ()) if not is_safe_name(n)]
    out = []
    if missing:
        what = "placement.nodes_per_rack" if {"rack", "slot"} & set(missing) else "a compute scalable_unit"
        out.append(
            Finding(
                "CAT003",
                Severity.ERROR,
                f"hostname_template `{pool.hostname_template}` uses {', '.join(missing)}, which needs {what}",
                (*path, "hostname_template"),
                "declare it, or use explicit `hostnames`",
            )
        )
    elif bad or len(set(_hostnames(pool, su_size))) != pool.count:
        out.append(
            Finding(
                "CAT003",
                Severity.ERROR,
                f"hostname_template `{pool.hostname_template}` gives "
                + (f"an invalid name `{bad[0]}`" if bad else "the same name to two nodes"),
                (*path, "hostname_template"),
                "add {index} with a width that holds the pool's count",
            )
        )
    return out


_PURPOSE_ORDER = {"compute": 0, "storage": 1, "management": 2}


class _NicEntry(NamedTuple):
    nic_index: int  # position in the server's NIC list (the finding path names it)
    nic: ServerNic


@dataclass
class _PortNumbering:
    """The counters that run across all of a node's NICs: RDMA devices, interfaces, per-purpose index."""

    rdma: int = 0
    net: dict[str, int] = field(default_factory=lambda: {"ib": 0, "eth": 1})
    per_purpose: dict[str, int] = field(default_factory=dict)

    def next_rdma_dev(self, is_rdma: bool) -> str:
        """``mlx5_<n>`` for an RDMA adapter, "" for a plain Ethernet one (which takes no number)."""
        if not is_rdma:
            return ""
        self.rdma += 1
        return f"mlx5_{self.rdma - 1}"

    def next_index(self, purpose: str) -> int:
        idx = self.per_purpose.get(purpose, 0)
        self.per_purpose[purpose] = idx + 1
        return idx


class _NicFacts(NamedTuple):
    """What every port of one server NIC entry shares."""

    snic: ServerNic
    link: _PcieLink
    fabric_kind: str
    is_rdma: bool
    listed: list[PortName]  # port-map names of this purpose, by index
    mapped: bool  # the server has a port map: an unlisted port keeps no mlx5_<n> placeholder


class _Cage(NamedTuple):
    cage: int | None  # 1-based, None when the NIC has no twin-port cages
    port: int | None


def _cage(snic: ServerNic, position: int) -> _Cage:
    """Twin-port cages hold ports 2 by 2 in order (``position``: the port's 0-based place in the entry)."""
    if snic.cage_ports != 2:
        return _Cage(None, None)
    return _Cage(position // 2 + 1, position % 2 + 1)


def _nics_by_purpose(server: Server) -> list[_NicEntry]:
    entries = [_NicEntry(i, snic) for i, snic in enumerate(server.nics)]
    return sorted(entries, key=lambda e: (_PURPOSE_ORDER[e.nic.purpose], e.nic_index))


def _catalog_nic(snic: ServerNic, catalog: Catalog) -> Nic | None:
    """The catalogue NIC (None for a cloud instance's NIC); raises CatalogError for an unknown model."""
    return None if snic.model == "cloud" else catalog.nic(snic.model)


def _nic_facts(
    server: Server,
    pool_spec: NodePool,
    entry: _NicEntry,
    nic: Nic | None,
    catalog: Catalog,
    fabric_kinds: Mapping[str, str],
    names: Mapping[str, list[PortName]] | None,
) -> _NicFacts:
    snic = entry.nic
    spec_nics = pool_spec.spec.nics if pool_spec.spec else None
    slot = spec_nics[entry.nic_index].pcie if spec_nics and spec_nics[entry.nic_index].pcie else None
    # A plain Ethernet adapter (the management / BMC NIC) has no RDMA device at all.
    is_rdma = nic is None or any(p in ("infiniband", "roce") for p in nic.protocols)
    return _NicFacts(
        snic,
        _pcie_link(server, nic, slot, catalog),
        fabric_kinds.get(snic.purpose, "ethernet"),
        is_rdma,
        (names or {}).get(snic.purpose, []),
        any(n.rdma for role in (names or {}).values() for n in role),
    )


def _nic_ports(facts: _NicFacts, numbering: _PortNumbering) -> list[NicPort]:
    """The ports of every adapter of one server NIC entry, named from the port map where it has them."""
    snic, link = facts.snic, facts.link
    link_layer = "infiniband" if facts.fabric_kind == "infiniband" else "ethernet"
    out: list[NicPort] = []
    # A port map that names its own RDMA device per port (one PCI function each, as DGX Table 5 lists
    # the dual-port cards) puts that port at port 1 of its device; a device named twice counts up.
    uses: dict[str, int] = {}
    for copy in range(snic.count):
        dev = numbering.next_rdma_dev(facts.is_rdma)
        for port_no in range(1, snic.ports + 1):
            idx = numbering.next_index(snic.purpose)
            netdev = _netdev(snic.purpose, idx, facts.fabric_kind, numbering.net)
            cage = _cage(snic, copy * snic.ports + port_no - 1)
            port = NicPort(
                snic.purpose,
                idx,
                dev,
                port_no,
                netdev,
                snic.model,
                snic.speed_gbps,
                link.gen,
                link.lanes,
                link.gbytes_per_dir,
                cage.cage,
                cage.port,
            )
            listed = facts.listed[idx] if idx < len(facts.listed) else None
            named = _named(port, listed, link_layer, facts.mapped)
            if named.rdma_known:
                uses[named.rdma_dev] = uses.get(named.rdma_dev, 0) + 1
                named = replace(named, port=uses[named.rdma_dev])
            out.append(named)
    return out


def _ports(
    server: Server,
    pool_spec: NodePool,
    catalog: Catalog,
    fabric_kinds: Mapping[str, str],
    errors: list[Finding],
    base: Path,
    names: Mapping[str, list[PortName]] | None = None,
) -> tuple[NicPort, ...]:
    """The node's cabled ports; placeholder ids (``mlx5_<n>``, ``ib<k>``) where no name is published."""
    ports: list[NicPort] = []
    numbering = _PortNumbering()
    for entry in _nics_by_purpose(server):
        try:
            nic = _catalog_nic(entry.nic, catalog)
        except CatalogError as exc:
            where = (*base, "nics", entry.nic_index, "model")
            errors.append(Finding("CAT001", Severity.ERROR, exc.message, where, exc.hint))
            continue
        facts = _nic_facts(server, pool_spec, entry, nic, catalog, fabric_kinds, names)
        ports.extend(_nic_ports(facts, numbering))
    return tuple(ports)


def _extra_ports(names: Mapping[str, list[PortName]], ports: tuple[NicPort, ...]) -> tuple[PortName, ...]:
    """Named ports no cabled NIC port took (cloud front-end NICs, in-band ports of an unused fabric)."""
    used = {p.names_source for p in ports if p.names_source}
    seen: set[str] = set()
    out: list[PortName] = []
    for name in (n for role in names.values() for n in role):
        if name.source not in used and name.source not in seen:
            seen.add(name.source)
            out.append(name)
    return tuple(out)


def _refuse_too_many_nodes(bp: Blueprint, loaded: LoadedBlueprint | Blueprint) -> None:
    """Before any per-node work (host names, ports): the node count is within the documented limit."""
    total = sum(p.count for p in bp.pools)
    if total <= MAX_NODES:
        return
    biggest = max(range(len(bp.pools)), key=lambda i: bp.pools[i].count)
    finding = Finding(
        "PLN001",
        Severity.ERROR,
        f"{total:,} nodes exceed the limit of {MAX_NODES:,} (see docs/architecture.md)",
        ("pools", biggest, "count"),
        "split the design into several blueprints",
    )
    raise BlueprintError([loaded.locate(finding) if isinstance(loaded, LoadedBlueprint) else finding])


class _Budget(NamedTuple):
    what: str  # "routers" or "vertices"
    built: int  # what the topology parameters build (closed form)
    need: int  # what the fabric's nodes need
    key: str  # the topology key that sets the size


def _budget(fab: ResolvedFabric, nodes: int, ports: int) -> _Budget | None:
    """The size a fabric's parameters ask for against what its nodes need, in closed form, per kind."""
    t = fab.spec.topology
    if isinstance(t, Dragonfly):  # g·a routers; each takes p node ports
        return _Budget("routers", t.groups * t.a, -(-ports // t.p), "groups")
    if isinstance(t, Torus | Hypercube):  # ∏k or 2^n vertices: nodes, or switches of nodes_per_switch
        vertices = math.prod(t.dimensions) if isinstance(t, Torus) else 2**t.dimension
        per = t.nodes_per_switch if t.attach == "switch" else 1
        return _Budget(
            "vertices", vertices, -(-nodes // per), "dimensions" if isinstance(t, Torus) else "dimension"
        )
    return None


def _size_budget_errors(fabrics: Mapping[str, ResolvedFabric], pools: list[ResolvedPool]) -> list[Finding]:
    """Before anything is built: no fabric builds far more than its nodes need (generator/limits.py)."""
    out: list[Finding] = []
    for fab in fabrics.values():
        on = [p for p in pools if p.ports_for(fab.name)]
        nodes = sum(p.count for p in on)
        b = _budget(fab, nodes, sum(p.count * len(p.ports_for(fab.name)) for p in on))
        # above MAX_SWITCHES the planner's absolute limits refuse it (generator/plan/size.py)
        if b is None or b.built <= max(IDLE_FLOOR, IDLE_FACTOR * b.need) or b.built > MAX_SWITCHES:
            continue
        out.append(
            Finding(
                "PLN001",
                Severity.ERROR,
                f"the {fab.name} {fab.topology_kind} would build {b.built:,} {b.what} for {nodes:,} nodes "
                f"that need {b.need:,}; at most max({IDLE_FLOOR:,}, {IDLE_FACTOR} × {b.need:,}) are built "
                "(docs/architecture.md, Limits)",
                (*fab.source_path, "topology", b.key),
                "size the topology for the nodes the blueprint declares",
            )
        )
    return out


class _Source(NamedTuple):
    blueprint: Blueprint
    file: str
    sha256: str
    base_dir: FsPath  # relative catalogue extensions are found from here


def _source(loaded: LoadedBlueprint | Blueprint) -> _Source:
    if isinstance(loaded, LoadedBlueprint):
        return _Source(loaded.blueprint, str(loaded.path), loaded.sha256, loaded.path.parent)
    return _Source(loaded, "<blueprint>", "", FsPath("."))


def _catalog(src: _Source, catalog: Catalog | None, errors: list[Finding]) -> Catalog:
    """The built-in (or given) catalogue, extended by the blueprint's own catalogue file if it names one."""
    cat = catalog or default_catalog()
    if src.blueprint.catalog:
        try:
            return cat.extended(src.base_dir / src.blueprint.catalog)
        except CatalogError as exc:
            at = Location(exc.source, exc.line, exc.column or 1) if exc.source and exc.line else None
            errors.append(Finding("CAT002", Severity.ERROR, exc.message, ("catalog",), exc.hint, at))
    return cat


def _switch(cat: Catalog, sid: str | None, where: Path, errors: list[Finding]) -> Switch | None:
    if sid is None:
        return None
    try:
        return cat.switch(sid)
    except CatalogError as exc:
        errors.append(Finding("CAT001", Severity.ERROR, exc.message, where, exc.hint))
        return None


def _fabric(fname: str, spec: Fabric, cat: Catalog, errors: list[Finding]) -> ResolvedFabric | None:
    path: Path = ("fabrics", fname)
    tech = cat.fabrics.get(spec.technology)
    if tech is None:
        message = f"fabric technology `{spec.technology}` is not in the catalogue"
        errors.append(Finding("CAT001", Severity.ERROR, message, (*path, "technology")))
        return None
    switch_id = getattr(spec.topology, "switch", None) if spec.topology else None
    spine_id = getattr(spec.topology, "spine_switch", None) if spec.topology else None
    switch = _switch(cat, switch_id, (*path, "topology", "switch"), errors)
    spine = _switch(cat, spine_id, (*path, "topology", "spine_switch"), errors)
    return ResolvedFabric(
        fname, spec.technology, tech, spec, switch_id, switch, spine_id or switch_id, spine or switch, path
    )


def _fabrics(bp: Blueprint, cat: Catalog, errors: list[Finding]) -> dict[str, ResolvedFabric]:
    fabrics: dict[str, ResolvedFabric] = {}
    for fname in FABRIC_NAMES:
        spec: Fabric | None = getattr(bp.fabrics, fname)
        resolved = _fabric(fname, spec, cat, errors) if spec is not None else None
        if resolved is not None:
            fabrics[fname] = resolved
    return fabrics


class _PoolServer(NamedTuple):
    server: Server
    cloud: CloudInstance | None  # the cloud instance type the server was made from
    path: Path  # where the server's NICs, GPU and interconnect are declared (spec or server)


def _pool_server(pool: NodePool, ppath: Path, cat: Catalog, errors: list[Finding]) -> _PoolServer | None:
    """The pool's server: an explicit spec, a cloud instance type (``aws/p5.48xlarge``) or a catalogue id."""
    if pool.spec is not None:
        return _PoolServer(_server_from_spec(pool.spec), None, (*ppath, "spec"))
    assert pool.server is not None  # the model requires one of server / spec
    try:
        if "/" in pool.server:
            provider, _, itype = pool.server.partition("/")
            inst = cat.cloud_instance(provider, itype)
            return _PoolServer(_server_from_cloud(inst), inst, (*ppath, "server"))
        return _PoolServer(cat.server(pool.server), None, (*ppath, "server"))
    except CatalogError as exc:
        errors.append(Finding("CAT001", Severity.ERROR, exc.message, (*ppath, "server"), exc.hint))
        return None


class _Nvlink(NamedTuple):
    generation: int | None
    gbytes_bidir: float  # per GPU, article convention (0 without NVLink)


def _nvlink(srv: _PoolServer, gpu: Gpu | None, cat: Catalog, errors: list[Finding]) -> _Nvlink | None:
    """NVLink generation and per-GPU bandwidth; None (with a finding) for a generation not catalogued."""
    ic = srv.server.gpu_interconnect
    nv_gen = int(ic[6:]) if ic.startswith("nvlink") else None
    if nv_gen is None or gpu is None:
        return _Nvlink(nv_gen, 0.0)
    gen = cat.interconnects.nvlink.get(nv_gen)
    if gen is None:
        message = f"NVLink generation {nv_gen} is not in the catalogue"
        errors.append(Finding("CAT001", Severity.ERROR, message, (*srv.path, "gpu_interconnect")))
        return None
    links = gpu.nvlink.links if gpu.nvlink else 0
    return _Nvlink(nv_gen, links * gen.link_gbytes_bidir)


def _pool(
    i: int,
    pool: NodePool,
    cat: Catalog,
    fabric_kinds: Mapping[str, str],
    su_size: int | None,
    errors: list[Finding],
) -> ResolvedPool | None:
    ppath: Path = ("pools", i)
    srv = _pool_server(pool, ppath, cat, errors)
    if srv is None:
        return None
    server = srv.server
    gpu = None
    if server.gpu:
        try:
            gpu = cat.gpu(server.gpu)
        except CatalogError as exc:
            errors.append(Finding("CAT001", Severity.ERROR, exc.message, (*srv.path, "gpu"), exc.hint))
            return None
    nvlink = _nvlink(srv, gpu, cat, errors)
    if nvlink is None:
        return None
    names = port_names(cat, pool.server or "custom", pool, i)
    ports = _ports(server, pool, cat, fabric_kinds, errors, srv.path, names)
    name_errors = _template_errors(pool, su_size, ppath)
    if name_errors:
        errors.extend(name_errors)
        return None
    return ResolvedPool(
        name=pool.name,
        role=pool.role,
        count=pool.count,
        server_id=pool.server or "custom",
        server=server,
        gpu_id=server.gpu,
        gpu=gpu,
        nvlink_generation=nvlink.generation,
        nvlink_gbytes_per_gpu_bidir=nvlink.gbytes_bidir,
        nvlink_gbytes_per_gpu_dir=nvlink.gbytes_bidir / 2,
        ports=ports,
        hostnames=_hostnames(pool, su_size),
        nodes_per_rack=pool.placement.nodes_per_rack,
        rows=tuple(pool.placement.rows) if pool.placement.rows is not None else None,
        cloud=srv.cloud,
        source_path=ppath,
        extra_ports=_extra_ports(names, ports),
    )


def _duplicate_hostnames(pools: list[ResolvedPool]) -> list[Finding]:
    """One finding per pool whose names collide with an earlier pool's (the first collision)."""
    out: list[Finding] = []
    owner: dict[str, str] = {}
    for pool in pools:
        for h in pool.hostnames:
            if h in owner:
                out.append(
                    Finding(
                        "CAT003",
                        Severity.ERROR,
                        f"hostname `{h}` of pool `{pool.name}` is also produced by pool `{owner[h]}`",
                        (*pool.source_path, "hostname_prefix"),
                        "give the pools distinct hostname_prefix values",
                    )
                )
                break
            owner[h] = pool.name
    return out


def resolve(loaded: LoadedBlueprint | Blueprint, catalog: Catalog | None = None) -> ResolvedCluster:
    """Resolve defaults and catalogue references; raises BlueprintError with located findings."""
    src = _source(loaded)
    bp = src.blueprint
    errors: list[Finding] = []
    _refuse_too_many_nodes(bp, loaded)
    cat = _catalog(src, catalog, errors)
    fabrics = _fabrics(bp, cat, errors)
    fabric_kinds = {n: f.kind for n, f in fabrics.items()}
    compute_topo = bp.fabrics.compute.topology if bp.fabrics.compute else None
    su_size = getattr(compute_topo, "scalable_unit", None)
    resolved = [_pool(i, pool, cat, fabric_kinds, su_size, errors) for i, pool in enumerate(bp.pools)]
    pools = [p for p in resolved if p is not None]
    errors += _duplicate_hostnames(pools)
    errors += _size_budget_errors(fabrics, pools) if not errors else []
    if errors:
        if isinstance(loaded, LoadedBlueprint):
            errors = [e if e.location else loaded.locate(e) for e in errors]  # catalogue errors keep theirs
        raise BlueprintError(errors)
    suppressed = {s.rule: s.reason for s in bp.suppress}
    pins = default_pins(bp.software, cat, [p.gpu.sm_arch for p in pools if p.gpu is not None])
    return ResolvedCluster(bp, cat, tuple(pools), fabrics, suppressed, src.file, src.sha256, pins)


def default_pins(software: Software, catalog: Catalog, sm_archs: list[int]) -> Software:
    """``software`` with the driver branch / CUDA the blueprint left out raised to what its GPUs need.

    A Blackwell blueprint without ``software:`` gets the architecture's default pins (R570 / CUDA 12.8 and
    an NCCL built for CUDA 12.8, data/software.yaml) instead of the model's 550 / 12.4 / NCCL 2.21.5, which
    cannot drive the GPU. Values the user wrote are kept as written (rules SFT001 and SFT004 judge them).
    """
    if catalog.software is None:
        return software
    update: dict[str, str] = {}
    for sm in sorted(set(sm_archs)):
        found = catalog.software.arch_of(sm)
        if found is None:
            continue
        for field_name, default in (
            ("driver_branch", found[1].default_driver_branch),
            ("cuda", found[1].default_cuda),
            ("nccl", found[1].default_nccl),
        ):
            current = update.get(field_name, getattr(software, field_name))
            given = field_name in software.model_fields_set
            if default and not given and version_key(default) > version_key(current):
                update[field_name] = default
    return software.model_copy(update=update) if update else software


def version_key(text: str) -> tuple[int, ...]:
    """``12.8`` → (12, 8); non-numeric parts count as 0 (a comparison key, not a parser)."""
    return tuple(int(p) if p.isdigit() else 0 for p in text.replace("-", ".").split("."))
