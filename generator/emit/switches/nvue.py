"""NVUE ``startup.yaml`` of one Cumulus Linux switch (``/etc/nvue.d/startup.yaml``; the file ``nv config
save`` writes and ``nv config replace`` + ``nv config apply`` load: a list holding one ``set`` document).

Keys follow the NVUE object model of the Cumulus Linux 5.x user guide, one ``nv set`` path per key:
``interface <swp> link breakout 2x`` (split twin-port cages, "Switch Port Attributes" > "Breakout Ports"),
``interface <swp> link mtu``, ``interface lo ip address``, ``router bgp autonomous-system|router-id``,
``vrf default router bgp neighbor <swp> remote-as external|type unnumbered`` ("Border Gateway
Protocol - BGP" > "BGP Unnumbered"), ``... address-family ipv4-unicast network|multipaths ebgp``,
``... path-selection multipath aspath-ignore on`` ("Equal Cost Multipath Load Sharing"), and for RoCE
``qos roce enable|mode``, ``qos mapping default-global trust|dscp <n> switch-priority``,
``qos pfc default-global switch-priority``, ``qos congestion-control default-global traffic-class <n>
ecn|min-threshold|max-threshold|probability`` and ``qos traffic-pool default-lossless switch-priority``
("Quality of Service", "RDMA over Converged Ethernet - RoCE").
"""

from __future__ import annotations

import re
from typing import Any

from generator.emit.switches.frr import MAXIMUM_PATHS
from generator.emit.switches.qos import (
    ECN_MAX_THRESHOLD_BYTES,
    ECN_MIN_THRESHOLD_BYTES,
    ECN_PROBABILITY_PERCENT,
    LOSSLESS_POOL,
    LosslessClass,
)
from generator.emit.switches.underlay import SwitchUnderlay


def _interfaces(sw: SwitchUnderlay, mtu: int) -> dict[str, Any]:
    out: dict[str, Any] = {"lo": {"type": "loopback", "ip": {"address": {f"{sw.loopback}/32": {}}}}}
    for p in sw.ports:
        if p.cage is not None:  # the parent cage is split into cage_ports sub-ports swp<cage>s<n>
            out[f"swp{p.cage}"] = {"link": {"breakout": {f"{p.cage_ports}x": {}}}}
    for p in sw.ports:
        out[p.ifname] = {
            "type": "swp",
            "description": f"{p.cable} to {p.peer} {p.peer_ifname}",
            "link": {"mtu": mtu, "state": {"up": {}}},
        }
    return out


def _bgp(sw: SwitchUnderlay) -> dict[str, Any]:
    return {
        "enable": "on",
        "path-selection": {"multipath": {"aspath-ignore": "on"}},
        "address-family": {
            "ipv4-unicast": {
                "enable": "on",
                "network": {f"{sw.loopback}/32": {}},
                "multipaths": {"ebgp": MAXIMUM_PATHS},
            }
        },
        "neighbor": {p.ifname: {"remote-as": "external", "type": "unnumbered"} for p in sw.bgp_ports},
    }


def _qos(qos: LosslessClass) -> dict[str, Any]:
    out: dict[str, Any] = {
        "roce": {"enable": "on", "mode": qos.mode},
        "mapping": {
            "default-global": {
                "trust": qos.nvue_trust,
                "dscp": {qos.dscp: {"switch-priority": qos.priority}},
            }
        },
        "traffic-pool": {LOSSLESS_POOL: {"switch-priority": {qos.priority: {}}}},
    }
    if qos.pfc:
        out["pfc"] = {"default-global": {"switch-priority": {qos.priority: {}}}}
    if qos.ecn:
        out["congestion-control"] = {
            "default-global": {
                "traffic-class": {
                    qos.priority: {
                        "ecn": "enable",
                        "min-threshold": f"{ECN_MIN_THRESHOLD_BYTES // 1000}KB",
                        "max-threshold": f"{ECN_MAX_THRESHOLD_BYTES // 1000}KB",
                        "probability": ECN_PROBABILITY_PERCENT,
                    }
                }
            }
        }
    return out


def startup_document(sw: SwitchUnderlay, qos: LosslessClass | None, mtu: int) -> list[dict[str, Any]]:
    doc: dict[str, Any] = {
        "system": {"hostname": sw.name},
        "interface": _interfaces(sw, mtu),
        "router": {"bgp": {"enable": "on", "autonomous-system": sw.asn, "router-id": sw.loopback}},
        "vrf": {"default": {"router": {"bgp": _bgp(sw)}}},
    }
    if qos is not None:
        doc["qos"] = _qos(qos)
    return [{"set": doc}]


# YAML 1.1 words a plain scalar would turn into a bool or null (quoted so they stay strings).
_YAML11_WORDS = {"y", "yes", "n", "no", "true", "false", "on", "off", "null", "~"}
_PLAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._/-]*$")
_NUMBER_LIKE = re.compile(r"^[-+]?(\d[\d_]*)?(\.\d*)?([eE][-+]?\d+)?$|^0[xob]")


def _scalar(value: object) -> str:
    """A YAML scalar: ints as they are, strings plain when safe, else single-quoted (quotes doubled)."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise TypeError(f"unexpected value {value!r} in startup.yaml")
    if isinstance(value, int):
        return str(value)
    if _PLAIN.match(value) and value.lower() not in _YAML11_WORDS and not _NUMBER_LIKE.match(value):
        return value
    return "'" + value.replace("'", "''") + "'"


def _mapping(node: dict[Any, Any], indent: int, out: list[str]) -> None:
    """Block mapping, keys sorted (ints before strings), the layout ``nv config save`` writes."""
    pad = " " * indent
    for key in sorted(node, key=lambda k: (isinstance(k, str), k)):
        value = node[key]
        if isinstance(value, dict) and value:
            out.append(f"{pad}{_scalar(key)}:")
            _mapping(value, indent + 2, out)
        elif isinstance(value, dict):
            out.append(f"{pad}{_scalar(key)}: {{}}")
        else:
            out.append(f"{pad}{_scalar(key)}: {_scalar(value)}")


def render_startup(sw: SwitchUnderlay, qos: LosslessClass | None, mtu: int) -> str:
    # A small writer instead of PyYAML's emitter: 40x faster (512 routers of the dragonfly example in
    # about a second) and the same document (tests compare yaml.safe_load of it with startup_document).
    lines = [
        f"# NVUE startup.yaml for {sw.name} (fabric {sw.fabric}, {sw.role}, ASN {sw.asn}) - generated by "
        "cluster-blueprint.",
        "# Apply: nv config replace startup.yaml && nv config apply -y (docs/switches.md)",
        "- set:",
    ]
    _mapping(startup_document(sw, qos, mtu)[0]["set"], 4, lines)
    return "\n".join(lines) + "\n"
