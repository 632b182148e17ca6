"""NCCL settings derived from the resolved fabric, and the ``nccl/`` output (env file, nccl.conf, topology).

Every setting is chosen by a blueprint or catalogue fact and carries that fact as its ``reason`` and
``source`` (the dotted blueprint path, or the catalogue entry). Settings a platform's vendor publishes
(``catalog:platforms.<id>.nccl_env``: NVIDIA DGX docs, aws-ofi-nccl, Azure HPC images, Google Cluster
Toolkit, OCI HPC stack) replace the derived value of the same name. Host names (RDMA devices, interfaces)
come from the port map (generator/platform/ports.py); a name nobody published is never guessed: the
setting is left out and the profile says why (``notes``; rule PLT001 reports it at the blueprint line).

References: the NCCL user guide, Environment Variables
(docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html) and NVIDIA/nccl src/transport/net_ib
(defaults).

``derive(cluster, pool, plan)`` is a pure function; the Ansible emitter writes the same settings into
``group_vars/pool_<pool>.yml`` and the nccl role installs them on the hosts.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path as FsPath
from typing import TYPE_CHECKING

from generator.emit._registry import BuildContext, Emitter
from generator.findings import dotted
from generator.plan.subnet_manager import FULL_MEMBER, home_partition
from generator.platform.ports import (
    host_interface,
    inband_interfaces,
    interfaces,
    platform_of,
    rdma_devices,
    taken_inband_interfaces,
)
from generator.safetext import one_line

if TYPE_CHECKING:
    from blueprints.catalog.schema import Platform
    from blueprints.models.fabric import SubnetManager
    from generator.plan.model import Plan
    from generator.resolve import NicPort, ResolvedCluster, ResolvedPool

NAME = "nccl"

# a tenant pool's NCCL_IB_PKEY, and (its index, the full-member P_Key) the nccl role checks on the host
_Tenant = tuple["NcclSetting", tuple[int, int]]

# Where the nccl role installs the files (the env file is sourced by job scripts / Slurm prolog).
CONF_PATH = "/etc/nccl.conf"
ENV_PATH = "/etc/nccl/nccl.env"
TOPO_PATH = "/etc/nccl/topo.xml"

# ConnectX GID table with one IPv4 address per port: 0/1 = link-local IPv6 RoCE v1/v2,
# 2/3 = IPv4-mapped RoCE v1/v2, so index 3 is RoCE v2 over IPv4 (NCCL user guide, NCCL_IB_GID_INDEX;
# the OCI HPC stack's nccl.conf for BM.GPU.H100.8 uses the same index 3).
ROCE_V2_IPV4_GID_INDEX = 3
# Cloud fabrics that are not verbs devices (catalogue cloud.*.fabric values) and the transport they use.
CLOUD_PLUGIN_TRANSPORT = {"efa": "efa", "gpudirect-tcpx": "tcpx", "gpudirect-tcpxo": "tcpxo"}
# Platform plug-ins (catalog:platforms.<id>.plugin.name) and the transport NCCL then runs.
PLUGIN_TRANSPORT = {"aws-ofi-nccl": "efa", "gib": "gib", "tcpxo": "tcpxo"}


@dataclass(frozen=True)
class NcclSetting:
    name: str
    value: str
    reason: str  # which blueprint fact chose it, in words
    source: str  # dotted blueprint path or `catalog:<section>.<id>.<field>`


@dataclass(frozen=True)
class TopoSwitch:
    """One (real or synthetic) PCIe switch: the GPUs and NICs NCCL should treat as neighbours."""

    gpus: tuple[int, ...]  # GPU ordinals on the node
    nics: tuple[str, ...]  # RDMA device names
    nic_mbps: int  # NCCL `net speed` attribute, Mb/s


@dataclass(frozen=True)
class NcclTopology:
    """Layout for NCCL_TOPO_FILE; bus ids are filled on each host from sysfs by the nccl role."""

    numa_nodes: tuple[tuple[TopoSwitch, ...], ...]
    link_speed: str  # "32.0 GT/s PCIe"
    link_width: int
    gpu_sm: int
    reason: str


@dataclass(frozen=True)
class NcclProfile:
    pool: str
    transport: str  # ib | roce | socket | efa | tcpx | tcpxo | gib
    settings: tuple[NcclSetting, ...]
    plugin: str | None  # nccl-rdma-sharp-plugins | aws-ofi-nccl | gib | tcpxo | None
    topology: NcclTopology | None
    notes: tuple[str, ...] = ()  # settings left out and why (unknown names, image-provided files)
    keep_files: tuple[str, ...] = ()  # files the platform image ships that the nccl role must not replace
    plugin_path: str | None = None  # where the platform image installs the plug-in (checked on the host)
    plugin_profile: str | None = None  # vendor script that sets the plug-in's environment
    devices: tuple[str, ...] = ()  # RDMA devices the settings name
    interfaces: tuple[str, ...] = ()  # interfaces the settings name (likewise)
    # NCCL_IB_PKEY's index and the P_Key (full member) the host's table must hold there (the role checks)
    pkey: tuple[int, int] | None = None
    device_ports: tuple[str, ...] = ()  # the devices' ports, mlx5_0/ports/1 (the nccl role checks each)

    def env(self) -> dict[str, str]:
        return {s.name: s.value for s in self.settings}

    def get(self, name: str) -> NcclSetting | None:
        return next((s for s in self.settings if s.name == name), None)


def _path(*parts: str | int) -> str:
    return dotted(tuple(parts))


def _pool_path(cluster: ResolvedCluster, pool: ResolvedPool, *rest: str | int) -> str:
    return _path(*pool.source_path, *rest) if pool.source_path else _path("pools", pool.name, *rest)


def _rail_order(
    pool: ResolvedPool, ports: tuple[NicPort, ...], plan: Plan | None
) -> tuple[tuple[NicPort, ...], str]:
    """Compute ports sorted by the rail the plan cabled them to (falls back to the port map's rail order)."""
    fallback = "rail k = the port map's k-th compute port"
    if plan is None or not pool.hostnames:
        return ports, fallback
    host = pool.hostnames[0]
    rail_of: dict[str, int] = {}
    for link in plan.links_of("compute"):
        for ep in (link.a, link.b):
            if ep.device == host and link.rail is not None:
                rail_of[ep.port] = link.rail
    if not rail_of:
        return ports, fallback
    ordered = tuple(sorted(ports, key=lambda p: (rail_of.get(p.plan_port, 1 << 20), p.index)))
    return ordered, f"rails as cabled in the plan for {host}"


def _nvls(cluster: ResolvedCluster, pool: ResolvedPool) -> NcclSetting:
    gpu = pool.gpu
    src = f"catalog:gpus.{pool.gpu_id}.nvls"
    if gpu is not None and gpu.nvls and pool.server.nvswitches > 0:
        return NcclSetting(
            "NCCL_NVLS_ENABLE",
            "1",
            f"{gpu.name} supports NVLink SHARP and server `{pool.server_id}` has "
            f"{pool.server.nvswitches} NVSwitches",
            src,
        )
    why = (
        f"{gpu.name if gpu else 'this GPU'} has no NVLink SHARP"
        if not (gpu and gpu.nvls)
        else f"server `{pool.server_id}` has no NVSwitch"
    )
    return NcclSetting("NCCL_NVLS_ENABLE", "0", f"{why}; NVLS would only reserve memory", src)


def _gdr_level(cluster: ResolvedCluster, pool: ResolvedPool) -> NcclSetting:
    if pool.cloud is not None and not pool.cloud.bare_metal:
        return NcclSetting(
            "NCCL_NET_GDR_LEVEL",
            "SYS",
            f"cloud instance `{pool.server_id}`: the VM's PCI tree is flat/virtual, so GPUDirect "
            "RDMA must be allowed at any distance",
            _pool_path(cluster, pool, "server"),
        )
    if pool.server.gpu_interconnect.startswith("nvlink") and pool.server.nvswitches > 0:
        return NcclSetting(
            "NCCL_NET_GDR_LEVEL",
            "PXB",
            f"server `{pool.server_id}` ({pool.server.gpu_interconnect}, NVSwitch baseboard) "
            "pairs each GPU with a NIC behind the same PCIe switch",
            _pool_path(cluster, pool, "server"),
        )
    return NcclSetting(
        "NCCL_NET_GDR_LEVEL",
        "PHB",
        f"server `{pool.server_id}` ({pool.server.gpu_interconnect}): GPUs and NICs may meet only "
        "at the CPU host bridge",
        _pool_path(cluster, pool, "server"),
    )


def _ipoib_children(cluster: ResolvedCluster, pool: ResolvedPool) -> list[str]:
    """The IPoIB P_Key children a tenant pool's compute ports are addressed on, read from the address plan
    (``FabricAddress.child_of``, what the host_fabric vars create) rather than worked out again: one truth
    for the interface NCCL bootstraps on and the one that has the address. Every host of a pool has the same
    interfaces (group_vars._fabric_vars reads its first host the same way); a cloud plan has none."""
    from generator.deploy.addresses import onprem_plan

    planned = onprem_plan(cluster).fabric.get(pool.hostnames[0], []) if pool.hostnames else []
    return [
        a.interface
        for a in planned
        if a.purpose == "compute" and a.child_of is not None and a.interface is not None
    ]


def _inband_names(cluster: ResolvedCluster, pool: ResolvedPool) -> list[str]:
    """The distinct known names of the host's in-band / front-end ports (port map or declared)."""
    return sorted(inband_interfaces(pool, cluster.fabrics))


def _socket_ifname(cluster: ResolvedCluster, pool: ResolvedPool) -> NcclSetting | str:
    """Bootstrap over the host's in-band / front-end interface, or a note why it is left out."""
    children = _ipoib_children(cluster, pool)
    if children:
        return NcclSetting(
            "NCCL_SOCKET_IFNAME",
            "=" + ",".join(children),
            "bootstrap over the pool's IPoIB children in its own partition: the ports' parent interfaces "
            "are limited members of Default, where the pool's hosts cannot reach each other, and NCCL "
            "otherwise prefers `ib` interfaces",
            _pool_path(cluster, pool, "ports"),
        )
    inband = _inband_names(cluster, pool)
    if len(inband) > 1:
        return (
            f"NCCL_SOCKET_IFNAME left out: `{pool.server_id}` has {len(inband)} in-band ports "
            f"({', '.join(inband)}), which its vendor's guide bonds; the bond's name is the site's, and an "
            "interface in a bond carries no address; NCCL picks an interface itself"
        )
    name = host_interface(pool, cluster.fabrics)
    if name is not None:
        return NcclSetting(
            "NCCL_SOCKET_IFNAME",
            f"={name}",
            f"bootstrap over the host interface {name} (port map) so it never lands on a compute rail",
            _pool_path(cluster, pool, "ports"),
        )
    taken = taken_inband_interfaces(pool, cluster.fabrics)
    if taken:  # the port map names them, but a compute or storage fabric carries them
        return (
            f"NCCL_SOCKET_IFNAME left out: the in-band ports of `{pool.server_id}` ({', '.join(taken)}) "
            "carry a compute or storage fabric of the blueprint, so no port is the hosts' own; NCCL picks an "
            "interface itself"
        )
    return (
        f"NCCL_SOCKET_IFNAME left out: the in-band interface name of `{pool.server_id}` is not published "
        "(declare pools[].ports with role inband); NCCL picks an interface itself"
    )


def _topology(
    cluster: ResolvedCluster, pool: ResolvedPool, compute: tuple[NicPort, ...]
) -> NcclTopology | None:
    """A topology file is useful where sysfs does not show GPU↔NIC affinity: VMs and PCIe boxes."""
    gpus = pool.server.gpus
    if gpus == 0 or not compute or pool.gpu is None or pool.gpu.vendor != "nvidia":
        return None
    is_vm = pool.cloud is not None
    is_pcie_box = pool.server.gpu_interconnect.startswith("pcie") or pool.server.gpu_interconnect == "none"
    if not (is_vm or is_pcie_box):
        return None
    nics = [p for p in compute if p.port == 1] or list(compute)
    per_switch_gpus = max(1, gpus // len(nics)) if len(nics) <= gpus else 1
    switches: list[TopoSwitch] = []
    for s, nic in enumerate(nics):
        first = s * per_switch_gpus
        if first >= gpus:
            break
        last = gpus if s == len(nics) - 1 else min(gpus, first + per_switch_gpus)
        switches.append(TopoSwitch(tuple(range(first, last)), (nic.rdma_dev,), int(nic.speed_gbps * 1000)))
    # Two sockets is what every server in the catalogue has; switches are split evenly across them.
    half = (len(switches) + 1) // 2
    numa = tuple(t for t in (tuple(switches[:half]), tuple(switches[half:])) if t)
    gen = compute[0].pcie_gen
    pcie = cluster.catalog.interconnects.pcie.get(gen)
    speed = f"{pcie.gt_per_s:.1f} GT/s PCIe" if pcie else "16.0 GT/s PCIe"
    why = (
        f"cloud instance `{pool.server_id}`: a VM's virtual PCI tree hides GPU↔NIC affinity"
        if is_vm
        else f"server `{pool.server_id}` is a PCIe box ({pool.server.gpu_interconnect}): pin each GPU "
        "to its NIC"
    )
    return NcclTopology(numa, speed, compute[0].pcie_lanes, pool.gpu.sm_arch, why)


@dataclass(frozen=True)
class _Transport:
    """What carries NCCL's inter-node traffic for a pool, and the fabric fact that says so."""

    name: str  # ib | roce | socket | efa | tcpx | tcpxo | gib | none
    kind: str  # infiniband | roce | ethernet | plugin | none
    tech_name: str
    tech_src: str
    plugin: str | None


def _transport(cluster: ResolvedCluster, pool: ResolvedPool, platform: Platform | None) -> _Transport:
    """Phase 1: the transport, from the platform's plug-in, the cloud fabric or the compute fabric."""
    cloud_fabric = pool.cloud.fabric if pool.cloud is not None else None
    if platform is not None and platform.plugin is not None and platform.plugin.name in PLUGIN_TRANSPORT:
        src = f"catalog:platforms.{pool.server_id}.plugin"
        return _Transport(
            PLUGIN_TRANSPORT[platform.plugin.name], "plugin", platform.plugin.name, src, platform.plugin.name
        )
    if cloud_fabric in CLOUD_PLUGIN_TRANSPORT:
        src = f"catalog:cloud.{pool.server_id}.fabric"
        return _Transport(CLOUD_PLUGIN_TRANSPORT[cloud_fabric], "plugin", cloud_fabric, src, None)
    compute = cluster.fabrics.get("compute")
    kind: str
    if cloud_fabric is not None:
        tech = cluster.catalog.fabrics.get(cloud_fabric)
        kind, name, src = (
            (tech.kind if tech else "ethernet"),
            cloud_fabric,
            f"catalog:cloud.{pool.server_id}.fabric",
        )
    elif compute is not None and pool.ports_for("compute"):
        kind, name, src = compute.kind, compute.technology, _path(*compute.source_path, "technology")
    else:  # no compute fabric, or none of this pool's ports is on it: NCCL has no network to use
        kind, name, src = "none", "none", "fabrics.compute"
    return _Transport({"infiniband": "ib", "roce": "roce"}.get(kind, "socket"), kind, name, src, None)


def _rail_settings(
    cluster: ResolvedCluster, pool: ResolvedPool, plan: Plan | None, t: _Transport
) -> tuple[list[NcclSetting], list[str]]:
    """Phase 2: NCCL_IB_HCA (verbs) or the socket interfaces (plain Ethernet), from the port map."""
    ordered, order_why = _rail_order(pool, pool.ports_for("compute"), plan)
    if not ordered:
        return [], []
    if t.name in ("ib", "roce"):
        hcas = rdma_devices(ordered)
        if hcas is None:
            return [], [
                f"NCCL_IB_HCA left out: the RDMA device names of `{pool.server_id}` are not published "
                "(declare pools[].ports); NCCL then uses every RDMA device it finds"
            ]
        others = sorted({p.rdma_dev for p in pool.ports if p.purpose != "compute" and p.rdma_known})
        excl = f"; `=` (exact match) keeps {', '.join(others)} out" if others else ""
        why = (
            f"the {len(ordered)} compute ports of `{pool.server_id}` in rail order ({order_why}; names "
            f"from {ordered[0].names_source}){excl}"
        )
        return [
            NcclSetting("NCCL_IB_HCA", "=" + ",".join(hcas), why, _pool_path(cluster, pool, "server"))
        ], []
    out = [
        NcclSetting(
            "NCCL_IB_DISABLE",
            "1",
            f"compute fabric `{t.tech_name}` is plain Ethernet without RDMA",
            t.tech_src,
        )
    ]
    names = interfaces(ordered)
    if names is None:
        return out, [
            f"NCCL_SOCKET_IFNAME left out: the compute interface names of `{pool.server_id}` are not "
            "published"
        ]
    out.append(
        NcclSetting(
            "NCCL_SOCKET_IFNAME",
            "=" + ",".join(names),
            "socket transport over the compute ports (port map)",
            _pool_path(cluster, pool, "server"),
        )
    )
    return out, []


def _verbs_settings(cluster: ResolvedCluster, pool: ResolvedPool, t: _Transport) -> list[NcclSetting]:
    """Phase 3: RoCE class / InfiniBand service level, GPUDirect level, cross-NIC and SHARP."""
    compute_fabric = cluster.fabrics.get("compute")
    out: list[NcclSetting] = []
    if t.name == "roce":
        from blueprints.models.fabric import Lossless

        ll = compute_fabric.spec.lossless if compute_fabric is not None else None
        lossless = ll or Lossless()
        given = "" if ll else " (fabrics.compute.lossless not given: model default)"
        out.append(
            NcclSetting(
                "NCCL_IB_GID_INDEX",
                str(ROCE_V2_IPV4_GID_INDEX),
                f"RoCE v2 over IPv4 on `{t.tech_name}`: GID 3 in the default ConnectX GID table",
                t.tech_src,
            )
        )
        out.append(
            NcclSetting(
                "NCCL_IB_TC",
                str(lossless.dscp << 2),
                f"traffic class = DSCP {lossless.dscp} << 2 so RDMA traffic lands in the lossless "
                f"class (PFC priority {lossless.pfc_priority}){given}",
                _path("fabrics", "compute", "lossless", "dscp"),
            )
        )
    if t.name == "ib":
        sm = compute_fabric.spec.subnet_manager if compute_fabric is not None else None
        sl = sm.service_level if sm else 0
        out.append(
            NcclSetting(
                "NCCL_IB_SL",
                str(sl),
                f"InfiniBand service level {sl} of the subnet manager's QoS"
                + ("" if sm else " (no subnet_manager given: SL 0)"),
                _path("fabrics", "compute", "subnet_manager", "service_level"),
            )
        )
    out.append(_gdr_level(cluster, pool))
    out.append(_cross_nic(cluster, compute_fabric))
    if t.name == "ib" and compute_fabric is not None:
        out.extend(_sharp(cluster, compute_fabric))
    return out


def tenant_partition(sm: SubnetManager, pool: str) -> tuple[int, int] | None:
    """The partition a pool's NCCL traffic runs in, as (its position in ``sm.partitions``, its P_Key index),
    for a pool a partition names: its ports are then limited members of Default, where limited members
    cannot talk to each other (subnet_manager._default_partition; IBA 10.9.1), so NCCL, whose queue pairs
    take P_Key index NCCL_IB_PKEY (default 0: Default; NVIDIA/nccl src/transport/net_ib.cc
    ``qpAttr.pkey_index = ncclParamIbPkey()``), must use a partition the pool is a full member of: the
    first the generated partitions.conf lists. Its index is the one OpenSM gives it in a port's P_Key
    table: Default at 0, then the port's other partitions in the order of OpenSM's map of them, keyed by the
    P_Key in network byte order (``_opensm_order``), not the file's; tests/realtools/test_opensm_tenants.py
    reads it back from real OpenSM with a file order that differs. None: no partition names the pool (it
    stays a full member of Default, index 0), or it is a full member of none."""
    home = home_partition(sm, pool)
    if home is None:
        return None
    chosen = home[0]
    mine = [i for i, part in enumerate(sm.partitions) if not part.pools or pool in part.pools]
    keys = sorted({_opensm_order(sm.partitions[i].pkey) for i in mine})
    return chosen, 1 + keys.index(_opensm_order(sm.partitions[chosen].pkey))


def _opensm_order(pkey: int) -> int:
    """Where OpenSM puts a partition in a port's P_Key table after Default: its map of a port's P_Keys is
    keyed by the base P_Key as the wire carries it (big-endian), read as a number on the little-endian host
    (opensm osm_pkey.c; in real OpenSM 3.3.23 0x105 comes before 0x10, and 0x10 before 0x30)."""
    base = pkey & 0x7FFF
    return ((base & 0xFF) << 8) | (base >> 8)


def _partition_pkey(
    cluster: ResolvedCluster, pool: ResolvedPool
) -> tuple[NcclSetting, tuple[int, int]] | None:
    """NCCL_IB_PKEY for a pool a partition names, and (its index, the P_Key with the full-membership bit,
    IBA 10.9.1) the nccl role checks the host's table holds there; None: the pool needs none."""
    fabric = cluster.fabrics.get("compute")
    sm = fabric.spec.subnet_manager if fabric is not None else None
    found = tenant_partition(sm, pool.name) if sm is not None else None
    if sm is None or found is None:
        return None
    i, index = found
    part = sm.partitions[i]
    why = (
        f"P_Key index of partition `{part.name}` (0x{part.pkey:04x}, full member): the pool is a limited "
        "member of Default, so NCCL's queue pairs must not use index 0; a freshly programmed port has "
        "Default at 0 and its other partitions after it by P_Key in network byte order (the nccl role "
        "writes the index each host's own P_Key table holds the partition at)"
    )
    where = _path("fabrics", "compute", "subnet_manager", "partitions", i)
    return NcclSetting("NCCL_IB_PKEY", str(index), why, where), (index, FULL_MEMBER | part.pkey)


def _vendor_settings(pool: ResolvedPool, platform: Platform | None) -> list[NcclSetting]:
    """The NCCL / libfabric environment the platform's vendor publishes (catalogue, with sources)."""
    if platform is None:
        return []
    src = f"catalog:platforms.{pool.server_id}.nccl_env"
    return [
        NcclSetting(e.name, e.value, f"published for {platform.name}: {e.source} ({platform.source})", src)
        for e in platform.nccl_env
    ]


def _merge(derived: list[NcclSetting], vendor: list[NcclSetting]) -> list[NcclSetting]:
    """Derived settings in order, each replaced by the vendor's value of the same name; vendor-only after."""
    by_name = {v.name: v for v in vendor}
    out = [by_name.pop(d.name, d) for d in derived]
    out.extend(v for v in vendor if v.name in by_name)
    return out


def derive(cluster: ResolvedCluster, pool: ResolvedPool, plan: Plan | None = None) -> NcclProfile:
    """NCCL settings for one GPU pool, each with the blueprint or vendor fact that chose it."""
    platform = platform_of(cluster.catalog, pool.server_id)
    t = _transport(cluster, pool, platform)
    derived: list[NcclSetting] = []
    tenant: _Tenant | None = None
    notes: list[str] = []
    if t.kind != "plugin":  # plug-in transports take the vendor's environment only
        rails, rail_notes = _rail_settings(cluster, pool, plan, t)
        derived.extend(rails)
        notes.extend(rail_notes)
        if t.name in ("ib", "roce"):
            sock = _socket_ifname(cluster, pool)
            if isinstance(sock, NcclSetting):
                derived.append(sock)
            else:
                notes.append(sock)
            derived.extend(_verbs_settings(cluster, pool, t))
            tenant = _partition_pkey(cluster, pool) if t.name == "ib" else None
            if tenant is not None:
                derived.append(tenant[0])
    elif platform is None:
        notes.append(f"no vendor NCCL settings for `{pool.server_id}` in the catalogue (rule PLT001)")
    settings = _merge(derived, _vendor_settings(pool, platform))
    if pool.gpu is not None and pool.gpu.vendor == "nvidia":
        settings.append(_nvls(cluster, pool))
    topo = _platform_topology(cluster, pool, t, settings, notes)
    if topo is not None:
        settings.append(
            NcclSetting("NCCL_TOPO_FILE", TOPO_PATH, topo.reason, _pool_path(cluster, pool, "server"))
        )
    profile = _profile(pool, t, platform, settings, topo, notes)
    return replace(profile, pkey=tenant[1]) if tenant is not None else profile


def _platform_topology(
    cluster: ResolvedCluster, pool: ResolvedPool, t: _Transport, settings: list[NcclSetting], notes: list[str]
) -> NcclTopology | None:
    """Phase 4: our topology file, unless the platform ships its own or the device names are unknown."""
    if t.name not in ("ib", "roce") or any(s.name == "NCCL_TOPO_FILE" for s in settings):
        return None
    platform = platform_of(cluster.catalog, pool.server_id)
    if platform is not None and platform.nccl_env:
        notes.append(f"no synthetic NCCL_TOPO_FILE: {platform.name} runs the vendor's published settings")
        return None
    compute = pool.ports_for("compute")
    topo = _topology(cluster, pool, compute)
    if topo is not None and not all(p.rdma_known for p in compute):
        notes.append("NCCL_TOPO_FILE left out: it names RDMA devices that are not published")
        return None
    return topo


def _profile(
    pool: ResolvedPool,
    t: _Transport,
    platform: Platform | None,
    settings: list[NcclSetting],
    topo: NcclTopology | None,
    notes: list[str],
) -> NcclProfile:
    """Phase 5: the profile, with the plug-in, the image files to keep and the names the host must have."""
    plugin = t.plugin
    if any(s.name == "NCCL_COLLNET_ENABLE" and s.value == "1" for s in settings):
        plugin = "nccl-rdma-sharp-plugins"
    named = [p for p in pool.ports_for("compute") if p.rdma_known]
    env = {s.name: s.value for s in settings}
    devices = tuple(p.rdma_dev for p in named) if "NCCL_IB_HCA" in env else ()
    # device/port, as NCCL_IB_HCA names them: a device named for two ports (mlx5_0:1,mlx5_0:2) on a
    # single-port card fails the host's check for its port 2 instead of NCCL skipping it
    device_ports = tuple(f"{p.rdma_dev}/ports/{p.port}" for p in named) if devices else ()
    ifaces = tuple(
        sorted({i.strip("=") for k in ("NCCL_SOCKET_IFNAME",) if k in env for i in env[k].split(",")})
    )
    return NcclProfile(
        pool.name,
        t.name,
        tuple(settings),
        plugin,
        topo,
        tuple(notes),
        tuple(f.path for f in platform.keep_files) if platform else (),
        platform.plugin.path if platform and platform.plugin else None,
        platform.plugin.profile if platform and platform.plugin else None,
        devices,
        tuple(i for i in ifaces if i and not i.startswith("^")),
        device_ports=device_ports,
    )


def _cross_nic(cluster: ResolvedCluster, fabric: object | None) -> NcclSetting:
    from generator.resolve import ResolvedFabric

    topo = fabric.spec.topology if isinstance(fabric, ResolvedFabric) else None
    src = _path("fabrics", "compute", "topology", "rail_optimized")
    if (
        topo is not None
        and getattr(topo, "kind", None) == "fat-tree"
        and getattr(topo, "rail_optimized", False)
    ):
        return NcclSetting(
            "NCCL_CROSS_NIC",
            "0",
            "rail-optimised fat-tree: rail i of every node meets on the same leaves, so rings must "
            "stay on the same NIC index across nodes",
            src,
        )
    kind = getattr(topo, "kind", "none") if topo is not None else "none"
    return NcclSetting(
        "NCCL_CROSS_NIC",
        "1",
        f"compute topology `{kind}` is not rail-optimised: every NIC reaches every other through "
        "one fabric, so NCCL may pair different NIC indices",
        _path("fabrics", "compute", "topology"),
    )


def _sharp(cluster: ResolvedCluster, fabric: object) -> list[NcclSetting]:
    from generator.resolve import ResolvedFabric

    assert isinstance(fabric, ResolvedFabric)
    sm = fabric.spec.subnet_manager
    switch = fabric.switch
    src = _path("fabrics", "compute", "subnet_manager", "sharp")
    from blueprints.catalog import subnet_managers

    # CollNet only when SHARP is really on: the SM flavour must enable it on the switches (NVIDIA's OpenSM
    # `sharp_enabled 2`, UFM `ib sm sharp enable`); Debian's OpenSM 3.3 cannot (subnet_managers.yaml)
    if switch is not None and switch.sharp and sm is not None and subnet_managers.sharp_on(sm):
        why = (
            f"switch `{fabric.switch_id}` ({switch.name}) supports SHARP and subnet_manager.sharp runs the "
            "aggregation manager"
        )
        return [
            NcclSetting("NCCL_COLLNET_ENABLE", "1", why + "; CollNet needs the nccl-rdma-sharp-plugins", src),
            NcclSetting(
                "SHARP_COLL_ENABLE_SAT",
                "1",
                "streaming aggregation (SAT) for large all-reduce on the same SHARP-capable switches",
                src,
            ),
        ]
    if switch is not None and switch.sharp and sm is not None and sm.sharp:
        why = (
            f"switch `{fabric.switch_id}` supports SHARP but the subnet manager "
            f"({subnet_managers.flavour_name(sm)}) cannot enable it (rule NET022)"
        )
    elif switch is not None and switch.sharp:
        why = f"switch `{fabric.switch_id}` supports SHARP but subnet_manager.sharp is off"
    elif switch is not None:
        why = f"switch `{fabric.switch_id}` ({switch.name}) has no SHARP engine"
    else:
        why = "no switch model on the compute fabric"
    return [NcclSetting("NCCL_COLLNET_ENABLE", "0", why, src)]


def profiles(cluster: ResolvedCluster, plan: Plan | None = None) -> tuple[NcclProfile, ...]:
    return tuple(derive(cluster, p, plan) for p in cluster.gpu_pools)


def applies(cluster: ResolvedCluster) -> bool:
    return any(p.gpu is not None and p.gpu.vendor == "nvidia" for p in cluster.gpu_pools)


def settings_vars(profile: NcclProfile) -> list[dict[str, str]]:
    """The settings as the nccl role's `nccl_settings` variable (same order)."""
    return [
        {"name": s.name, "value": s.value, "reason": one_line(s.reason), "source": one_line(s.source)}
        for s in profile.settings
    ]


def topology_vars(profile: NcclProfile) -> dict[str, object] | None:
    """The topology layout as the nccl role's `nccl_topology` variable (bus ids come from the host)."""
    t = profile.topology
    if t is None:
        return None
    return {
        "reason": t.reason,
        "link_speed": t.link_speed,
        "link_width": t.link_width,
        "gpu_sm": t.gpu_sm,
        "numa_nodes": [
            [{"gpus": list(sw.gpus), "nics": list(sw.nics), "nic_mbps": sw.nic_mbps} for sw in node]
            for node in t.numa_nodes
        ],
    }


def render(profile: NcclProfile, template: str) -> str:
    """Render one of the nccl role's own templates, so `nccl/` shows exactly what lands on the hosts."""
    import jinja2

    from generator.resources import playbooks_dir
    from generator.safetext import shell_word

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(playbooks_dir() / "roles" / "nccl" / "templates")),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
        trim_blocks=True,  # what Ansible's template module uses, so both renderings are byte-identical
    )
    env.filters["quote"] = lambda v: shell_word(str(v))  # Ansible's `quote` filter is shlex.quote too
    return env.get_template(template).render(
        nccl_settings=settings_vars(profile),
        nccl_pool=profile.pool,
        nccl_transport=profile.transport,
        nccl_plugin=profile.plugin,
        nccl_plugin_profile=profile.plugin_profile,
    )


def emit(cluster: ResolvedCluster, plan: Plan, out: FsPath) -> None:
    """`nccl/<pool>/nccl.conf` (= /etc/nccl.conf) and `nccl/<pool>/nccl.env` (= /etc/nccl/nccl.env)."""
    from generator.fsutil import atomic_write_text

    for profile in profiles(cluster, plan):
        atomic_write_text(out / profile.pool / "nccl.conf", render(profile, "nccl.conf.j2"))
        atomic_write_text(out / profile.pool / "nccl.env", render(profile, "nccl.env.j2"))


class NcclEmitter(Emitter):
    name = NAME
    order = 30

    def applies(self, cluster: ResolvedCluster) -> bool:
        return applies(cluster)

    def emit(self, ctx: BuildContext) -> None:
        emit(ctx.cluster, ctx.plan, ctx.out)
