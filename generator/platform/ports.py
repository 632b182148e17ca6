"""Host port names from the catalogue's port maps and the blueprint's declared ports.

This is the one place that knows which RDMA device, interface and faceplate port of a server carries
which rail. Everything that names a host port (NCCL, QoS, addressing, labels, NetBox, LLDP,
verify-cabling) reads the resolved ``NicPort`` fields this module fills, or calls the helpers below.

A name that neither the catalogue (``data/platforms.yaml``, with its vendor source) nor the blueprint
(``pools[].ports``) gives stays ``None``: callers report it (rule PLT001) and never make one up.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from blueprints.catalog.schema import MappedPort, Platform
from generator.findings import Finding, Severity

if TYPE_CHECKING:
    from blueprints.catalog import Catalog
    from blueprints.models.nodes import DeclaredPort, NodePool
    from generator.resolve import NicPort, ResolvedPool

# Which port-map roles serve the NIC purposes of servers.yaml, in the order they are matched.
ROLES_FOR_PURPOSE: dict[str, tuple[str, ...]] = {
    "compute": ("compute",),
    "storage": ("storage", "inband"),
    "management": ("bmc",),  # servers.yaml's management NIC is the out-of-band (BMC) port
    "frontend": ("frontend",),  # cloud host NICs: named, but never cabled by the plan
}


@dataclass(frozen=True)
class PortName:
    """The published (or declared) names of one host port; ``None`` = not published."""

    role: str
    faceplate: str | None
    rdma: str | None
    netdev: str | None
    pci: str | None
    gpu: int | None
    cage: int | None
    cage_port: int | None
    source: str  # "catalog:platforms.<id>: <document>" or "pools[<i>].ports[<j>]"
    netdev_link: str | None = None  # infiniband | ethernet: the link layer the interface name is for
    netdev_optional: str | None = None  # the interface name in the other link layer, where published
    label: str | None = None  # the site's name for the adapter (HCA-1), declared only: never in NCCL/QoS

    def netdev_for(self, link: str) -> str | None:
        """The interface name for ``link`` (an IPoIB name like ibp220s0 is not the Ethernet one)."""
        if self.netdev_link in (None, link):
            return self.netdev
        return self.netdev_optional


def platform_of(catalog: Catalog, server_id: str) -> Platform | None:
    """The catalogue's platform entry for a server id or ``provider/instance-type``."""
    return catalog.platforms.get(server_id)


def ships_driver(catalog: Catalog, server_id: str) -> bool:
    """Whether the server's platform image ships the NVIDIA driver (DGX OS, a cloud GPU image): the build then
    checks it against the branch and installs no driver, Fabric Manager or IMEX package of its own."""
    platform = platform_of(catalog, server_id)
    return platform is not None and platform.ships_driver


def _from_catalog(server_id: str, platform: Platform, entry: MappedPort) -> PortName:
    return PortName(
        entry.role,
        entry.faceplate,
        entry.rdma,
        entry.netdev,
        entry.pci,
        entry.gpu,
        entry.cage,
        entry.cage_port,
        f"catalog:platforms.{server_id}: {platform.source} {entry.source}",
        entry.netdev_link,
        entry.netdev_optional,
    )


def _from_blueprint(pool_index: int, j: int, entry: DeclaredPort) -> PortName:
    return PortName(
        entry.role, entry.faceplate, entry.rdma, entry.netdev, entry.pci, entry.gpu, None, None,
        f"pools[{pool_index}].ports[{j}]", label=entry.label,
    )  # fmt: skip


def _with_mapped_cage(name: PortName, mapped: Sequence[PortName]) -> PortName:
    """A declared port that is a port of the catalogue's map (the same RDMA device) sits in that row's cage:
    declaring a DGX's compute ports to label them put mlx5_0 in cage 1 by counting, where the vendor's
    table has it at OSFP4 port 2, and a technician following the cage columns crossed rails."""
    row = next((m for m in mapped if name.rdma and m.rdma == name.rdma and m.cage is not None), None)
    if row is None:
        return name
    return replace(name, cage=row.cage, cage_port=row.cage_port, faceplate=name.faceplate or row.faceplate)


def port_names(
    catalog: Catalog, server_id: str, pool: NodePool, pool_index: int
) -> dict[str, list[PortName]]:
    """Names per purpose (compute/storage/management), in the order the purpose's ports are generated.

    Declared ports replace the catalogue's entries of every role they list; compute entries are sorted
    by the GPU the vendor pairs them with (rail k = GPU k) when every entry gives one.
    """
    platform = platform_of(catalog, server_id)
    mapped = [_from_catalog(server_id, platform, p) for p in platform.ports] if platform else []
    declared = [
        _with_mapped_cage(_from_blueprint(pool_index, j, p), mapped) for j, p in enumerate(pool.ports or ())
    ]
    declared_roles = {p.role for p in declared}
    names = [p for p in mapped if p.role not in declared_roles] + declared
    out: dict[str, list[PortName]] = {}
    for purpose, roles in ROLES_FOR_PURPOSE.items():
        chosen = [p for p in names if p.role in roles]
        if purpose == "compute" and chosen and all(p.gpu is not None for p in chosen):
            chosen.sort(key=lambda p: p.gpu if p.gpu is not None else 0)
        out[purpose] = chosen
    return out


def declared_gpu_problems(pool: NodePool, pool_index: int, gpus: int) -> list[Finding]:
    """A declared port paired with a GPU the server does not have: compute ports are put in rail order by
    their ``gpu`` (``port_names``), so `gpu: 9` on an 8-GPU server silently moved its port behind the others
    and crossed the rails. Several ports naming one GPU are left alone: servers with more rail NICs than
    GPUs pair several with each (AWS p5: 32 EFA devices for 8 GPUs)."""
    out = []
    for j, port in enumerate(pool.ports or ()):
        if port.gpu is None or port.gpu < gpus:
            continue
        has = f"GPUs 0-{gpus - 1}" if gpus else "no GPU"
        out.append(
            Finding(
                "SCHEMA",
                Severity.ERROR,
                f"pool `{pool.name}`: ports[{j}] is paired with gpu {port.gpu}, and its server has {has}",
                ("pools", pool_index, "ports", j, "gpu"),
                "give the index (from 0) of the GPU that shares the port's PCIe switch (nvidia-smi topo -m), "
                "or leave `gpu` out",
            )
        )
    return out


def rdma_devices(ports: Sequence[NicPort]) -> tuple[str, ...] | None:
    """``mlx5_11:1``-style NCCL_IB_HCA entries in the given (rail) order, or None if a name is unknown."""
    if not ports or not all(p.rdma_known for p in ports):
        return None
    return tuple(f"{p.rdma_dev}:{p.port}" for p in ports)


def interfaces(ports: Sequence[NicPort]) -> tuple[str, ...] | None:
    """Interface names of ``ports`` in order, or None if one of them is unknown."""
    if not ports or not all(p.netdev_known for p in ports):
        return None
    return tuple(p.netdev for p in ports)


def site_labels(pools: Sequence[ResolvedPool]) -> dict[str, dict[str, str]]:
    """pool → {plan port (``mlx5_4/1``) → the site's label for its adapter (``HCA-5``)}, declared only
    (``pools[].ports[].label``); pools without labels are left out, so most plans give ``{}``."""
    out: dict[str, dict[str, str]] = {}
    for pool in pools:
        labels = {p.plan_port: p.label for p in pool.ports if p.label and p.has_rdma}
        shared = {label for label, n in Counter(labels.values()).items() if n > 1}
        if labels:  # both ports of a dual-port adapter under one label print as HCA-1/1, HCA-1/2
            out[pool.name] = {
                port: f"{label}/{port.rsplit('/', 1)[-1]}" if label in shared else label
                for port, label in labels.items()
            }
    return out


def label_devices(pools: Sequence[ResolvedPool]) -> dict[str, dict[str, str]]:
    """pool → {the site's adapter label, case-folded (``hca-5``) → the plan's RDMA device (``mlx5_4``)}."""
    out: dict[str, dict[str, str]] = {}
    for pool in pools:
        labels = {p.label.casefold(): p.rdma_dev for p in pool.ports if p.label and p.has_rdma}
        if labels:
            out[pool.name] = labels
    return out


def fabric_taken(port: NicPort, fabrics: Collection[str]) -> bool:
    """Whether a compute or storage fabric of the blueprint (``fabrics``: its fabric names) cables ``port``:
    a port's purpose names a fabric the blueprint may not have."""
    return port.purpose in ("compute", "storage") and port.purpose in fabrics


def inband_interfaces(pool: ResolvedPool, fabrics: Collection[str]) -> list[str]:
    """The known names of the host's own (in-band / front-end) ports, port map first, that no compute or
    storage fabric of the blueprint takes: a port a fabric takes carries that fabric (with an InfiniBand
    storage fabric a DGX H100's in-band ports become IPoIB ports, which MAAS cannot deploy over and Ansible
    re-addresses)."""
    names = [p.netdev for p in _named_inband(pool) if not fabric_taken(p, fabrics)]
    names += [n.netdev for n in pool.extra_ports if n.role in ("inband", "frontend") and n.netdev]
    return list(dict.fromkeys(n for n in names if n))


def taken_inband_interfaces(pool: ResolvedPool, fabrics: Collection[str]) -> list[str]:
    """The port map's in-band / front-end ports that a compute or storage fabric of the blueprint takes."""
    return sorted({p.netdev for p in _named_inband(pool) if p.netdev and fabric_taken(p, fabrics)})


def _named_inband(pool: ResolvedPool) -> list[NicPort]:
    return [p for p in pool.ports if p.role in ("inband", "frontend") and p.netdev_known]


def host_interface(pool: ResolvedPool, fabrics: Collection[str]) -> str | None:
    """The host's own (in-band / front-end) interface for bootstrap traffic, if its name is known."""
    names = inband_interfaces(pool, fabrics)
    return names[0] if names else None
