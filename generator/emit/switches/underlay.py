"""The routed underlay of an Ethernet/RoCE fabric, read from the plan: per switch its ASN, loopback and
fabric ports (same interface names as the expected-LLDP files and the cabling sheets).

ASN plan (RFC 7938 "Use of BGP for Routing in Large-Scale Data Centers", section 5.2.1): every leaf
(top-of-rack) gets its own ASN; the spines of a 2-tier Clos share one ASN, the spines of each pod of a
3-tier Clos share one ASN per pod and the cores share one ASN, so a route never comes back down into
the tier it left (BGP rejects paths holding its own ASN). Routers of a dragonfly, torus or hypercube
have no tiers: each gets its own ASN. ASNs come from the private 4-byte range of RFC 6996 (section 5:
4200000000-4294967294) starting at ``fabrics.<f>.underlay.asn_base``. Loopbacks and ASNs are unique
across every routed fabric of the site (``generator.plan.switch_numbers``, shared with rule NET017).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

from generator.deploy.addresses import FabricAddress
from generator.emit.lldp import interface_name
from generator.findings import BlueprintError, Finding, Severity, dotted
from generator.plan.model import Plan
from generator.plan.switch_numbers import ASN_MAX, SHARED_TIERS, site_numbers

# Tokens that reach frr.conf / startup.yaml unquoted: plan names follow the safe naming pattern.
_TOKEN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,63}$")
__all__ = ["ASN_MAX", "SHARED_TIERS", "FabricPort", "SwitchUnderlay", "underlay"]


class FabricPort(NamedTuple):  # a NamedTuple: 659,000 of them at 100k GPUs, ~5x cheaper to make
    ifname: str  # swp5 / swp3s1
    cable: str  # cable id of the plan
    peer: str  # device at the other end
    peer_ifname: str  # its interface (swp1, eth1)
    peer_is_switch: bool
    speed_gbps: float
    cage: int | None  # twin-port cage of this port (breakout parent swp<cage>), if split
    cage_ports: int  # sub-ports per cage on this switch (1 = no breakout)
    # a host-facing port of a routed fabric: this port's a.b.c.d/31, the host's gateway, and the /31 network
    # it shares with the host (the host's address: the /31's first; generator/deploy/addresses.py)
    address: str | None = None
    network: str | None = None


@dataclass(frozen=True)
class SwitchUnderlay:
    name: str
    fabric: str
    role: str  # leaf | spine | core | router | sw
    model: str
    asn: int
    loopback: str  # a.b.c.d (a /32)
    ports: tuple[FabricPort, ...]  # cabled ports, in port order

    @property
    def bgp_ports(self) -> tuple[FabricPort, ...]:
        """Switch-to-switch ports: one unnumbered eBGP session each."""
        return tuple(p for p in self.ports if p.peer_is_switch)

    @property
    def host_networks(self) -> tuple[str, ...]:
        """The /31 networks of the host-facing ports with an address, in port order: what BGP announces
        besides the loopback, so that every host reaches the hosts behind the other leaves."""
        return tuple(p.network for p in self.ports if p.network)


def _error(msg: str, path: tuple[str | int, ...]) -> BlueprintError:
    # emitters have no source map: name the blueprint path in the message
    return BlueprintError([Finding("PLN001", Severity.ERROR, f"{dotted(path)}: {msg}", path)])


def _check(token: str, what: str) -> str:
    if not _TOKEN.fullmatch(token):  # fullmatch: `$` alone lets a trailing line break through
        raise _error(f"{what} `{token}` cannot be written into a switch configuration", ("fabrics",))
    return token


def _check_all(tokens: list[str], what: str) -> None:
    """_check of every token with one regex pass over them joined (the 330,000 cable ids of a 100k-GPU
    dragonfly); on a failure, the first bad token is named as _check names it."""
    joined = "\n".join(tokens) + "\n" if tokens else ""
    # as many line breaks as tokens: none of them holds one, so each line is one token
    if joined.count("\n") != len(tokens) or not _TOKENS.fullmatch(joined):
        for token in tokens:
            _check(token, what)


# _TOKEN, one per line
_TOKENS = re.compile(r"(?:[A-Za-z0-9][A-Za-z0-9._/-]{0,63}\n)*")


def underlay(
    plan: Plan, fabric: str, hosts: Mapping[tuple[str, str], FabricAddress] | None = None
) -> tuple[SwitchUnderlay, ...]:
    """Every switch of ``fabric`` with its ASN, loopback and cabled ports (sorted by name); ``hosts``
    ((host, plan port) -> its planned address, ``generator.deploy.addresses.host_port_addresses``) gives
    the host-facing ports of a routed fabric their /31."""
    switches = sorted(plan.switches(fabric), key=lambda d: d.name)
    numbers = site_numbers(plan)[fabric]  # raises the located NET017 error validate reports
    ports = _ports(plan, fabric, hosts or {})
    return tuple(
        SwitchUnderlay(
            name=_check(d.name, "switch name"),
            fabric=fabric,
            role=d.role,
            model=d.model,
            asn=numbers.asn[d.name],
            loopback=numbers.loopback[d.name],
            ports=tuple(sorted(ports.get(d.name, []), key=lambda p: _port_order(p.ifname))),
        )
        for d in switches
    )


@cache  # a few hundred distinct names (swp1..swp64s3), looked up 659,000 times at 100k GPUs
def _port_order(ifname: str) -> tuple[int, int]:
    m = re.match(r"^swp(\d+)(?:s(\d+))?$", ifname)
    return (int(m.group(1)), int(m.group(2) or 0)) if m else (1 << 30, 0)


def _ports(
    plan: Plan, fabric: str, hosts: Mapping[tuple[str, str], FabricAddress]
) -> dict[str, list[FabricPort]]:
    devices = plan.device_by_name
    out: dict[str, list[FabricPort]] = {}
    names: set[str] = set()  # interface and device names: few distinct ones, each checked once
    cables: list[str] = []
    for link in plan.links_of(fabric):
        cables.append(link.id)
        for local, remote in ((link.a, link.b), (link.b, link.a)):
            ldev, rdev = devices[local.device], devices[remote.device]
            if ldev.kind != "switch":
                continue
            split = ldev.ports_per_cage > 1 and local.cage is not None and local.cage_port is not None
            host = None if rdev.kind == "switch" else hosts.get((rdev.name, remote.port))
            port = _new(  # FabricPort(ifname, cable, peer, ..., address)
                FabricPort,
                (
                    interface_name(ldev, local),
                    link.id,
                    rdev.name,
                    interface_name(rdev, remote),
                    rdev.kind == "switch",
                    link.speed_gbps,
                    local.cage if split else None,
                    ldev.ports_per_cage if split else 1,
                    host.leaf_address if host is not None else None,
                    host.address if host is not None and host.gateway else None,
                ),
            )
            _check_names(port, names)
            out.setdefault(ldev.name, []).append(port)
    _check_all(cables, "cable id")
    return out


_new = tuple.__new__  # a NamedTuple without its Python-level __new__ (as generator/plan/build.py does)


def _check_names(port: FabricPort, seen: set[str]) -> None:
    for token, what in (
        (port.ifname, "interface"),
        (port.peer, "device name"),
        (port.peer_ifname, "interface"),
    ):
        if token not in seen:
            seen.add(_check(token, what))
