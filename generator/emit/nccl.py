"""NCCL settings derived from the resolved fabric, and the ``nccl/`` output (env file, nccl.conf, topology).

Nothing here is copied from a vendor script: every setting is chosen by a blueprint or catalogue fact
and carries that fact as its ``reason`` and ``source`` (the dotted blueprint path, or the catalogue
entry). ``derive(cluster, pool, plan)`` is a pure function; the Ansible emitter writes the same
settings into ``group_vars/pool_<pool>.yml`` and the nccl role installs them on the hosts.

References: the NCCL user guide, Environment Variables
(docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html) and NVIDIA/nccl src/transport/net_ib
(defaults); topology XML as in Azure/azhpc-images topology/ndv5-topo.xml.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path as FsPath
from typing import TYPE_CHECKING

from generator.findings import dotted
from generator.safetext import one_line

if TYPE_CHECKING:
    from generator.plan.model import Plan
    from generator.resolve import NicPort, ResolvedCluster, ResolvedPool

NAME = "nccl"

# Where the nccl role installs the files (the env file is sourced by job scripts / Slurm prolog).
CONF_PATH = "/etc/nccl.conf"
ENV_PATH = "/etc/nccl/nccl.env"
TOPO_PATH = "/etc/nccl/topo.xml"

# ConnectX GID table with one IPv4 address per port: 0/1 = link-local IPv6 RoCE v1/v2,
# 2/3 = IPv4-mapped RoCE v1/v2, so index 3 is RoCE v2 over IPv4 (NCCL env.html, NCCL_IB_GID_INDEX; Juniper's
# JVD "How to Run a NCCL Test Using Autoconfigured IPv6 Address": RoCE v2 is "usually GID index 3").
ROCE_V2_IPV4_GID_INDEX = 3
# Cloud fabrics that are not verbs devices (catalogue cloud.*.fabric values).
CLOUD_PLUGIN_FABRICS = {
    "efa": "aws-ofi-nccl",
    "gpudirect-tcpx": "gpudirect-tcpx",
    "gpudirect-tcpxo": "gpudirect-tcpxo",
}


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
    transport: str  # ib | roce | socket | efa | tcpx | tcpxo
    settings: tuple[NcclSetting, ...]
    plugin: str | None  # nccl-rdma-sharp-plugins | aws-ofi-nccl | gpudirect-tcpx | gpudirect-tcpxo | None
    topology: NcclTopology | None

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
    """Compute ports sorted by the rail the plan cabled them to (falls back to the NIC index)."""
    if plan is None or not pool.hostnames:
        return ports, "rail i = compute NIC i (architecture naming)"
    host = pool.hostnames[0]
    rail_of: dict[str, int] = {}
    for link in plan.links_of("compute"):
        for ep in (link.a, link.b):
            if ep.device == host and link.rail is not None:
                rail_of[ep.port] = link.rail
    if not rail_of:
        return ports, "rail i = compute NIC i (architecture naming)"
    ordered = tuple(sorted(ports, key=lambda p: (rail_of.get(f"{p.rdma_dev}/{p.port}", 1 << 20), p.index)))
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
    if pool.cloud is not None:
        return NcclSetting(
            "NCCL_NET_GDR_LEVEL",
            "SYS",
            f"cloud instance `{pool.server_id}`: the VM's PCI tree is flat/virtual, so GPUDirect "
            "RDMA must be allowed at any distance (NCCL env.html, NCCL_NET_GDR_LEVEL)",
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


def _socket_ifname(cluster: ResolvedCluster, pool: ResolvedPool) -> NcclSetting | None:
    mgmt = pool.ports_for("management")
    if mgmt:
        return NcclSetting(
            "NCCL_SOCKET_IFNAME",
            f"={mgmt[0].netdev}",
            f"bootstrap over the management port ({mgmt[0].netdev}, {mgmt[0].model}) so it never "
            "lands on a compute rail",
            _pool_path(cluster, pool, "server"),
        )
    if pool.cloud is not None:
        return NcclSetting(
            "NCCL_SOCKET_IFNAME",
            "=eth0",
            f"cloud instance `{pool.server_id}`: eth0 is the primary (front-end) interface",
            _pool_path(cluster, pool, "server"),
        )
    return None


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


def derive(cluster: ResolvedCluster, pool: ResolvedPool, plan: Plan | None = None) -> NcclProfile:
    """NCCL settings for one GPU pool, each with the blueprint fact that chose it."""
    out: list[NcclSetting] = []
    compute_fabric = cluster.fabrics.get("compute")
    plugin: str | None = None
    cloud_fabric = pool.cloud.fabric if pool.cloud is not None else None
    compute_ports = pool.ports_for("compute")

    if cloud_fabric in CLOUD_PLUGIN_FABRICS:
        transport = {"efa": "efa", "gpudirect-tcpx": "tcpx", "gpudirect-tcpxo": "tcpxo"}[cloud_fabric]
        plugin = CLOUD_PLUGIN_FABRICS[cloud_fabric]
        out.extend(_cloud_plugin_settings(cluster, pool, transport))
    else:
        if cloud_fabric is not None:
            tech = cluster.catalog.fabrics.get(cloud_fabric)
            kind: str = tech.kind if tech else "ethernet"
            tech_src = f"catalog:cloud.{pool.server_id}.fabric"
            tech_name = cloud_fabric
        elif compute_fabric is not None:
            kind = compute_fabric.kind
            tech_src = _path(*compute_fabric.source_path, "technology")
            tech_name = compute_fabric.technology
        else:
            kind, tech_src, tech_name = "none", "fabrics.compute", "none"
        transport = {"infiniband": "ib", "roce": "roce"}.get(kind, "socket")
        ordered, order_why = _rail_order(pool, compute_ports, plan)
        if transport in ("ib", "roce") and ordered:
            if pool.cloud is not None and cluster.target == "azure":
                # Azure HPC images rename the IB devices mlx5_ib0..N (Azure/azhpc-images).
                out.append(
                    NcclSetting(
                        "NCCL_IB_HCA",
                        "mlx5_ib",
                        f"Azure `{pool.server_id}`: the image names the {len(ordered)} IB devices "
                        "mlx5_ib*; the prefix selects them and not the accelerated-networking NIC",
                        f"catalog:cloud.{pool.server_id}.network_cards",
                    )
                )
            else:
                hcas = ",".join(f"{p.rdma_dev}:{p.port}" for p in ordered)
                others = [p.rdma_dev for p in pool.ports if p.purpose != "compute"]
                names = sorted(set(others), key=lambda d: (len(d), d))
                excl = f"; `=` (exact match) keeps {', '.join(names)} out" if others else ""
                out.append(
                    NcclSetting(
                        "NCCL_IB_HCA",
                        f"={hcas}",
                        f"the {len(ordered)} compute ports of `{pool.server_id}` in rail order "
                        f"({order_why}){excl}",
                        _pool_path(cluster, pool, "server"),
                    )
                )
        elif transport == "socket":
            out.append(
                NcclSetting(
                    "NCCL_IB_DISABLE",
                    "1",
                    f"compute fabric `{tech_name}` is plain Ethernet without RDMA",
                    tech_src,
                )
            )
            if compute_ports:
                ifnames = ",".join(sorted({p.netdev for p in compute_ports}))
                out.append(
                    NcclSetting(
                        "NCCL_SOCKET_IFNAME",
                        f"={ifnames}",
                        "socket transport over the compute ports",
                        _pool_path(cluster, pool, "server"),
                    )
                )
        sock = _socket_ifname(cluster, pool)
        if sock is not None and transport != "socket":
            out.append(sock)
        if transport == "roce":
            ll = compute_fabric.spec.lossless if compute_fabric is not None else None
            from blueprints.models.fabric import Lossless

            lossless = ll or Lossless()
            ll_src = _path("fabrics", "compute", "lossless", "dscp")
            given = "" if ll else " (fabrics.compute.lossless not given: model default)"
            out.append(
                NcclSetting(
                    "NCCL_IB_GID_INDEX",
                    str(ROCE_V2_IPV4_GID_INDEX),
                    f"RoCE v2 over IPv4 on `{tech_name}`: GID 3 in the default ConnectX GID table",
                    tech_src,
                )
            )
            out.append(
                NcclSetting(
                    "NCCL_IB_TC",
                    str(lossless.dscp << 2),
                    f"traffic class = DSCP {lossless.dscp} << 2 so RDMA traffic lands in the lossless "
                    f"class (PFC priority {lossless.pfc_priority}){given}",
                    ll_src,
                )
            )
        if transport == "ib":
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
        if transport in ("ib", "roce"):
            out.append(_gdr_level(cluster, pool))
            out.append(_cross_nic(cluster, compute_fabric))
        if transport == "ib" and compute_fabric is not None:
            sharp = _sharp(cluster, compute_fabric)
            out.extend(sharp)
            if sharp and sharp[0].value == "1":
                plugin = "nccl-rdma-sharp-plugins"
    if pool.gpu is not None and pool.gpu.vendor == "nvidia":
        out.append(_nvls(cluster, pool))
    topo = _topology(cluster, pool, compute_ports) if transport in ("ib", "roce") else None
    if topo is not None:
        out.append(NcclSetting("NCCL_TOPO_FILE", TOPO_PATH, topo.reason, _pool_path(cluster, pool, "server")))
    return NcclProfile(pool.name, transport, tuple(out), plugin, topo)


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
    if switch is not None and switch.sharp and sm is not None and sm.sharp:
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
    if switch is not None and switch.sharp:
        why = f"switch `{fabric.switch_id}` supports SHARP but subnet_manager.sharp is off"
    elif switch is not None:
        why = f"switch `{fabric.switch_id}` ({switch.name}) has no SHARP engine"
    else:
        why = "no switch model on the compute fabric"
    return [NcclSetting("NCCL_COLLNET_ENABLE", "0", why, src)]


def _cloud_plugin_settings(cluster: ResolvedCluster, pool: ResolvedPool, transport: str) -> list[NcclSetting]:
    inst = pool.cloud
    assert inst is not None
    src = f"catalog:cloud.{pool.server_id}"
    cards = inst.network_cards
    if transport == "efa":
        return [
            NcclSetting(
                "FI_PROVIDER",
                "efa",
                f"`{pool.server_id}` attaches {cards} EFA devices; libfabric must use "
                "the efa provider (aws-ofi-nccl plug-in)",
                f"{src}.fabric",
            ),
            NcclSetting(
                "FI_EFA_USE_DEVICE_RDMA",
                "1",
                f"{inst.gpu} instance: EFA supports RDMA read, so GPUDirect RDMA is used",
                f"{src}.gpu",
            ),
            NcclSetting(
                "FI_EFA_FORK_SAFE",
                "1",
                "python data loaders fork; libfabric must register memory fork-safely",
                f"{src}.fabric",
            ),
            NcclSetting(
                "NCCL_SOCKET_IFNAME",
                "^lo,docker",
                "bootstrap over the primary ENI, never loopback or container bridges",
                f"{src}.fabric",
            ),
            NcclSetting("NCCL_NET_GDR_LEVEL", "SYS", "VM with a flat virtual PCI tree", f"{src}.fabric"),
        ]
    data_ifs = ",".join(f"eth{i}" for i in range(1, cards + 1))
    if transport == "tcpx":
        return [
            NcclSetting(
                "NCCL_NET", "GPUDirectTCPX_v7", f"`{pool.server_id}` uses GPUDirect-TCPX", f"{src}.fabric"
            ),
            NcclSetting(
                "NCCL_GPUDIRECTTCPX_SOCKET_IFNAME",
                data_ifs,
                f"the {cards} data NICs of `{pool.server_id}` (eth0 is the control NIC)",
                f"{src}.network_cards",
            ),
            NcclSetting(
                "NCCL_GPUDIRECTTCPX_CTRL_DEV", "eth0", "control traffic on the primary NIC", f"{src}.fabric"
            ),
            NcclSetting("NCCL_SOCKET_IFNAME", "=eth0", "bootstrap on the primary NIC", f"{src}.fabric"),
            NcclSetting(
                "NCCL_CROSS_NIC", "0", "each GPU pair is bound to its own data NIC", f"{src}.network_cards"
            ),
        ]
    return [
        NcclSetting(
            "NCCL_NET", "FasTrak", f"`{pool.server_id}` uses GPUDirect-TCPXO (FasTrak)", f"{src}.fabric"
        ),
        NcclSetting(
            "NCCL_FASTRAK_IFNAME",
            data_ifs,
            f"the {cards} data NICs of `{pool.server_id}`",
            f"{src}.network_cards",
        ),
        NcclSetting("NCCL_FASTRAK_CTRL_DEV", "eth0", "control traffic on the primary NIC", f"{src}.fabric"),
        NcclSetting("NCCL_SOCKET_IFNAME", "=eth0", "bootstrap on the primary NIC", f"{src}.fabric"),
        NcclSetting("NCCL_CROSS_NIC", "0", "each GPU is bound to its own data NIC", f"{src}.network_cards"),
    ]


def profiles(cluster: ResolvedCluster, plan: Plan | None = None) -> tuple[NcclProfile, ...]:
    return tuple(derive(cluster, p, plan) for p in cluster.gpu_pools)


def applies(cluster: ResolvedCluster) -> bool:
    return any(p.gpu is not None and p.gpu.vendor == "nvidia" for p in cluster.gpu_pools)


def settings_vars(profile: NcclProfile) -> list[dict[str, str]]:
    """The settings as the nccl role's `nccl_settings` variable (same order)."""
    # reason and source land in `#` comments of nccl.conf / nccl.env: one line each, whatever the
    # catalogue says
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
        nccl_settings=settings_vars(profile), nccl_pool=profile.pool, nccl_transport=profile.transport
    )


def emit(cluster: ResolvedCluster, plan: Plan, out: FsPath) -> None:
    """`nccl/<pool>/nccl.conf` (= /etc/nccl.conf) and `nccl/<pool>/nccl.env` (= /etc/nccl/nccl.env)."""
    from generator.fsutil import atomic_write_text

    for profile in profiles(cluster, plan):
        atomic_write_text(out / profile.pool / "nccl.conf", render(profile, "nccl.conf.j2"))
        atomic_write_text(out / profile.pool / "nccl.env", render(profile, "nccl.env.j2"))
