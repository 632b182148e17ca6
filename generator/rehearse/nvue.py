"""A switch's routing configuration as FRR runs it: ``frr.conf`` as written, or the routing part of an
NVUE ``startup.yaml`` rendered into ``frr.conf`` the way Cumulus Linux does.

On Cumulus Linux "NVUE manages FRR daemons and configuration automatically" (Cumulus Linux user guide,
"Layer 3" > "FRRouting" > "Configure FRR"), with FRR's ``datacenter`` defaults. The NVUE keys map to the
vtysh commands the user guide gives beside each ``nv set`` ("Border Gateway Protocol - BGP" > "BGP
Unnumbered", "Equal Cost Multipath Load Sharing"): ``router bgp autonomous-system`` -> ``router bgp N``,
``router-id`` -> ``bgp router-id``, a neighbour with ``type: unnumbered`` -> ``neighbor swpN interface
remote-as external`` (with router advertisements on the port, which unnumbered peering learns the
peer's link-local address from), ``path-selection multipath aspath-ignore on`` -> ``bgp bestpath
as-path multipath-relax``, ``address-family ipv4-unicast network`` / ``multipaths ebgp`` -> ``network``
/ ``maximum-paths``. The loopback address and a routed leaf's host-facing port addresses (``interface <swp>
ip|ipv4 address``; ifupdown2 sets them on the switch) are given to zebra here. Ports,
breakouts, MTU and QoS are not routing and do not take part.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Any

from generator.foreign import ForeignInputError, parse_yaml
from generator.rehearse import block_read, names

RA_INTERVAL_S = 10  # the interval FRR's and Cumulus's BGP-unnumbered examples use
_DESCRIPTION = re.compile(r"^(\S+) to (\S+) (\S+)$")  # "C-LS-000001 to c-spine-001 swp1s0"


@dataclass(frozen=True)
class SwitchConfig:
    name: str
    fabric: str
    source: str  # the file it came from
    asn: int
    router_id: str
    loopbacks: tuple[str, ...]  # addresses on lo, prefix form (10.254.0.1/32)
    networks: tuple[str, ...]  # prefixes announced
    neighbors: tuple[str, ...]  # interfaces with an unnumbered session
    interfaces: frozenset[str]  # every interface the configuration names
    descriptions: dict[str, str]  # interface -> "cable to peer peer_if"
    frr_conf: str
    # interface -> its addresses (prefix form), lo excepted: a routed leaf's host-facing /31s
    addresses: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def planned_peer(self, ifname: str) -> tuple[str, str, str] | None:
        """(cable, peer, peer interface) from the port's description, when it has that form."""
        m = _DESCRIPTION.match(self.descriptions.get(ifname, ""))
        return (m.group(1), m.group(2), m.group(3)) if m else None


def _get(doc: Any, *keys: str) -> Any:
    for key in keys:
        doc = doc.get(key) if isinstance(doc, dict) else None
    return doc


def _mapping(value: Any, where: str, what: str) -> dict[str, Any]:
    """An NVUE object (absent = empty); anything else is refused, not indexed into."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ForeignInputError(where, f"`{what}` is {type(value).__name__}, not a mapping")
    return value


def _keys(value: Any, where: str, what: str) -> list[str]:
    """The entries of an NVUE set (a mapping of keys, or a list as another writer may give it)."""
    if value is None:
        return []
    if isinstance(value, dict | list):
        return [str(v) for v in value]
    raise ForeignInputError(where, f"`{what}` is {type(value).__name__}, not a mapping or list")


def _router_id(value: str, where: str) -> str:
    if value:
        try:
            ipaddress.IPv4Address(value)
        except ValueError:
            raise ForeignInputError(where, f"router-id `{value}` is not an IPv4 address") from None
    return value


def _asn(value: Any, where: str) -> int:
    try:
        asn = int(value)
    except (TypeError, ValueError):
        raise ForeignInputError(where, f"no usable BGP autonomous-system number ({value!r})") from None
    if not 1 <= asn <= 4_294_967_295:  # 4-byte ASNs, RFC 6793
        raise ForeignInputError(where, f"autonomous-system {asn} is outside 1..4294967295")
    return asn


def _prefix(value: str, where: str) -> str:
    try:
        return str(ipaddress.ip_network(value, strict=False))
    except ValueError:
        raise ForeignInputError(where, f"`{value}` is not an IP prefix") from None


def load_yaml(text: str, where: str) -> Any:
    """The block reader for what ``generate`` writes (block_read.py, fast), ruamel for anything else."""
    try:
        return block_read.load(text)
    except block_read.NotBlock:
        pass
    return parse_yaml(text, where)


def from_startup(text: str, name: str, fabric: str, where: str) -> SwitchConfig:
    doc = load_yaml(text, where)
    sets = [d.get("set") for d in doc if isinstance(d, dict)] if isinstance(doc, list) else []
    top = next((s for s in sets if isinstance(s, dict)), None)
    if top is None:
        raise ForeignInputError(where, "not an NVUE startup.yaml (a list holding a `set` document)")
    bgp = _mapping(_get(top, "vrf", "default", "router", "bgp"), where, "vrf default router bgp")
    ifaces = _mapping(_get(top, "interface"), where, "interface")
    for ifname in ifaces:
        names.ifname(str(ifname), f"{where}: interface")
    asn = _asn(_get(top, "router", "bgp", "autonomous-system"), where)
    router_id = _router_id(str(_get(top, "router", "bgp", "router-id") or ""), where)
    # the loopback is `interface lo ip address` before Cumulus Linux 5.13's object model, `ipv4` since
    # (the spellings generator/emit/switches/nvue.py writes per release, sourced in its catalogue)
    lo_v4 = _get(ifaces, "lo", "ipv4", "address") or _get(ifaces, "lo", "ip", "address")
    lo = [_prefix(a, where) for a in _keys(lo_v4, where, "interface lo address")]
    v4 = _mapping(_get(bgp, "address-family", "ipv4-unicast"), where, "address-family ipv4-unicast")
    networks = tuple(_prefix(n, where) for n in _keys(v4.get("network"), where, "network"))
    neighbors = _mapping(_get(bgp, "neighbor"), where, "neighbor")
    for peer in neighbors:
        names.ifname(str(peer), f"{where}: neighbor")
    unnumbered = tuple(
        str(n) for n, v in neighbors.items() if isinstance(v, dict) and v.get("type") == "unnumbered"
    )
    for peer in unnumbered:  # checked here, where the file is known, before _render writes it
        remote = str(_get(neighbors, peer, "remote-as") or "external")
        if remote not in ("external", "internal"):
            _asn(remote, f"{where}: neighbor {peer} remote-as")
    descriptions = {
        str(k): names.text(str(v.get("description", "")), f"{where}: interface {k} description")
        for k, v in ifaces.items()
        if isinstance(v, dict)
    }
    addresses = _port_addresses(ifaces, where)
    relax = _get(bgp, "path-selection", "multipath", "aspath-ignore") in ("on", "enabled", True)
    paths = _get(v4, "multipaths", "ebgp")
    conf = _render(name, asn, router_id, lo, networks, unnumbered, descriptions, relax, paths, neighbors)
    conf = _with_addresses(conf, addresses, descriptions)
    return SwitchConfig(name, fabric, where, asn, router_id, tuple(lo), networks, unnumbered,
                        frozenset(map(str, ifaces)), descriptions, conf, addresses)  # fmt: skip


def _port_addresses(ifaces: dict[str, Any], where: str) -> dict[str, tuple[str, ...]]:
    """``interface <swp> ip|ipv4 address`` of every port but lo (both release spellings, as for lo)."""
    out: dict[str, tuple[str, ...]] = {}
    for ifname, body in ifaces.items():
        found = (_get(body, "ipv4", "address") or _get(body, "ip", "address")) if ifname != "lo" else None
        if found:
            out[str(ifname)] = tuple(_interface(a, where) for a in _keys(found, where, f"interface {ifname}"))
    return out


def _interface(value: str, where: str) -> str:
    try:
        return str(ipaddress.ip_interface(value))
    except ValueError:
        raise ForeignInputError(where, f"`{value}` is not an interface address") from None


def _with_addresses(conf: str, addresses: dict[str, tuple[str, ...]], descriptions: dict[str, str]) -> str:
    """The ports' addresses given to zebra (ifupdown2 sets them on the switch, as it does the loopback)."""
    lines = []
    for ifname, prefixes in addresses.items():
        lines += [f"interface {ifname}"]
        lines += [f" description {descriptions[ifname]}"] if descriptions.get(ifname) else []
        lines += [f" ip address {p}" for p in prefixes] + ["exit"]
    head, _, rest = conf.partition("router bgp ")
    return head + "".join(line + "\n" for line in lines) + "router bgp " + rest


def _render(
    name: str,
    asn: int,
    router_id: str,
    lo: list[str],
    networks: tuple[str, ...],
    unnumbered: tuple[str, ...],
    descriptions: dict[str, str],
    relax: bool,
    paths: Any,
    neighbors: dict[str, Any],
) -> str:
    lines = ["frr defaults datacenter", f"hostname {name}", "interface lo"]
    lines += [f" ip address {p}" for p in lo] + ["exit"]
    for ifname in unnumbered:
        lines += [f"interface {ifname}"]
        lines += [f" description {descriptions[ifname]}"] if descriptions.get(ifname) else []
        lines += [f" ipv6 nd ra-interval {RA_INTERVAL_S}", " no ipv6 nd suppress-ra", "exit"]
    lines += [f"router bgp {asn}"] + ([f" bgp router-id {router_id}"] if router_id else [])
    lines += [" no bgp ebgp-requires-policy"] + ([" bgp bestpath as-path multipath-relax"] if relax else [])
    for ifname in unnumbered:
        remote = str(_get(neighbors, ifname, "remote-as") or "external")
        if remote not in ("external", "internal"):
            remote = str(_asn(remote, f"neighbor {ifname} remote-as"))
        lines.append(f" neighbor {ifname} interface remote-as {remote}")
    lines += [" address-family ipv4 unicast"] + [f"  network {n}" for n in networks]
    lines += [f"  maximum-paths {int(paths)}"] if re.fullmatch(r"[0-9]{1,4}", str(paths or "")) else []
    lines += [" exit-address-family", "exit"]
    return "\n".join(lines) + "\n"


_ROUTER = re.compile(r"^router bgp (\S+)")
_NEIGHBOR = re.compile(r"^ neighbor (\S+) interface\b")


def _word(words: list[str], i: int, where: str) -> str:
    if len(words) <= i:
        raise ForeignInputError(where, f"`{' '.join(words)}` lacks its value")
    return words[i]


def from_frr_conf(text: str, name: str, fabric: str, where: str) -> SwitchConfig:
    asn: int | None = None
    router_id, current = "", ""
    lo: list[str] = []
    networks: list[str] = []
    neighbors: list[str] = []
    ifaces: set[str] = set()
    descriptions: dict[str, str] = {}
    addresses: dict[str, tuple[str, ...]] = {}
    for no, line in enumerate(text.splitlines(), 1):
        loc = f"{where}:{no}"
        words = line.split()
        if line.startswith("interface "):
            current = names.ifname(_word(words, 1, loc), loc)
            ifaces.add(current)
        elif line.startswith(" description ") and current:
            descriptions[current] = names.text(line[len(" description ") :].strip(), loc)
        elif current == "lo" and line.startswith(" ip address "):
            lo.append(_prefix(_word(words, 2, loc), loc))
        elif current and line.startswith(" ip address "):
            addresses[current] = (*addresses.get(current, ()), _interface(_word(words, 2, loc), loc))
        elif m := _ROUTER.match(line):
            asn, current = _asn(m.group(1), loc), ""
        elif line.startswith(" bgp router-id "):
            router_id = _router_id(_word(words, 2, loc), loc)
        elif m := _NEIGHBOR.match(line):
            neighbors.append(names.ifname(m.group(1), loc))
        elif line.startswith("  network "):
            networks.append(_prefix(_word(words, 1, loc), loc))
    if asn is None:
        raise ForeignInputError(where, "no `router bgp` section")
    return SwitchConfig(name, fabric, where, asn, router_id, tuple(lo), tuple(networks), tuple(neighbors),
                        frozenset(ifaces | set(neighbors)), descriptions, text, addresses)  # fmt: skip
