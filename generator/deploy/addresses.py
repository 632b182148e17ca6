"""On-prem address plan (targets ``maas`` and ``none``): one source for the MAAS program and the inventory.

Management network (``deployment.maas.management_cidr``, default 10.0.0.0/16):

* the first ``max(10, min(256, size / 16))`` addresses are left for infrastructure (gateway, DNS, MAAS
  rack/region controllers, subnet managers, switch management): 16 on a /24, 256 on a /20 or larger;
* pools follow in blueprint order, each in its own block that starts on a 256-address boundary when the
  whole plan fits that way, else on a 16-address boundary, else packed (alignment 1);
* a pool of *n* hosts takes ``align × ceil((n + 1) / align)`` addresses and host *i* (1-based) is block
  start + *i*, so a pool never reaches the next pool's block (a 256-host pool takes 512 addresses);
* the last address (broadcast) is never handed out.

With 10.10.0.0/16 the first pool's hosts are 10.10.1.1, 10.10.1.2, ...; a 4-node lab on 10.10.0.0/24 gets
10.10.0.17-10.10.0.20. Fabric networks (``compute_cidr`` split into one subnet per rail, ``storage_cidr``):
addresses from ``FABRIC_STATIC_OFFSET`` in blueprint order, one per node and port.

On a routed (BGP) Ethernet/RoCE fabric (``cluster.routed_fabrics``) a host port does not share a subnet
with the other hosts of its rail, which sit behind other leaves: each host port and the leaf port it is
cabled to form one /31 point-to-point network (RFC 3021), the host on the first (even) address, the leaf
port on the second as the host's gateway, and the host routes its rail subnet and the whole fabric network
(``compute_cidr`` / ``storage_cidr``) via that gateway. This is NVIDIA's Spectrum-X design as its Network
Operator configures the hosts: one rail subnet per rail carved from one east-west network, a /31 per host
rail port (``perNodeNetworkPrefix: 31``), routes to the rail subnet and the east-west network
("Spectrum-X Quick Start", Step "Allocate Rail Subnets", docs.nvidia.com/networking/display/kubernetes2640/
spectrum-x/quick-start-single-plane.html), the gateway being the /31's second address and "TOR is the
gateway" (github.com/Mellanox/spectrum-x-operator: ``getHostsAllocation`` uses ``GetGatewayForSubnet(net,
1)`` for each host's ``network`` /31; docs/examples/spectrum-x-config.yaml). Each leaf announces its host
/31s in BGP (generator/emit/switches/; docs/switches.md). Pairs are handed out from ``FABRIC_STATIC_OFFSET``
(even) in the same blueprint order, two addresses per port. An appliance cabled to a routed fabric
(``appliances:``) is routed the same way: after the pools' ports, each of its cables takes a /31 with its leaf
port from the fabric's first subnet (``compute-rail0``, ``storage``): the plan is made before the cabling
places ``ports: N`` appliances on leaves, and every leaf announces each of its /31s whatever subnet it is
carved from. Without it the leaf port was a routed port with no address (no route to the appliance).

The MAAS program sets these addresses (static links on the planned interfaces); the inventory carries the
same ones; DEP010 reports at ``validate`` what does not fit.
"""

from __future__ import annotations

import ipaddress
import math
import socket
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar, cast

from generator.deploy.targets import onprem
from generator.findings import dotted

if TYPE_CHECKING:
    from generator.resolve import NicPort, ResolvedCluster, ResolvedPool

DEFAULT_MANAGEMENT_CIDR = "10.0.0.0/16"
DEFAULT_COMPUTE_CIDR = "10.100.0.0/16"
DEFAULT_STORAGE_CIDR = "10.200.0.0/16"
INFRA_MIN = 10
INFRA_MAX = 256
ALIGNMENTS = (256, 16, 1)
# First host offset in the fabric subnets (.1-.9 left for gateways and subnet managers).
FABRIC_STATIC_OFFSET = 10

Path = tuple[str | int, ...]
_Net = TypeVar("_Net", bound=ipaddress.IPv4Network | ipaddress.IPv6Network)
# Addresses a routed host port takes: its own and its leaf port's (one /31 each, RFC 3021).
ROUTED_PORT_ADDRESSES = 2


@dataclass(frozen=True)
class FabricAddress:
    """One planned address on a fabric port: the interface, its subnet and ``address/prefix``."""

    purpose: str  # compute | storage
    rail: int | None
    interface: str | None  # None: the port map does not name it (no host configuration is written)
    rdma_dev: str
    subnet: str  # compute-rail<r> | storage
    cidr: str
    address: str  # a.b.c.d/prefix (a /31 on a routed fabric)
    port: str = ""  # the plan's port id (mlx5_0/1): the switch end of its cable is found by it
    gateway: str | None = None  # routed fabric: the leaf port's address, the other one of the /31
    routes: tuple[str, ...] = ()  # routed fabric: the networks the host reaches via ``gateway``
    # a tenant pool's IPoIB: ``interface`` is the P_Key child of this parent, with this P_Key (full member)
    child_of: tuple[str, int] | None = None

    @property
    def leaf_address(self) -> str | None:
        """The leaf port's ``a.b.c.d/31`` (routed fabrics), what the switch configuration sets."""
        return f"{self.gateway}/{self.address.rpartition('/')[2]}" if self.gateway else None


@dataclass(frozen=True)
class PoolBlock:
    pool: str
    start: str  # block start address (host i = start + i)
    size: int


@dataclass(frozen=True)
class FabricSubnet:
    name: str
    cidr: str
    fabric: str
    rail: int | None
    used: int  # addresses handed out (from FABRIC_STATIC_OFFSET)


@dataclass
class OnPremPlan:
    management_cidr: str
    infrastructure: int = 0  # addresses left at the start of the management network
    alignment: int = 0
    blocks: list[PoolBlock] = field(default_factory=list)
    management: dict[str, str] = field(default_factory=dict)  # host -> address
    fabric: dict[str, list[FabricAddress]] = field(default_factory=dict)  # host -> addresses
    subnets: list[FabricSubnet] = field(default_factory=list)
    problems: list[tuple[Path, str]] = field(default_factory=list)


def interface_name(cluster: ResolvedCluster, pool: ResolvedPool, port: NicPort) -> str | None:
    """The Linux interface a fabric port appears as, from the platform port map (generator/platform/ports.py)
    or the blueprint's declared ports; None when neither publishes it (PLT001 reports it): the address is
    still planned and reserved, but no host configuration is written for an interface nobody named."""
    return port.netdev if port.netdev_known else None


IFNAMSIZ = 16  # <linux/if.h>: an interface name is at most 15 characters and its NUL


def ipoib_child(
    cluster: ResolvedCluster, pool: ResolvedPool, port: NicPort
) -> tuple[str | None, tuple[str, int] | None]:
    """The interface a fabric port's address goes on, and (parent, P_Key) when it is an IPoIB P_Key child.

    The IPoIB driver's interface for a port uses the P_Key at index 0 (Linux Documentation/infiniband/
    ipoib.rst, "Partitions and P_Keys"), Default; a tenant pool is a limited member there, and limited
    members cannot talk to each other (IBA vol. 1, 10.9.1). So a tenant's IPoIB runs on a child interface
    of its home partition's P_Key (full member), named as the driver names one, ``<parent>.<pkey as %04x>``
    (ipoib.rst: "echo 0x8001 > /sys/class/net/ib0/create_child ... creates an interface named ib0.8001").
    A name past 15 characters (IFNAMSIZ) cannot be had (cut, it could be the parent's own): none, as for a
    home partition without ``ipoib: true``, which has no IPoIB broadcast group (OpenSM partition-config.txt:
    the ipoib flag "indicates that this partition may be used for IPoIB"); NET020 warns of both."""
    from generator.plan.subnet_manager import FULL_MEMBER, home_partition

    netdev = interface_name(cluster, pool, port)
    fabric = cluster.fabrics.get(port.purpose)
    sm = fabric.spec.subnet_manager if fabric is not None and fabric.kind == "infiniband" else None
    home = home_partition(sm, pool.name) if sm is not None and not cluster.is_cloud else None
    if netdev is None or home is None:
        return netdev, None
    pkey = FULL_MEMBER | home[1].pkey
    name = child_name(netdev, pkey)
    if not home[1].ipoib or name is None:
        return None, None
    return name, (netdev, pkey)


def child_name(parent: str, pkey: int) -> str | None:
    """``<parent>.<pkey>``, or None where that is longer than an interface name may be."""
    name = f"{parent}.{pkey:04x}"
    return name if len(name) < IFNAMSIZ else None


def onprem_cidrs(cluster: ResolvedCluster) -> tuple[str, str, str]:
    """The on-prem management, compute and storage blocks: MAAS's settings, else the defaults; a compute
    block nobody set is the default's size or, for a plan its /16 cannot hold, the smallest aligned block
    around it that can (``_sized_compute``)."""
    maas = cluster.blueprint.deployment.maas
    if maas is None:
        return DEFAULT_MANAGEMENT_CIDR, _sized_compute(cluster), DEFAULT_STORAGE_CIDR
    compute = maas.compute_cidr if "compute_cidr" in maas.model_fields_set else _sized_compute(cluster)
    return maas.management_cidr, compute, maas.storage_cidr


def _sized_compute(cluster: ResolvedCluster) -> str:
    """DEFAULT_COMPUTE_CIDR, or the smallest block holding it whose rail subnets (as _fabric_subnets cuts
    them) hold the compute fabric's host ports: the /16 holds 8,181 nodes a rail of 8 (4,090 on a routed
    fabric, a /31 each), so a larger plan (the limits allow 16,384 nodes) could not be addressed at all
    without MAAS, whose compute_cidr is the only setting of it."""
    default = ipaddress.IPv4Network(DEFAULT_COMPUTE_CIDR)
    if "compute" not in cluster.fabrics:
        return DEFAULT_COMPUTE_CIDR
    rails, ports = _compute_demand(cluster)
    routed = "compute" in cluster.routed_fabrics
    ports += appliance_cables(cluster, "compute")  # in the first rail subnet, with that rail's hosts
    for prefix in range(default.prefixlen, 7, -1):
        block = default.supernet(new_prefix=prefix)
        subnets = split(block, max(rails, 1))
        if subnets is not None and rail_room(subnets[0], routed) >= ports:
            return str(block)
    return DEFAULT_COMPUTE_CIDR  # past a /8: DEP010 says what does not fit


def _compute_demand(cluster: ResolvedCluster) -> tuple[int, int]:
    """(rails, host ports a rail) of the compute fabric: its pools' most compute ports, its nodes."""
    rails = max((len(p.ports_for("compute")) for p in cluster.pools), default=0)
    return rails, sum(p.count for p in cluster.pools_on("compute"))


def routed_appliances(cluster: ResolvedCluster, fabric: str) -> list[tuple[str, int]]:
    """(name, cables) of each appliance cabled to ``fabric`` when it is routed (a /31 per cable), in
    blueprint order; none on a fabric that is not routed (an InfiniBand or layer-2 one)."""
    if fabric not in cluster.routed_fabrics:
        return []
    return [
        (a.name, len(a.links) if a.links else a.ports or 0)
        for a in cluster.blueprint.appliances
        if a.fabric == fabric
    ]


def appliance_cables(cluster: ResolvedCluster, fabric: str) -> int:
    return sum(n for _, n in routed_appliances(cluster, fabric))


def rail_room(subnet: ipaddress.IPv4Network, routed: bool) -> int:
    """Host ports a fabric subnet holds: its addresses less the broadcast and the infrastructure range, two
    a port when routed (the host's and its leaf port's /31)."""
    room = subnet.num_addresses - 1 - FABRIC_STATIC_OFFSET
    return max(room, 0) // (ROUTED_PORT_ADDRESSES if routed else 1)


def _overlaps(cluster: ResolvedCluster) -> list[tuple[Path, str]]:
    """The on-prem networks that overlap: the MAAS management, compute and storage blocks, and each routed
    fabric's switch loopback block (loopback blocks may be one pool, which the fabrics share). A host would
    hold two routes to one range (its management address and a fabric rail's), or reach a switch loopback
    through its own rail; the one that comes later is named."""
    from blueprints.models.fabric import Underlay

    named = [*onprem_blocks(cluster)]
    for name in cluster.routed_fabrics:
        fab = cluster.fabrics[name]
        path = (*fab.source_path, "underlay", "loopback_cidr")
        named.append((path, (fab.spec.underlay or Underlay()).loopback_cidr, dotted(path)))
    nets = []
    for path, text, label in named:
        try:
            nets.append((path, text, label, ipaddress.ip_network(text, strict=False)))
        except ValueError:
            continue  # refused where it is parsed
    out = []
    for i, (path, text, _, net) in enumerate(nets):
        for other_path, other_text, other_label, other in nets[:i]:
            if "loopback_cidr" in path and "loopback_cidr" in other_path:
                continue  # routed fabrics share a loopback pool by design (plan/switch_numbers.py)
            if net.version == other.version and net.overlaps(other):  # type: ignore[arg-type]
                why = f"`{text}` overlaps `{other_text}` ({other_label}): give each network its own block"
                out.append((path, why))
                break
    return out


def onprem_blocks(cluster: ResolvedCluster) -> list[tuple[Path, str, str]]:
    """The on-prem management, compute and storage blocks as (blueprint path, CIDR, how to name it): MAAS's
    settings, or the defaults the plan takes without MAAS (the hosts' fabric addresses come from them
    whatever deploys the machines), named as such."""
    keys = ("management_cidr", "compute_cidr", "storage_cidr")
    maas = cluster.blueprint.deployment.maas is not None
    out = []
    for key, cidr in zip(keys, onprem_cidrs(cluster), strict=True):
        path: Path = ("deployment", "maas", key)
        what = key.removesuffix("_cidr")
        out.append((path, cidr, dotted(path) if maas else f"the default {what} block, deployment.maas.{key}"))
    return out


def checked_network(
    text: str, path: Path, problems: list[tuple[Path, str]]
) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    """``text`` as a network written without host bits; else None, the reason appended to ``problems`` at
    ``path``. The check of every blueprint CIDR: the on-prem plan's here, the cloud's in address_plan.py."""
    try:
        net = ipaddress.ip_network(text, strict=False)
    except ValueError as exc:
        problems.append((path, f"`{text}` is not an IPv4 network: {exc}"))
        return None
    if str(net) != text:
        problems.append((path, f"`{text}` has host bits set; the network is {net}"))
        return None
    return net


def _network(text: str, path: Path, plan: OnPremPlan) -> ipaddress.IPv4Network | None:
    net = checked_network(text, path, plan.problems)
    if net is None:
        return None
    if not isinstance(net, ipaddress.IPv4Network):
        plan.problems.append((path, f"`{text}` is not an IPv4 network"))
        return None
    return net


def _round_up(n: int, align: int) -> int:
    return align * math.ceil(n / align)


def _layout(size: int, counts: list[int]) -> tuple[int, int, list[tuple[int, int]]] | None:
    """(infrastructure, alignment, [(start offset, block size)]) for the first alignment that fits."""
    infra = max(INFRA_MIN, min(INFRA_MAX, size // 16))
    for align in ALIGNMENTS:
        offset = _round_up(infra, align)
        blocks = []
        for count in counts:
            block = _round_up(count + 1, align)
            blocks.append((offset, block))
            offset += block
        last_host = blocks[-1][0] + counts[-1] if blocks else 0
        if last_host <= size - 2:  # size - 1 is the broadcast address
            return infra, align, blocks
    return None


def _management(cluster: ResolvedCluster, cidr: str, plan: OnPremPlan) -> None:
    placed = _management_blocks(cluster, cidr, plan)
    if placed is None:
        return
    net, blocks = placed
    for pool, (start, size) in zip(cluster.pools, blocks, strict=True):
        plan.blocks.append(PoolBlock(pool.name, str(net.network_address + start), size))
        base = int(net.network_address) + start
        for i, host in enumerate(pool.hostnames, start=1):
            plan.management[host] = _dotted(base + i)


def _management_blocks(
    cluster: ResolvedCluster, cidr: str, plan: OnPremPlan
) -> tuple[ipaddress.IPv4Network, list[tuple[int, int]]] | None:
    """The management network and each pool's (start offset, size) in it; None (with the problem recorded)
    when it does not parse or the pools do not fit."""
    path: Path = ("deployment", "maas", "management_cidr")
    net = _network(cidr, path, plan)
    if net is None or not cluster.pools:
        return None
    counts = [p.count for p in cluster.pools]
    layout = _layout(net.num_addresses, counts)
    if layout is None:
        infra = max(INFRA_MIN, min(INFRA_MAX, net.num_addresses // 16))
        need = infra + sum(c + 1 for c in counts) + 1
        prefix = 32 - math.ceil(math.log2(need))
        plan.problems.append(
            (
                path,
                f"management network {cidr} has {net.num_addresses} addresses; {cluster.node_count} hosts "
                f"in {len(counts)} pool(s) after the {infra} left for infrastructure need {need}: "
                f"use a /{prefix} or larger",
            )
        )
        return None
    plan.infrastructure, plan.alignment, blocks = layout
    return net, blocks


def split(net: _Net, parts: int, longest: int = 30) -> list[_Net] | None:
    """The first ``parts`` of ``net`` cut into equal power-of-two subnets, or None when they would be longer
    than /``longest``: the one subnet splitter of the address plans (this module's rails and storage, and
    generator/deploy/address_plan.py's cloud layouts)."""
    bits = math.ceil(math.log2(parts)) if parts > 1 else 0
    if net.prefixlen + bits > longest:
        return None
    return cast("list[_Net]", list(net.subnets(prefixlen_diff=bits))[:parts])


def _fabric_subnets(
    cluster: ResolvedCluster, compute_cidr: str, storage_cidr: str, plan: OnPremPlan
) -> dict[str, ipaddress.IPv4Network]:
    """Subnet name -> network for the compute rails and the storage fabric, with the fit checked."""
    out: dict[str, ipaddress.IPv4Network] = {}
    wanted: list[tuple[str, str, list[tuple[str, int | None]], int]] = []
    if "compute" in cluster.fabrics:
        rails, nodes = _compute_demand(cluster)
        wanted.append(("compute", compute_cidr, [(f"compute-rail{r}", r) for r in range(rails)], nodes))
    if "storage" in cluster.fabrics:
        nodes = sum(p.count * len(p.ports_for("storage")) for p in cluster.pools_on("storage"))
        wanted.append(("storage", storage_cidr, [("storage", None)], nodes))
    for fabric, cidr, names, ports in wanted:
        path: Path = ("deployment", "maas", f"{fabric}_cidr")
        net = _network(cidr, path, plan)
        if net is None or not names:
            continue
        nets = split(net, len(names))
        if nets is None:
            plan.problems.append((path, f"{cidr} cannot be split into {len(names)} subnets for {fabric}"))
            continue
        routed = fabric in cluster.routed_fabrics
        for k, ((name, rail), sub) in enumerate(zip(names, nets, strict=True)):
            holds = rail_room(sub, routed)
            if k == 0:  # the routed appliances' /31s follow the hosts' in the fabric's first subnet
                ports += appliance_cables(cluster, fabric)
            if holds < ports:
                what = (
                    "host ports of the routed fabric (a /31 each: host and leaf port)"
                    if routed
                    else ("node addresses")
                )
                plan.problems.append(
                    (path, f"{fabric} subnet {sub} ({name}) holds {holds} {what}, {ports} needed")
                )
            out[name] = sub
            plan.subnets.append(FabricSubnet(name, str(sub), fabric, rail, 0))
    return out


def _dotted(address: int) -> str:
    """a.b.c.d of an IPv4 address as an int: ipaddress's own str() costs ~8 µs, too much at 100k hosts."""
    return socket.inet_ntoa(address.to_bytes(4, "big"))


def _fabric(cluster: ResolvedCluster, nets: dict[str, ipaddress.IPv4Network], plan: OnPremPlan) -> None:
    used = dict.fromkeys(nets, 0)
    cidrs = onprem_cidrs(cluster)
    whole = {"compute": cidrs[1], "storage": cidrs[2]}  # the fabric network a routed host reaches
    for pool in cluster.pools:
        ports = [
            p for p in pool.ports if p.purpose in ("compute", "storage") and p.purpose in cluster.fabrics
        ]
        slots = _port_slots(cluster, pool, ports, nets)
        for host in pool.hostnames:
            plan.fabric[host] = _take(slots, used, whole)
    for fabric, subnet in (("compute", "compute-rail0"), ("storage", "storage")):
        net = nets.get(subnet)
        if net is None:
            continue
        for name, cables in routed_appliances(cluster, fabric):
            slots = [_appliance_slot(fabric, subnet, net, k) for k in range(1, cables + 1)]
            plan.fabric[name] = _take(slots, used, whole)
    plan.subnets = [FabricSubnet(s.name, s.cidr, s.fabric, s.rail, used[s.name]) for s in plan.subnets]


def _take(slots: list[_PortSlot], used: dict[str, int], whole: dict[str, str]) -> list[FabricAddress]:
    """One device's addresses, the next free ones of each slot's subnet (``used`` counts them)."""
    rows = []
    for slot in slots:
        offset = FABRIC_STATIC_OFFSET + used[slot.subnet]
        used[slot.subnet] += ROUTED_PORT_ADDRESSES if slot.routed else 1
        if offset + (1 if slot.routed else 0) >= slot.size - 1:
            continue  # reported by _fabric_subnets
        rows.append(_address_of(slot, slot.base + offset, whole[slot.purpose]))
    return rows


def _appliance_slot(fabric: str, subnet: str, net: ipaddress.IPv4Network, k: int) -> _PortSlot:
    """An appliance's k-th cable on a routed fabric: no interface of ours (its own OS names it), the plan's
    port ``p<k>`` (generator/plan/attached.py ``appliance_port``), where the leaf's configuration finds it."""
    from generator.plan.attached import appliance_port

    return _PortSlot(fabric, None, None, "", subnet, str(net), int(net.network_address), net.prefixlen,
                     net.num_addresses, appliance_port(k), True)  # fmt: skip


def _address_of(slot: _PortSlot, address: int, whole: str) -> FabricAddress:
    """The host port's address; on a routed fabric its /31, gateway (the next address) and routes."""
    if not slot.routed:
        prefix = f"{_dotted(address)}/{slot.prefixlen}"
        return FabricAddress(slot.purpose, slot.rail, slot.interface, slot.rdma_dev, slot.subnet, slot.cidr,
                             prefix, slot.port, child_of=slot.child_of)  # fmt: skip
    routes = (slot.cidr,) if slot.cidr == whole else (slot.cidr, whole)
    return FabricAddress(slot.purpose, slot.rail, slot.interface, slot.rdma_dev, slot.subnet, slot.cidr,
                         f"{_dotted(address)}/31", slot.port, _dotted(address + 1), routes)  # fmt: skip


@dataclass(frozen=True)
class _PortSlot:
    """What every host of a pool shares for one fabric port: only the address offset differs per host."""

    purpose: str
    rail: int | None
    interface: str | None
    rdma_dev: str
    subnet: str
    cidr: str
    base: int  # network address as an int
    prefixlen: int
    size: int
    port: str  # the plan's port id
    routed: bool  # a /31 with the leaf port (cluster.routed_fabrics)
    child_of: tuple[str, int] | None = None  # (parent interface, P_Key): a tenant pool's IPoIB child


def _port_slots(
    cluster: ResolvedCluster,
    pool: ResolvedPool,
    ports: list[NicPort],
    nets: dict[str, ipaddress.IPv4Network],
) -> list[_PortSlot]:
    slots = []
    for port in ports:
        name = f"compute-rail{port.index}" if port.purpose == "compute" else "storage"
        net = nets.get(name)
        if net is None:
            continue
        interface, child_of = ipoib_child(cluster, pool, port)
        slots.append(
            _PortSlot(
                port.purpose,
                port.index if port.purpose == "compute" else None,
                interface,
                port.rdma_dev,
                name,
                str(net),
                int(net.network_address),
                net.prefixlen,
                net.num_addresses,
                port.plan_port,
                port.purpose in cluster.routed_fabrics,
                child_of,
            )
        )
    return slots


def host_port_addresses(cluster: ResolvedCluster, fabric: str) -> dict[tuple[str, str], FabricAddress]:
    """(host, plan port id) -> the planned address of every host port on ``fabric``: what the switch
    configuration puts on the leaf port facing it (``FabricAddress.leaf_address``)."""
    return {
        (host, a.port): a
        for host, rows in onprem_plan(cluster).fabric.items()
        for a in rows
        if a.purpose == fabric
    }


# The last plan and the cluster it was made for: the inventory, group_vars, the MAAS program and the cloud
# address plan all read it, and at 100,000 hosts building it costs seconds. Keyed by identity because a
# ResolvedCluster is immutable; callers only read the plan.
_LAST: list[tuple[ResolvedCluster, OnPremPlan]] = []


def onprem_plan(cluster: ResolvedCluster) -> OnPremPlan:
    """The management and fabric addresses of every host (empty for cloud targets)."""
    if _LAST and _LAST[0][0] is cluster:
        return _LAST[0][1]
    plan = _make_plan(cluster)
    _LAST[:] = [(cluster, plan)]
    return plan


def management_addresses(cluster: ResolvedCluster) -> dict[str, str]:
    """Host -> management address, the same as ``onprem_plan(cluster).management``, without the fabric
    addresses (what ``validate`` reads: NET019's DHCP relay, issue 32)."""
    if _LAST and _LAST[0][0] is cluster:
        return _LAST[0][1].management
    mgmt = onprem_cidrs(cluster)[0]
    plan = OnPremPlan(mgmt)
    if onprem(cluster.target):
        _management(cluster, mgmt, plan)
    return plan.management


def onprem_problems(cluster: ResolvedCluster) -> list[tuple[Path, str]]:
    """What does not fit in the on-prem plan (DEP010), the same as ``onprem_plan(cluster).problems``, by
    arithmetic on the counts: no host's address is written out (8,192 of them on the dragonfly example)."""
    if _LAST and _LAST[0][0] is cluster:
        return _LAST[0][1].problems
    mgmt, compute, storage = onprem_cidrs(cluster)
    plan = OnPremPlan(mgmt)
    if onprem(cluster.target):
        _management_blocks(cluster, mgmt, plan)
        _fabric_subnets(cluster, compute, storage, plan)  # _fabric only hands out what these checked
        plan.problems.extend(_overlaps(cluster))
    return plan.problems


def _make_plan(cluster: ResolvedCluster) -> OnPremPlan:
    mgmt, compute, storage = onprem_cidrs(cluster)
    plan = OnPremPlan(mgmt)
    if not onprem(cluster.target):
        return plan
    _management(cluster, mgmt, plan)
    nets = _fabric_subnets(cluster, compute, storage, plan)
    _fabric(cluster, nets, plan)
    plan.problems.extend(_overlaps(cluster))
    return plan


def reserved_range(subnet: FabricSubnet) -> tuple[str, str] | None:
    """First and last planned address of a fabric subnet (reserved in MAAS so it never assigns them)."""
    if not subnet.used:
        return None
    net = ipaddress.ip_network(subnet.cidr)
    first = net.network_address + FABRIC_STATIC_OFFSET
    return str(first), str(first + subnet.used - 1)


def management_interface(cluster: ResolvedCluster, pool: ResolvedPool) -> str | None:
    """The management (PXE) interface, when the platform port map names the host's in-band port. None: the
    MAAS program reads the stack setting `managementInterface` (the name MAAS shows after commissioning)."""
    from generator.platform.ports import host_interface

    return host_interface(pool, cluster.fabrics)
