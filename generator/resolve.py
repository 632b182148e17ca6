"""Defaults and catalogue look-ups → one immutable ResolvedCluster that every later stage reads.

Naming scheme (documented in README): hosts are ``<prefix><NNN>`` numbered from 1 per pool; compute
NIC *i* of a node is RDMA device ``mlx5_<i>`` (rail *i*), storage NICs follow, then management.
Network interfaces are ``ib<k>`` on InfiniBand fabrics and ``eth<k>`` on Ethernet (eth0 = management).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path as FsPath

from blueprints.catalog import Catalog, CatalogError, default_catalog
from blueprints.catalog.schema import CloudInstance, FabricTech, Gpu, Nic, Server, ServerNic, Switch
from blueprints.models import Blueprint, Fabric, NodePool
from blueprints.models.nodes import ServerSpec
from blueprints.models.software import Software
from generator.findings import BlueprintError, Finding, Path, Severity
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


def _hostnames(pool: NodePool) -> tuple[str, ...]:
    prefix = pool.hostname_prefix or pool.name
    width = max(3, len(str(pool.count)))
    return tuple(f"{prefix}{i:0{width}d}" for i in range(1, pool.count + 1))


def _nic_or_error(
    snic: ServerNic, catalog: Catalog, errors: list[Finding], path: Path
) -> tuple[bool, Nic | None]:
    """(ok, catalogue NIC); cloud NICs have no catalogue entry."""
    if snic.model == "cloud":
        return True, None
    try:
        return True, catalog.nic(snic.model)
    except CatalogError as exc:
        errors.append(Finding("CAT001", Severity.ERROR, exc.message, path, exc.hint))
        return False, None


def _named(port: NicPort, name: PortName | None, link: str) -> NicPort:
    """``port`` with the published/declared names of ``name`` (unknown names keep the placeholder ids)."""
    if name is None:
        return port
    cage, cage_port = port.cage, port.cage_port
    # an interface name published for the other link layer (IPoIB vs Ethernet) is not this port's name
    netdev = name.netdev if name.netdev_link in (None, link) else None
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
    )


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
    rdma = 0
    net_counters = {"ib": 0, "eth": 1}
    per_purpose: dict[str, int] = {}
    spec_nics = pool_spec.spec.nics if pool_spec.spec else None
    order = {"compute": 0, "storage": 1, "management": 2}
    indexed = sorted(enumerate(server.nics), key=lambda t: (order[t[1].purpose], t[0]))
    for nic_index, snic in indexed:
        ok, nic = _nic_or_error(snic, catalog, errors, (*base, "nics", nic_index, "model"))
        if not ok:
            continue
        slot = spec_nics[nic_index].pcie if spec_nics and spec_nics[nic_index].pcie else None
        gen = slot.gen if slot else (min(nic.pcie.gen, server.pcie_gen) if nic else server.pcie_gen)
        lanes = slot.lanes if slot else (nic.pcie.lanes if nic else 16)
        pcie = catalog.interconnects.pcie.get(gen)
        gbytes = pcie.gbytes_per_dir(lanes) if pcie else 0.0
        fabric_kind = fabric_kinds.get(snic.purpose, "ethernet")
        # A plain Ethernet adapter (the management / BMC NIC) has no RDMA device at all.
        is_rdma = nic is None or any(p in ("infiniband", "roce") for p in nic.protocols)
        cage_counter = 0
        for _ in range(snic.count):
            dev = f"mlx5_{rdma}" if is_rdma else ""
            rdma += 1 if is_rdma else 0
            for port_no in range(1, snic.ports + 1):
                idx = per_purpose.get(snic.purpose, 0)
                per_purpose[snic.purpose] = idx + 1
                if snic.purpose == "management":
                    netdev = f"mgmt{idx}"  # a plan id only: the OS name is unknown without a port map
                elif fabric_kind == "infiniband":
                    netdev = f"ib{net_counters['ib']}"
                    net_counters["ib"] += 1
                else:
                    netdev = f"eth{net_counters['eth']}"
                    net_counters["eth"] += 1
                cage = cage_port = None
                if snic.cage_ports == 2:
                    cage = cage_counter // 2 + 1
                    cage_port = cage_counter % 2 + 1
                    cage_counter += 1
                port = NicPort(
                    snic.purpose, idx, dev, port_no, netdev, snic.model, snic.speed_gbps, gen, lanes, gbytes,
                    cage, cage_port,
                )  # fmt: skip
                listed = (names or {}).get(snic.purpose, [])
                link = "infiniband" if fabric_kind == "infiniband" else "ethernet"
                ports.append(_named(port, listed[idx] if idx < len(listed) else None, link))
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


def resolve(loaded: LoadedBlueprint | Blueprint, catalog: Catalog | None = None) -> ResolvedCluster:
    """Resolve defaults and catalogue references; raises BlueprintError with located findings."""
    if isinstance(loaded, LoadedBlueprint):
        bp, source_file, sha = loaded.blueprint, str(loaded.path), loaded.sha256
        base_dir = loaded.path.parent
    else:
        bp, source_file, sha, base_dir = loaded, "<blueprint>", "", FsPath(".")
    errors: list[Finding] = []
    cat = catalog or default_catalog()
    if bp.catalog:
        try:
            cat = cat.extended(base_dir / bp.catalog)
        except CatalogError as exc:
            errors.append(Finding("CAT002", Severity.ERROR, exc.message, ("catalog",), exc.hint))

    fabrics: dict[str, ResolvedFabric] = {}
    for fname in FABRIC_NAMES:
        spec: Fabric | None = getattr(bp.fabrics, fname)
        if spec is None:
            continue
        path: Path = ("fabrics", fname)
        tech = cat.fabrics.get(spec.technology)
        if tech is None:
            errors.append(
                Finding(
                    "CAT001",
                    Severity.ERROR,
                    f"fabric technology `{spec.technology}` is not in the catalogue",
                    (*path, "technology"),
                )
            )
            continue
        switch_id = getattr(spec.topology, "switch", None) if spec.topology else None
        spine_id = getattr(spec.topology, "spine_switch", None) if spec.topology else None
        switch = spine = None
        for sid, tpath, attr in ((switch_id, "switch", "switch"), (spine_id, "spine_switch", "spine")):
            if sid is None:
                continue
            try:
                sw = cat.switch(sid)
            except CatalogError as exc:
                errors.append(
                    Finding("CAT001", Severity.ERROR, exc.message, (*path, "topology", tpath), exc.hint)
                )
                continue
            if attr == "switch":
                switch = sw
            else:
                spine = sw
        fabrics[fname] = ResolvedFabric(
            fname,
            spec.technology,
            tech,
            spec,
            switch_id,
            switch,
            spine_id or switch_id,
            spine or switch,
            path,
        )
    fabric_kinds = {n: f.kind for n, f in fabrics.items()}

    pools: list[ResolvedPool] = []
    for i, pool in enumerate(bp.pools):
        ppath: Path = ("pools", i)
        cloud_inst: CloudInstance | None = None
        server: Server | None = None
        server_id = pool.server or "custom"
        if pool.spec is not None:
            server = _server_from_spec(pool.spec)
            nic_base: Path = (*ppath, "spec")
        else:
            nic_base = (*ppath, "server")
            assert pool.server is not None
            if "/" in pool.server:
                provider, _, itype = pool.server.partition("/")
                try:
                    cloud_inst = cat.cloud_instance(provider, itype)
                    server = _server_from_cloud(cloud_inst)
                except CatalogError as exc:
                    errors.append(
                        Finding("CAT001", Severity.ERROR, exc.message, (*ppath, "server"), exc.hint)
                    )
            else:
                try:
                    server = cat.server(pool.server)
                except CatalogError as exc:
                    errors.append(
                        Finding("CAT001", Severity.ERROR, exc.message, (*ppath, "server"), exc.hint)
                    )
        if server is None:
            continue
        gpu = None
        if server.gpu:
            try:
                gpu = cat.gpu(server.gpu)
            except CatalogError as exc:
                errors.append(Finding("CAT001", Severity.ERROR, exc.message, (*nic_base, "gpu"), exc.hint))
                continue
        nv_gen = int(server.gpu_interconnect[6:]) if server.gpu_interconnect.startswith("nvlink") else None
        nv_bidir = nv_dir = 0.0
        if nv_gen is not None and gpu is not None:
            gen = cat.interconnects.nvlink.get(nv_gen)
            if gen is None:
                errors.append(
                    Finding(
                        "CAT001",
                        Severity.ERROR,
                        f"NVLink generation {nv_gen} is not in the catalogue",
                        (*nic_base, "gpu_interconnect"),
                    )
                )
                continue
            links = gpu.nvlink.links if gpu.nvlink else 0
            nv_bidir = links * gen.link_gbytes_bidir
            nv_dir = nv_bidir / 2
        names = port_names(cat, server_id, pool, i)
        ports = _ports(server, pool, cat, fabric_kinds, errors, nic_base, names)
        extra = _extra_ports(names, ports)
        pools.append(
            ResolvedPool(
                name=pool.name,
                role=pool.role,
                count=pool.count,
                server_id=server_id,
                server=server,
                gpu_id=server.gpu,
                gpu=gpu,
                nvlink_generation=nv_gen,
                nvlink_gbytes_per_gpu_bidir=nv_bidir,
                nvlink_gbytes_per_gpu_dir=nv_dir,
                ports=ports,
                hostnames=_hostnames(pool),
                nodes_per_rack=pool.placement.nodes_per_rack,
                rows=tuple(pool.placement.rows) if pool.placement.rows is not None else None,
                cloud=cloud_inst,
                source_path=ppath,
                extra_ports=extra,
            )
        )
    hostnames: dict[str, str] = {}
    for pool in pools:
        for h in pool.hostnames:
            if h in hostnames:
                errors.append(
                    Finding(
                        "CAT003",
                        Severity.ERROR,
                        f"hostname `{h}` of pool `{pool.name}` is also produced by pool `{hostnames[h]}`",
                        (*pool.source_path, "hostname_prefix"),
                        "give the pools distinct hostname_prefix values",
                    )
                )
                break
            hostnames[h] = pool.name
    if errors:
        if isinstance(loaded, LoadedBlueprint):
            errors = [loaded.locate(e) for e in errors]
        raise BlueprintError(errors)
    suppressed = {s.rule: s.reason for s in bp.suppress}
    pins = default_pins(bp.software, cat, [p.gpu.sm_arch for p in pools if p.gpu is not None])
    return ResolvedCluster(bp, cat, tuple(pools), fabrics, suppressed, source_file, sha, pins)


def default_pins(software: Software, catalog: Catalog, sm_archs: list[int]) -> Software:
    """``software`` with the driver branch / CUDA the blueprint left out raised to what its GPUs need.

    A Blackwell blueprint without ``software:`` gets the architecture's default pins (R570 / CUDA 12.8,
    data/software.yaml) instead of the model's 550 / 12.4, which cannot drive the GPU. Values the user
    wrote are kept as written (rule SFT001 judges them).
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
        ):
            current = update.get(field_name, getattr(software, field_name))
            given = field_name in software.model_fields_set
            if default and not given and version_key(default) > version_key(current):
                update[field_name] = default
    return software.model_copy(update=update) if update else software


def version_key(text: str) -> tuple[int, ...]:
    """``12.8`` → (12, 8); non-numeric parts count as 0 (a comparison key, not a parser)."""
    return tuple(int(p) if p.isdigit() else 0 for p in text.replace("-", ".").split("."))
