"""NVUE ``startup.yaml`` of the management fabric's switches (``switches/management/<switch>/startup.yaml``)
and ``management-vlans.csv``, from the VLAN plan (``generator.deploy.mgmt_vlans``; docs/switches.md,
"Management network").

On top of what every routed switch gets (``generator.emit.switches.nvue.startup_document``: hostname, ports,
loopback, BGP unnumbered on the switch-to-switch ports), a management leaf gets, in the key paths of NVIDIA's
Cumulus Linux 5.14 and 5.15 user guides (the same in both; the one renamed key, ``interface <id> ip|ipv4
address``, is the release's ``interface_ipv4`` of blueprints/catalog/data/switch_os.yaml):

* ``bridge domain br_default vlan <vid>`` per VLAN with hosts on the leaf, and ``interface swpN bridge domain
  br_default access <vid>`` on each host port ("Ethernet Bridging - VLANs" > "VLAN-aware Bridge Mode": "With
  NVUE, there is a default bridge called br_default"; the access keys as in "Precision Time Protocol - PTP"
  and "Multi-Chassis Link Aggregation - MLAG" examples: ``nv set interface swp2 bridge domain br_default
  access 10``);
* the SVI ``interface vlan<vid> type svi`` with the gateway address (PTP page: ``nv set interface vlan10 type
  svi``, ``nv set interface vlan10 ip address 10.1.10.2/24``), announced with ``address-family ipv4-unicast
  network <subnet>``;
* the DHCP relay in server-group form, the only form of 5.14 and later ("In Cumulus Linux 5.13 and earlier,
  DHCP relay does not use server groups", "DHCP Relays"): ``service dhcp-relay default server-group <name>
  server <ip>``, ``... upstream-interface <uplink>``, ``service dhcp-relay default downstream-interface
  vlan<vid> server-group-name <name>``.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from typing import Any

from blueprints.catalog.switch_os import NvueRelease, nvue_release
from generator.deploy.mgmt_vlans import FABRIC, MgmtPlan, MgmtSwitch, management_fabrics, management_plan
from generator.emit.lldp import interface_name
from generator.emit.switches.nvue import startup_document
from generator.emit.switches.systems import switch_os_of
from generator.emit.switches.underlay import FabricPort, SwitchUnderlay
from generator.plan.model import Plan
from generator.resolve import ResolvedCluster
from generator.yamltext import mapping

SERVER_GROUP = "provisioning"  # our name for the relay's server group (NVUE takes any name)

__all__ = ["applies", "files", "management_fabrics"]


def applies(cluster: ResolvedCluster) -> bool:
    """An Ethernet management fabric with switches on Cumulus Linux (NVUE only; NET014 warns otherwise)."""
    return bool(management_fabrics(cluster)) and _cumulus(cluster)


def _cumulus(cluster: ResolvedCluster) -> bool:
    return switch_os_of(cluster.fabrics[FABRIC].spec.switch_os).kind == "cumulus"


def _ports(plan: Plan) -> dict[str, list[FabricPort]]:
    """Every cabled port of every management switch, as the routed underlay describes its ports."""
    devices = plan.device_by_name
    out: dict[str, list[FabricPort]] = {}
    for link in plan.links_of(FABRIC):
        for local, remote in ((link.a, link.b), (link.b, link.a)):
            ldev, rdev = devices[local.device], devices[remote.device]
            if ldev.kind != "switch":
                continue
            split = ldev.ports_per_cage > 1 and local.cage is not None and local.cage_port is not None
            port = FabricPort(
                ifname=interface_name(ldev, local),
                cable=link.id,
                peer=rdev.name,
                peer_ifname=interface_name(rdev, remote),
                peer_is_switch=rdev.kind == "switch",
                speed_gbps=link.speed_gbps,
                cage=local.cage if split else None,
                cage_ports=ldev.ports_per_cage if split else 1,
            )
            out.setdefault(ldev.name, []).append(port)
    return out


def _port_order(ifname: str) -> tuple[int, int]:
    m = re.match(r"^swp(\d+)(?:s(\d+))?$", ifname)
    return (int(m.group(1)), int(m.group(2) or 0)) if m else (1 << 30, 0)


def _underlay(sw: MgmtSwitch, ports: list[FabricPort]) -> SwitchUnderlay:
    order = sorted(ports, key=lambda p: _port_order(p.ifname))
    d = sw.device
    return SwitchUnderlay(d.name, FABRIC, d.role, d.model, sw.asn, sw.loopback, tuple(order))


def _leaf_parts(doc: dict[str, Any], sw: MgmtSwitch, mplan: MgmtPlan, rel: NvueRelease) -> None:
    """Bridge, access ports, SVIs, their networks in BGP and the DHCP relay, added to a leaf's document
    (key spellings of the release: switch_os.yaml `interface_ipv4`, `bridge_domain`, `dhcp_relay`)."""
    interfaces = doc["interface"]
    bridge = rel.bridge_domain
    device = sw.device
    for vlan in sw.vlans:
        for port in vlan.ports:
            ifname = interface_name(device, port.switch_end)
            interfaces[ifname]["bridge"] = {"domain": {bridge: {"access": vlan.vid}}}
        interfaces[f"vlan{vlan.vid}"] = {"type": "svi", rel.interface_ipv4: {"address": {vlan.gateway: {}}}}
    doc["bridge"] = {"domain": {bridge: {"vlan": {v.vid: {} for v in sw.vlans}}}}
    family = doc["vrf"]["default"]["router"]["bgp"]["address-family"]["ipv4-unicast"]
    family["network"] = {**family["network"], **{v.subnet: {} for v in sw.vlans}}
    if mplan.dhcp_server is not None and sw.uplinks and rel.dhcp_relay == "server-group":
        uplinks: dict[str, dict[str, Any]] = {interface_name(device, e): {} for e in sw.uplinks}
        doc["service"] = {
            "dhcp-relay": {
                "default": {
                    "server-group": {
                        SERVER_GROUP: {"server": {mplan.dhcp_server: {}}, "upstream-interface": uplinks}
                    },
                    "downstream-interface": {
                        f"vlan{v.vid}": {"server-group-name": SERVER_GROUP} for v in sw.vlans
                    },
                }
            }
        }


def startup(sw: MgmtSwitch, ports: list[FabricPort], mplan: MgmtPlan, mtu: int, switch_os: str) -> str:
    underlay = _underlay(sw, ports)
    doc = startup_document(underlay, None, mtu, switch_os)[0]["set"]
    release, rel = nvue_release(switch_os)
    if sw.vlans:
        _leaf_parts(doc, sw, mplan, rel)
    relay = f", DHCP relay to {mplan.dhcp_server}" if mplan.dhcp_server and sw.vlans and sw.uplinks else ""
    lines = [
        f"# NVUE startup.yaml for {sw.device.name} (management fabric, {sw.device.role}, ASN {sw.asn}"
        f"{relay}) for Cumulus Linux {release} - generated by cluster-blueprint.",
        "# Apply: nv config replace startup.yaml && nv config apply -y (docs/switches.md)",
        "- set:",
    ]
    mapping(doc, 4, lines)
    return "\n".join(lines) + "\n"


def vlan_table(mplan: MgmtPlan) -> str:
    """One row per leaf and VLAN: what MAAS (or any DHCP server behind the relay) needs a subnet for."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["switch", "role", "vlan", "subnet", "gateway", "dhcp_server", "access_ports", "hosts"])
    for sw in mplan.switches:
        for v in sw.vlans:
            ifnames = " ".join(interface_name(sw.device, p.switch_end) for p in v.ports)
            hosts = " ".join(p.host for p in v.ports)
            gateway = v.gateway.split("/")[0]
            w.writerow(
                [sw.device.name, v.role, v.vid, v.subnet, gateway, mplan.dhcp_server or "", ifnames, hosts]
            )
    return buf.getvalue()


def files(cluster: ResolvedCluster, plan: Plan) -> Iterator[tuple[str, str] | SwitchUnderlay]:
    """(relative path, text) of every management switch's file and the VLAN table; each switch's
    ``SwitchUnderlay`` (for the inventory and asn-plan.csv) right after its file."""
    if not applies(cluster):
        return
    spec = cluster.fabrics[FABRIC].spec
    mplan = management_plan(plan)
    ports = _ports(plan)
    mtu = max(9216, spec.mtu or 0)
    for sw in mplan.switches:
        own = ports.get(sw.device.name, [])
        yield f"{FABRIC}/{sw.device.name}/startup.yaml", startup(sw, own, mplan, mtu, spec.switch_os)
        yield _underlay(sw, own)
    yield f"{FABRIC}/vlans.csv", vlan_table(mplan)
