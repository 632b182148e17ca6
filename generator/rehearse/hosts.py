"""Hosts on their leaves: the generated host fabric addresses against what the leaves route.

Where the build has host fabric addresses (``cb_fabric_addresses`` of ``ansible/inventory.yml``: interface
-> ``address/prefix``, written by ``generate`` for on-prem targets when the platform's port map names the
interfaces), each host port is paired with its cable of ``cabling/cables.csv`` (the host end's
``*_netdev`` is the interface; the switch end's port and cage give the leaf interface as the switch
configuration names it) and its rail (the ``rail`` column).

A host on a routed (BGP) leaf reaches a host on another leaf only when its leaf announces a network
holding the host's address (the leaf's ``network`` statements: what the rehearsal renders into FRR). When
no leaf does, the generated configuration does not route host subnets and a reachability matrix could only
be faked; the check ``hosts`` says exactly that, per leaf port, instead of starting host namespaces.

Larger builds are sampled: the hosts of the first two leaves (by name) of each rail, which is enough to
cross leaves on every rail.
"""

from __future__ import annotations

import csv
import io
import ipaddress
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.foreign import ForeignInputError, read_foreign_text
from generator.rehearse.build_input import MAX_FILE, Build
from generator.rehearse.nvue import SwitchConfig, load_yaml
from generator.rehearse.verdict import FabricVerdict

LEAVES_PER_RAIL = 2  # the sample: two leaves of each rail are enough for a cross-leaf pair


@dataclass(frozen=True)
class HostPort:
    host: str
    interface: str
    address: str  # address/prefix as generated
    rail: str
    leaf: str
    leaf_if: str
    cable: str


def host_addresses(root: Path) -> dict[str, dict[str, str]]:
    """host -> interface -> address/prefix, from ``ansible/inventory.yml`` (empty when it has none)."""
    path = root / "ansible" / "inventory.yml"
    if not path.is_file():
        return {}
    doc = load_yaml(read_foreign_text(path, MAX_FILE), str(path))
    out: dict[str, dict[str, str]] = {}
    _collect(doc, out, str(path))
    return out


def _collect(node: Any, out: dict[str, dict[str, str]], where: str) -> None:
    if not isinstance(node, dict):
        return
    for host, hv in (node.get("hosts") or {}).items() if isinstance(node.get("hosts"), dict) else ():
        named = hv.get("cb_fabric_addresses") if isinstance(hv, dict) else None
        if isinstance(named, dict):
            out[str(host)] = {str(k): _address(str(v), f"{where}: {host}.cb_fabric_addresses.{k}")
                              for k, v in named.items()}  # fmt: skip
    for child in (node.get("children") or {}).values() if isinstance(node.get("children"), dict) else ():
        _collect(child, out, where)
    if "all" in node:
        _collect(node["all"], out, where)


def _address(value: str, where: str) -> str:
    try:
        ipaddress.ip_interface(value)
    except ValueError:
        raise ForeignInputError(where, f"{value!r} is not an address/prefix") from None
    return value


def _leaf_if(cfg: SwitchConfig, port: str, cage: str, cage_port: str) -> str:
    if cage.isdigit() and cage_port.isdigit() and f"swp{cage}s{int(cage_port) - 1}" in cfg.interfaces:
        return f"swp{cage}s{int(cage_port) - 1}"
    return f"swp{port}"


def host_ports(
    build: Build, fabric: str, configs: dict[str, SwitchConfig], addrs: dict[str, dict[str, str]]
) -> list[HostPort]:
    """Every addressed host port of ``fabric`` cabled to a switch of ``configs``."""
    text = read_foreign_text(build.root / "cabling" / "cables.csv", MAX_FILE)
    out = []
    for row in csv.DictReader(io.StringIO(text)):
        if row.get("fabric") != fabric:
            continue
        for h, s in (("a", "b"), ("b", "a")):
            host, leaf, netdev = (
                row.get(f"{h}_device") or "",
                row.get(f"{s}_device") or "",
                row.get(f"{h}_netdev"),
            )
            address = addrs.get(host, {}).get(netdev or "")
            if address and leaf in configs:
                ifname = _leaf_if(configs[leaf], row.get(f"{s}_port") or "", row.get(f"{s}_cage") or "",
                                  row.get(f"{s}_cage_port") or "")  # fmt: skip
                out.append(HostPort(host, netdev or "", address, row.get("rail") or "", leaf, ifname,
                                    row.get("cable_id") or ""))  # fmt: skip
    return out


def sampled(ports: list[HostPort]) -> tuple[list[HostPort], str]:
    """The hosts of the first ``LEAVES_PER_RAIL`` leaves of each rail, and the note saying so ("" if all)."""
    leaves: dict[str, set[str]] = defaultdict(set)
    for p in ports:
        leaves[p.rail].add(p.leaf)
    keep = {r: set(sorted(ls)[:LEAVES_PER_RAIL]) for r, ls in leaves.items()}
    out = [p for p in ports if p.leaf in keep[p.rail]]
    if len(out) == len(ports):
        return out, ""
    return out, (f"hosts sampled: the hosts of the first {LEAVES_PER_RAIL} leaves of each of {len(keep)} "
                 f"rails ({len(out)} of {len(ports)} host ports)")  # fmt: skip


def routing_problems(ports: list[HostPort], configs: dict[str, SwitchConfig]) -> list[str]:
    """Host ports whose address no network of their leaf holds: the leaf cannot route them."""
    out = []
    for p in ports:
        addr = ipaddress.ip_interface(p.address).ip
        nets = configs[p.leaf].networks
        if not any(addr in ipaddress.ip_network(n, strict=False) for n in nets):
            out.append(f"{p.host} {p.interface} ({p.address}, rail {p.rail}) on {p.leaf} {p.leaf_if} "
                       f"({p.cable}): {p.leaf} announces only {', '.join(nets) or 'nothing'}, no network "
                       "holding the host's address: the generated leaf configuration does not route host "
                       "subnets")  # fmt: skip
    return out


def check_hosts(build: Build, fabric: str, configs: dict[str, SwitchConfig], verdict: FabricVerdict) -> None:
    """Record the check ``host subnets routed`` (or a note why there is no host to place)."""
    addrs = host_addresses(build.root)
    if not addrs:
        verdict.notes.append("hosts: the build has no host fabric addresses (no cb_fabric_addresses in "
                             "ansible/inventory.yml), so no host is placed on its leaf")  # fmt: skip
        return
    ports = host_ports(build, fabric, configs, addrs)
    if not ports:
        why = "cables.csv names no host interface with a cb_fabric_addresses entry"
        verdict.notes.append(f"hosts: no addressed host port is cabled to a switch of {fabric} ({why})")
        return
    ports, note = sampled(ports)
    if note:
        verdict.notes.append(note)
    rails = sorted({p.rail for p in ports})
    verdict.add("host subnets routed", routing_problems(ports, configs),
                f"{len(ports)} host ports on {len({p.leaf for p in ports})} leaves ({len(rails)} rails): "
                "each address is in a network its leaf announces")  # fmt: skip
    verdict.notes.append("hosts: the per-rail ping matrix between host namespaces is not rehearsed yet")
