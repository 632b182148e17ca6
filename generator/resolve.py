"""Defaults and catalogue look-ups → one immutable ResolvedCluster that every later stage reads.

Naming scheme (documented in README): hosts are ``<prefix><NNN>`` numbered from 1 per pool; compute
NIC *i* of a node is RDMA device ``mlx5_<i>`` (rail *i*), storage NICs follow, then management.
Network interfaces are ``ib<k>`` on InfiniBand fabrics and ``eth<k>`` on Ethernet (eth0 = management).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path as FsPath

from blueprints.catalog import Catalog, CatalogError, default_catalog
from blueprints.catalog.schema import CloudInstance, FabricTech, Gpu, Nic, Server, ServerNic, Switch
from blueprints.models import Blueprint, Fabric, NodePool
from blueprints.models.naming import is_safe_name, render_template, template_fields
from blueprints.models.nodes import ServerSpec
from generator.findings import BlueprintError, Finding, Path, Severity
from generator.load import LoadedBlueprint

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


def _ports(
    server: Server,
    pool_spec: NodePool,
    catalog: Catalog,
    fabric_kinds: Mapping[str, str],
    errors: list[Finding],
    base: Path,
) -> tuple[NicPort, ...]:
    ports: list[NicPort] = []
    rdma = 0
    net_counters = {"ib": 0, "eth": 1}
    per_purpose: dict[str, int] = {}
    spec_nics = pool_spec.spec.nics if pool_spec.spec else None
    order = {"compute": 0, "storage": 1, "management": 2}
    indexed = sorted(enumerate(server.nics), key=lambda t: (order[t[1].purpose], t[0]))
    for nic_index, snic in indexed:
        nic: Nic | None
        if snic.model == "cloud":
            nic = None
        else:
            try:
                nic = catalog.nic(snic.model)
            except CatalogError as exc:
                errors.append(
                    Finding(
                        "CAT001", Severity.ERROR, exc.message, (*base, "nics", nic_index, "model"), exc.hint
                    )
                )
                continue
        slot = spec_nics[nic_index].pcie if spec_nics and spec_nics[nic_index].pcie else None
        gen = slot.gen if slot else (min(nic.pcie.gen, server.pcie_gen) if nic else server.pcie_gen)
        lanes = slot.lanes if slot else (nic.pcie.lanes if nic else 16)
        pcie = catalog.interconnects.pcie.get(gen)
        gbytes = pcie.gbytes_per_dir(lanes) if pcie else 0.0
        fabric_kind = fabric_kinds.get(snic.purpose, "ethernet")
        cage_counter = 0
        for _ in range(snic.count):
            dev = f"mlx5_{rdma}"
            rdma += 1
            for port_no in range(1, snic.ports + 1):
                idx = per_purpose.get(snic.purpose, 0)
                per_purpose[snic.purpose] = idx + 1
                if snic.purpose == "management":
                    netdev = "eth0"
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
                ports.append(
                    NicPort(
                        snic.purpose,
                        idx,
                        dev,
                        port_no,
                        netdev,
                        snic.model,
                        snic.speed_gbps,
                        gen,
                        lanes,
                        gbytes,
                        cage,
                        cage_port,
                    )
                )
    return tuple(ports)


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
    compute_topo = bp.fabrics.compute.topology if bp.fabrics.compute else None
    su_size = getattr(compute_topo, "scalable_unit", None)
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
        ports = _ports(server, pool, cat, fabric_kinds, errors, nic_base)
        name_errors = _template_errors(pool, su_size, ppath)
        if name_errors:
            errors.extend(name_errors)
            continue
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
                hostnames=_hostnames(pool, su_size),
                nodes_per_rack=pool.placement.nodes_per_rack,
                rows=tuple(pool.placement.rows) if pool.placement.rows is not None else None,
                cloud=cloud_inst,
                source_path=ppath,
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
    return ResolvedCluster(bp, cat, tuple(pools), fabrics, suppressed, source_file, sha)
