"""One loopback and ASN plan for every routed fabric of a site (build/switches/, rule NET017).

Each routed fabric (``ResolvedCluster.routed_fabrics``: Ethernet/RoCE compute and storage fabrics with
switches) takes its switches' loopbacks from ``fabrics.<f>.underlay.loopback_cidr`` and its ASNs from
``asn_base`` (defaults 10.254.0.0/16 and 4200000000), fabrics in name order, switches in name order. A
loopback or ASN another fabric already holds is skipped, so two fabrics on the same (default) pool number on
where the previous one stopped instead of repeating its addresses: the switches of a compute and a storage
fabric never share a router id or an ASN, which would make BGP drop the other fabric's routes as its own
(RFC 4271 section 9.1.2: a route whose AS_PATH holds the speaker's own AS is a loop) once the fabrics are
joined. A pool too small for what is left of it is an error located at the fabric's ``loopback_cidr`` or
``asn_base``. ``validate`` (rule NET017) and ``generate`` (``generator.emit.switches.underlay``) call the
same function, so they agree.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from blueprints.models.fabric import Underlay
from generator.findings import BlueprintError, Finding, Severity, dotted
from generator.plan.model import Device, Plan

ASN_MAX = 4_294_967_294  # RFC 6996 section 5: private 4-byte ASNs end at 4294967294
# Tiers that share an ASN (RFC 7938 5.2.1); anything else (leaf, router, sw) gets its own.
SHARED_TIERS = ("spine", "core")
RULE = "NET017"


@dataclass(frozen=True)
class FabricNumbers:
    asn: dict[str, int]  # switch name -> ASN
    loopback: dict[str, str]  # switch name -> a.b.c.d


class PlanProblem(BlueprintError):
    """A pool too small (or unusable): located at ``path`` (the fabric's underlay setting)."""

    def __init__(self, message: str, path: tuple[str | int, ...]) -> None:
        super().__init__([Finding(RULE, Severity.ERROR, f"{dotted(path)}: {message}", path)])
        self.message, self.path = message, path


def _asn_key(d: Device) -> tuple[str, int | None]:
    """Switches of one fabric with the same key share an ASN (RFC 7938 5.2.1)."""
    if d.role == "core":
        return ("core", None)
    if d.role == "spine":
        return ("spine", d.pod)
    return (d.name, None)


def _loopbacks(
    net: ipaddress.IPv4Network, names: list[str], used: set[str], path: tuple[str | int, ...]
) -> dict[str, str]:
    # address i+1 of the block for the i-th free one: never the network or broadcast address
    candidates = (str(net.network_address + i) for i in range(1, net.num_addresses - 1))
    free = (a for a in candidates if a not in used)
    out: dict[str, str] = {}
    for name in names:
        address = next(free, None)
        if address is None:
            usable = range(1, net.num_addresses - 1)  # error path only: a full pass over the block is fine
            taken = sum(1 for i in usable if str(net.network_address + i) in used) - len(out)
            others = f", {taken} of them taken by other routed fabrics" if taken else ""
            raise PlanProblem(
                f"{net} holds {max(net.num_addresses - 2, 0)} loopbacks{others}; this fabric needs "
                f"{len(names)} (one per switch)",
                path,
            )
        out[name] = address
        used.add(address)
    return out


def _asns(switches: list[Device], base: int, used: set[int], path: tuple[str | int, ...]) -> dict[str, int]:
    by_key: dict[tuple[str, int | None], int] = {}
    candidate = base
    out: dict[str, int] = {}
    for d in switches:  # shared tiers numbered at their first switch in name order, like everything else
        key = _asn_key(d)
        if key not in by_key:
            while candidate in used:
                candidate += 1
            if candidate > ASN_MAX:
                raise PlanProblem(
                    f"asn_base {base}: the fabric needs {len(set(map(_asn_key, switches)))} ASNs but the "
                    f"private range ends at {ASN_MAX} (ASNs of other routed fabrics skipped)",
                    path,
                )
            by_key[key] = candidate
            used.add(candidate)
        out[d.name] = by_key[key]
    return out


def site_numbers(plan: Plan) -> dict[str, FabricNumbers]:
    """Loopbacks and ASNs of every switch of every routed fabric, unique across the site."""
    cluster = plan.cluster
    used_addresses: set[str] = set()
    used_asns: set[int] = set()
    out: dict[str, FabricNumbers] = {}
    for fabric in cluster.routed_fabrics:
        cfg = cluster.fabrics[fabric].spec.underlay or Underlay()
        src = (*cluster.fabrics[fabric].source_path, "underlay")
        try:
            net = ipaddress.IPv4Network(cfg.loopback_cidr, strict=False)
        except ValueError as exc:
            raise PlanProblem(str(exc), (*src, "loopback_cidr")) from None
        switches = sorted(plan.switches(fabric), key=lambda d: d.name)
        loopback = _loopbacks(net, [d.name for d in switches], used_addresses, (*src, "loopback_cidr"))
        asn = _asns(switches, cfg.asn_base, used_asns, (*src, "asn_base"))
        out[fabric] = FabricNumbers(asn=asn, loopback=loopback)
    return out
