"""NVUE ``startup.yaml`` of one Cumulus Linux switch (``/etc/nvue.d/startup.yaml``; the file ``nv config
save`` writes and ``nv config replace`` + ``nv config apply`` load: a list holding one ``set`` document), in
the key spelling of the fabric's Cumulus Linux release (``switch_os: cumulus-linux@<release>``, default the
latest release of ``blueprints/catalog/data/switch_os.yaml``, where each spelling is sourced).

Keys follow the NVUE object model of the Cumulus Linux 5.x user guide, one ``nv set`` path per key:
``interface <swp> link breakout 2x`` (split twin-port cages, "Switch Port Attributes" > "Breakout Ports"),
``interface <swp> link mtu``, ``interface lo|<swp> ip|ipv4 address`` (a host-facing port's /31 on a routed
fabric, generator/deploy/addresses.py), ``router bgp enable|state``, ``router bgp
autonomous-system|router-id``, ``vrf default router bgp neighbor <swp> remote-as external|type unnumbered``
("Border Gateway Protocol - BGP" > "BGP Unnumbered"), ``... address-family ipv4-unicast network|multipaths
ebgp`` (the loopback and every host /31), ``... path-selection multipath aspath-ignore`` ("Equal Cost
Multipath Load Sharing"), and for RoCE ``qos roce enable|state`` and ``mode``, ``qos mapping default-global
trust|dscp <n> switch-priority``, ``qos pfc default-global switch-priority``, ``qos egress-queue-mapping
default-global switch-priority <n> traffic-class``, ``qos congestion-control default-global traffic-class 3
ecn|min-threshold|max-threshold|probability`` and ``qos traffic-pool roce-lossless|default-lossy
memory-percent`` ("Quality of Service", "RDMA over Converged Ethernet - RoCE").
"""

from __future__ import annotations

from typing import Any

from blueprints.catalog.switch_os import NvueRelease, nvue_release
from generator.emit.switches.frr import MAXIMUM_PATHS
from generator.emit.switches.qos import LosslessClass, egress_queue_mapping
from generator.emit.switches.underlay import SwitchUnderlay
from generator.yamltext import SharedBlock, mapping


def _interfaces(sw: SwitchUnderlay, mtu: int, rel: NvueRelease) -> dict[str, Any]:
    out: dict[str, Any] = {
        "lo": {"type": "loopback", rel.interface_ipv4: {"address": {f"{sw.loopback}/32": {}}}}
    }
    for p in sw.ports:
        if p.cage is not None:  # the parent cage is split into cage_ports sub-ports swp<cage>s<n>
            out[f"swp{p.cage}"] = {"link": {"breakout": {f"{p.cage_ports}x": {}}}}
    link = SharedBlock(mtu=mtu, state={"up": {}})  # every port's: written once per switch
    for p in sw.ports:
        out[p.ifname] = {"type": "swp", "description": f"{p.cable} to {p.peer} {p.peer_ifname}", "link": link}
        if p.address:  # a host's gateway on a routed fabric: the leaf end of the port's /31
            out[p.ifname][rel.interface_ipv4] = {"address": {p.address: {}}}
    return out


def _bgp(sw: SwitchUnderlay, rel: NvueRelease) -> dict[str, Any]:
    peer = SharedBlock({"remote-as": "external", "type": "unnumbered"})  # every neighbour's: written once
    out: dict[str, Any] = {
        rel.state_key: rel.state_on,
        "path-selection": {"multipath": {"aspath-ignore": rel.flag_on}},
        "address-family": {
            "ipv4-unicast": {
                rel.state_key: rel.state_on,
                "network": {n: {} for n in (f"{sw.loopback}/32", *sw.host_networks)},
                "multipaths": {"ebgp": MAXIMUM_PATHS},
            }
        },
    }
    if sw.bgp_ports:  # a lone switch has no neighbour; an empty `neighbor` is no NVUE command
        out["neighbor"] = dict.fromkeys((p.ifname for p in sw.bgp_ports), peer)
    return out


def _qos(qos: LosslessClass, rel: NvueRelease) -> dict[str, Any]:
    roce = rel.roce
    out: dict[str, Any] = {
        "roce": {rel.state_key: rel.state_on, "mode": qos.mode},
        "mapping": {
            "default-global": {
                "trust": qos.nvue_trust,
                "dscp": {qos.dscp: {"switch-priority": qos.priority}},
            }
        },
    }
    moves = egress_queue_mapping(qos, roce)
    if moves:
        out["egress-queue-mapping"] = {
            "default-global": {"switch-priority": {sp: {"traffic-class": tc} for sp, tc in moves.items()}}
        }
    if qos.pfc:  # the lossless pool exists in lossless mode only (RoCE page, default table)
        out["pfc"] = {"default-global": {"switch-priority": {qos.priority: {}}}}
        out["traffic-pool"] = {
            roce.lossy_pool: {"memory-percent": roce.lossy_memory_percent},
            roce.lossless_pool: {
                "memory-percent": roce.lossless_memory_percent,
                "switch-priority": {qos.priority: {}},
            },
        }
    if qos.ecn:
        out["congestion-control"] = {
            "default-global": {
                "traffic-class": {
                    roce.roce_traffic_class: {
                        "ecn": rel.ecn_on,
                        "min-threshold": roce.ecn_min_threshold_bytes,  # bytes: NVUE's KB is 1,024 bytes
                        "max-threshold": roce.ecn_max_threshold_bytes,
                        "probability": roce.ecn_probability_percent,
                    }
                }
            }
        }
    return out


def startup_document(
    sw: SwitchUnderlay, qos: LosslessClass | None, mtu: int, switch_os: str = "cumulus"
) -> list[dict[str, Any]]:
    rel = nvue_release(switch_os)[1]
    doc: dict[str, Any] = {
        "system": {"hostname": sw.name},
        "interface": _interfaces(sw, mtu, rel),
        "router": {
            "bgp": {rel.state_key: rel.state_on, "autonomous-system": sw.asn, "router-id": sw.loopback}
        },
        "vrf": {"default": {"router": {"bgp": _bgp(sw, rel)}}},
    }
    if qos is not None:
        doc["qos"] = _qos(qos, rel)
    return [{"set": doc}]


def render_startup(
    sw: SwitchUnderlay, qos: LosslessClass | None, mtu: int, switch_os: str = "cumulus"
) -> str:
    # A small writer instead of PyYAML's emitter: 40x faster (512 routers of the dragonfly example in
    # about a second) and the same document (tests compare yaml.safe_load of it with startup_document).
    release = nvue_release(switch_os)[0]
    lines = [
        f"# NVUE startup.yaml for {sw.name} (fabric {sw.fabric}, {sw.role}, ASN {sw.asn}) for Cumulus Linux "
        f"{release} - generated by cluster-blueprint.",
        "# Apply: nv config replace startup.yaml && nv config apply -y (docs/switches.md)",
        "- set:",
    ]
    mapping(startup_document(sw, qos, mtu, switch_os)[0]["set"], 4, lines)
    return "\n".join(lines) + "\n"
