"""NIC ports of a pool's servers: rail numbering, twin-port cages, PCIe links, OS netdev names and the
platform port names (generator/platform/ports.py) each port carries."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from blueprints.catalog import Catalog, CatalogError
from blueprints.catalog.schema import Nic, Server, ServerNic
from blueprints.models import NodePool
from blueprints.models.nodes import PcieSlot
from generator.findings import Finding, Path, Severity
from generator.platform.ports import PortName
from generator.resolve.model import NicPort


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
    # ports taken so far on each named RDMA device, across all NIC entries: a dual-port device whose
    # port 1 is a compute rail and port 2 a storage port is named in two entries
    device_ports: dict[str, int] = field(default_factory=dict)

    def next_device_port(self, rdma_dev: str) -> int:
        self.device_ports[rdma_dev] = self.device_ports.get(rdma_dev, 0) + 1
        return self.device_ports[rdma_dev]

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
                named = replace(named, port=numbering.next_device_port(named.rdma_dev))
            out.append(named)
    return out


def pool_ports(
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


def extra_ports(names: Mapping[str, list[PortName]], ports: tuple[NicPort, ...]) -> tuple[PortName, ...]:
    """Named ports no cabled NIC port took (cloud front-end NICs, in-band ports of an unused fabric)."""
    used = {p.names_source for p in ports if p.names_source}
    seen: set[str] = set()
    out: list[PortName] = []
    for name in (n for role in names.values() for n in role):
        if name.source not in used and name.source not in seen:
            seen.add(name.source)
            out.append(name)
    return tuple(out)
