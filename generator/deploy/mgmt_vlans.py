"""The management fabric's VLANs, read from the plan: per leaf, which port is an access port of which VLAN,
its uplinks, the SVI (gateway) of each VLAN and where DHCP is relayed to (build/switches/management/,
rule NET019, docs/switches.md "Management network").

Roles. NVIDIA keeps the hosts' in-band management and the BMCs apart: DGX BasePOD has "managementnet
(internalnet) - network used exclusively within the cluster, for storage and in-band management" and
"oobmanagementnet (ipminet) - network for out of band management, connecting BMCs" (DGX BasePOD Deployment
Guide, "Networking" > "DGX BasePOD Network Overview"); the SuperPOD's OOB fabric "connects the management
ports of all devices" (DGX SuperPOD H100 RA, "Out-of-Band Management Network"). Here every host port cabled
to the management fabric is an access port in the VLAN of its role: ``bmc`` for a port the port map names
the BMC, or a management NIC without a map entry (servers.yaml's management NIC is the BMC port:
generator/platform/ports.py ``ROLES_FOR_PURPOSE``, the same reading as NetBox's ``mgmt_only``), ``inband``
for any other (in-band / front-end) port. Ids: ``fabrics.management.vlans`` (default 10 in-band, 20 BMC).

Layer 3 at the leaf. The plan cables every leaf to every spine and no peer link between two switches, so
the uplinks are what the topology gives: routed, BGP unnumbered with the compute underlay's ASN plan
(RFC 7938; an MLAG pair needs a peer link the plan does not cable). Each leaf is the gateway of its own
subnet per VLAN (a block of ``<role>_cidr``, the same size on every leaf: the most host ports any leaf has in
that VLAN, plus network, gateway and broadcast), announces it in BGP, and relays DHCP from the SVIs to
``dhcp_server`` (Cumulus Linux: "in a BGP unnumbered environment with DHCP relay, the source IP address is
the loopback IP address and the gateway IP address is the SVI IP address", user guide 5.14/5.15, "DHCP
Relays"): the server picks the pool of the leaf's subnet from the relay's gateway address.
"""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass
from itertools import islice

from blueprints.models.fabric import ManagementVlans, Underlay
from generator.findings import BlueprintError, Finding, Severity, dotted
from generator.plan.model import Device, Endpoint, Plan
from generator.plan.switch_numbers import _asns, _loopbacks, site_numbers
from generator.resolve import ResolvedCluster

RULE = "NET019"
FABRIC = "management"
ROLES = ("inband", "bmc")  # VLAN roles, in the order their SVIs are written
# 802.1Q (IEEE 802.1Q-2018, table 9-2): VID 0 means "no VLAN" (priority tag) and 0xFFF is reserved, so a
# VLAN id is 1-4094.
VID_MIN, VID_MAX = 1, 4094

Path = tuple[str | int, ...]


class VlanProblem(BlueprintError):
    """A VLAN id or block that cannot be used: located at ``path`` (rule NET019)."""

    def __init__(self, message: str, path: Path) -> None:
        super().__init__([Finding(RULE, Severity.ERROR, f"{dotted(path)}: {message}", path)])
        self.message, self.path = message, path


@dataclass(frozen=True)
class AccessPort:
    switch_end: Endpoint
    host: str
    host_port: str  # plan port id of the host end (BMC, mlx5_8/1, mgmt0)
    role: str  # inband | bmc
    cable: str


@dataclass(frozen=True)
class LeafVlan:
    role: str
    vid: int
    subnet: str  # a.b.c.d/n
    gateway: str  # a.b.c.d/n: the SVI's address
    ports: tuple[AccessPort, ...]


@dataclass(frozen=True)
class MgmtSwitch:
    device: Device
    asn: int
    loopback: str
    vlans: tuple[LeafVlan, ...]  # leaves with hosts only
    uplinks: tuple[Endpoint, ...]  # this switch's ends of its switch-to-switch cables


@dataclass(frozen=True)
class MgmtPlan:
    fabric: str
    vids: dict[str, int]  # role -> VLAN id
    dhcp_server: str | None
    switches: tuple[MgmtSwitch, ...]


def management_fabrics(cluster: ResolvedCluster) -> tuple[str, ...]:
    """The management fabric when it is Ethernet with switches of ours (not a cloud, not direct-attached)."""
    f = cluster.fabrics.get(FABRIC)
    if cluster.is_cloud or f is None or f.kind != "ethernet" or f.spec.topology is None:
        return ()
    if getattr(f.spec.topology, "attach", "switch") == "direct":
        return ()
    return (FABRIC,)


def settings(cluster: ResolvedCluster) -> ManagementVlans:
    return cluster.fabrics[FABRIC].spec.vlans or ManagementVlans()


def _path(cluster: ResolvedCluster, *rest: str) -> Path:
    return (*cluster.fabrics[FABRIC].source_path, "vlans", *rest)


def check_ids(cluster: ResolvedCluster) -> list[VlanProblem]:
    """VLAN ids outside 1-4094, or one id for two roles."""
    cfg, out = settings(cluster), []
    for role in ROLES:
        vid = getattr(cfg, role)
        if not VID_MIN <= vid <= VID_MAX:
            out.append(
                VlanProblem(
                    f"VLAN id {vid} is not usable: 802.1Q VLAN ids are {VID_MIN}-{VID_MAX} (0 and 4095 are "
                    "reserved)",
                    _path(cluster, role),
                )
            )
    if cfg.inband == cfg.bmc:
        declared = (
            "inband" if "inband" in cfg.model_fields_set and "bmc" not in cfg.model_fields_set else "bmc"
        )
        out.append(
            VlanProblem(
                f"in-band and BMC ports share VLAN {cfg.bmc}: the out-of-band network must be a VLAN of "
                "its own",
                _path(cluster, declared),
            )
        )
    return out


def _port_roles(cluster: ResolvedCluster) -> dict[tuple[str, str], str]:
    """(pool, plan port id) -> inband | bmc, for every management-fabric port of every pool."""
    out: dict[tuple[str, str], str] = {}
    for pool in cluster.pools:
        for port in pool.ports:
            oob = port.role == "bmc" or (port.role == "" and port.purpose == "management")
            out[(pool.name, port.plan_port)] = "bmc" if oob else "inband"
    return out


def _access_ports(plan: Plan) -> tuple[dict[str, list[AccessPort]], dict[str, list[Endpoint]]]:
    """Per switch: its host ports with their role, and its switch-to-switch ports."""
    roles = _port_roles(plan.cluster)
    devices = plan.device_by_name
    access: dict[str, list[AccessPort]] = {}
    uplinks: dict[str, list[Endpoint]] = {}
    for link in plan.links_of(FABRIC):
        a, b = devices[link.a.device], devices[link.b.device]
        if a.kind == "switch" and b.kind == "switch":
            uplinks.setdefault(a.name, []).append(link.a)
            uplinks.setdefault(b.name, []).append(link.b)
            continue
        host, sw = (link.a, link.b) if a.kind == "node" else (link.b, link.a)
        role = roles.get((devices[host.device].pool or "", host.port), "bmc")
        access.setdefault(sw.device, []).append(AccessPort(sw, host.device, host.port, role, link.id))
    return access, uplinks


def _block_size(hosts: int) -> int:
    """Addresses per leaf subnet: hosts + network, gateway and broadcast, a power of two, at least 8."""
    return max(8, 1 << math.ceil(math.log2(hosts + 3)))


def _subnets(cluster: ResolvedCluster, role: str, counts: list[int]) -> list[ipaddress.IPv4Network]:
    """One equal subnet of ``<role>_cidr`` per leaf with hosts in the VLAN, in leaf name order."""
    path = _path(cluster, f"{role}_cidr")
    text = getattr(settings(cluster), f"{role}_cidr")
    try:
        block = ipaddress.IPv4Network(text)
    except ValueError as exc:
        raise VlanProblem(f"`{text}` is not an IPv4 network: {exc}", path) from None
    if not counts:
        return []
    size = _block_size(max(counts))
    prefix = 32 - int(math.log2(size))
    if prefix < block.prefixlen or block.num_addresses // size < len(counts):
        room = block.num_addresses // size if prefix >= block.prefixlen else 0
        need = 32 - math.ceil(math.log2(size * len(counts)))
        raise VlanProblem(
            f"{block} holds {room} /{prefix} leaf subnets; the {role} VLAN needs {len(counts)} (one per leaf "
            f"with {role} ports, {max(counts)} ports on the fullest): use a /{need} or larger",
            path,
        )
    # the first few only: the roce-dragonfly example's block cuts into 1,024 (issue 32: validate's CPU)
    return list(islice(block.subnets(new_prefix=prefix), len(counts)))


def dhcp_server(cluster: ResolvedCluster) -> str | None:
    """``vlans.dhcp_server``; for deployment target maas by default the MAAS rack controller: the planned
    management address (generator/deploy/addresses.py) of the first host of the first management pool
    (the head nodes, as the subnet managers' default hosts are). None: no relay is written."""
    declared = settings(cluster).dhcp_server
    if declared is not None:
        return declared
    if cluster.target != "maas":
        return None
    from generator.deploy.addresses import management_addresses

    addresses = management_addresses(cluster)
    for pool in cluster.pools:
        if pool.role == "management" and pool.hostnames:
            return addresses.get(pool.hostnames[0])
    return None


def _numbers(plan: Plan, switches: list[Device]) -> tuple[dict[str, int], dict[str, str]]:
    """ASNs and loopbacks of the management switches, after (never equal to) every routed fabric's
    (generator/plan/switch_numbers.py: one plan for the site)."""
    cluster = plan.cluster
    taken = site_numbers(plan) if cluster.routed_fabrics else {}
    used_addresses = {a for n in taken.values() for a in n.loopback.values()}
    used_asns = {a for n in taken.values() for a in n.asn.values()}
    cfg = cluster.fabrics[FABRIC].spec.underlay or Underlay()
    src = (*cluster.fabrics[FABRIC].source_path, "underlay")
    net = ipaddress.IPv4Network(cfg.loopback_cidr, strict=False)
    loopback = _loopbacks(net, [d.name for d in switches], used_addresses, (*src, "loopback_cidr"))
    return _asns(switches, cfg.asn_base, used_asns, (*src, "asn_base")), loopback


def _leaf_vlans(
    cluster: ResolvedCluster, access: dict[str, list[AccessPort]], vids: dict[str, int]
) -> dict[str, list[LeafVlan]]:
    out: dict[str, list[LeafVlan]] = {}
    for role in ROLES:
        leaves = sorted(sw for sw, ports in access.items() if any(p.role == role for p in ports))
        counts = [sum(1 for p in access[sw] if p.role == role) for sw in leaves]
        for sw, net in zip(leaves, _subnets(cluster, role, counts), strict=True):
            ports = tuple(
                sorted((p for p in access[sw] if p.role == role), key=lambda p: p.switch_end.port_number)
            )
            gateway = f"{net.network_address + 1}/{net.prefixlen}"
            out.setdefault(sw, []).append(LeafVlan(role, vids[role], str(net), gateway, ports))
    return out


def management_plan(plan: Plan) -> MgmtPlan:
    """The VLAN plan of the management fabric. Raises ``VlanProblem`` (NET019) or the NET017 ``PlanProblem``
    with the blueprint path of the setting that does not fit."""
    cluster = plan.cluster
    problems = check_ids(cluster)
    if problems:
        raise problems[0]
    cfg = settings(cluster)
    vids = {role: getattr(cfg, role) for role in ROLES}
    access, uplinks = _access_ports(plan)
    vlans = _leaf_vlans(cluster, access, vids)
    switches = sorted(plan.switches(FABRIC), key=lambda d: d.name)
    asn, loopback = _numbers(plan, switches)
    return MgmtPlan(
        FABRIC,
        vids,
        dhcp_server(cluster),
        tuple(
            MgmtSwitch(
                d,
                asn[d.name],
                loopback[d.name],
                tuple(vlans.get(d.name, ())),
                tuple(sorted(uplinks.get(d.name, ()), key=lambda e: e.port_number)),
            )
            for d in switches
        ),
    )
