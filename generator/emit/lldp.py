"""Expected LLDP neighbours per Ethernet switch, in ``lldpcli show neighbors -f json`` shape.

One file per fabric (``<fabric>.json``): a JSON object mapping each switch name to what
``lldpcli -f json show neighbors`` run on that switch should print once the fabric is cabled as
planned. A fabric of 12,800 switches is one file, not 12,800. Compare it by eye, or save the real
output of every switch as ``<switch>.json`` in a directory and run
``blueprint verify-cabling --discovered DIR`` (the combined file is read the same way).

Conventions (documented in docs/cabling.md): switch interfaces are named ``swp<port>`` (NVIDIA
Cumulus Linux on Spectrum switches; ``swp<cage>s<n>`` for a sub-port of a split twin-port cage),
hosts are expected to advertise their SysName as the plan's hostname and their interface name as
the port id (lldpd: ``configure lldp portidsubtype ifname``), so the neighbour's port is the
host's netdev (``eth1``). Only fields the plan knows are written (no MACs, ages or TTLs).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from generator.findings import BlueprintError, Finding, Severity
from generator.fsutil import atomic_write_text
from generator.plan.model import Device, Endpoint, Plan
from generator.resolve import ResolvedCluster

T = TypeVar("T")

NAME = "lldp"


def applies(cluster: ResolvedCluster) -> bool:
    return any(f.kind in ("ethernet", "roce") for f in cluster.fabrics.values())


def emit(cluster: ResolvedCluster, plan: Plan, out: Path) -> None:
    """Write ``<fabric>.json`` for every Ethernet/RoCE fabric."""
    for name, fabric in sorted(cluster.fabrics.items()):
        text = render_lldp_fabric(plan, name) if fabric.kind in ("ethernet", "roce") else None
        if text is not None:
            atomic_write_text(out / f"{name}.json", text)


def interface_name(device: Device, ep: Endpoint) -> str:
    """The interface name a device uses for a planned port."""
    if device.kind == "switch":
        if device.ports_per_cage > 1 and ep.cage is not None and ep.cage_port is not None:
            return f"swp{ep.cage}s{ep.cage_port - 1}"
        return f"swp{ep.port_number}"
    return ep.netdev or ep.port


def _neighbour(device: Device, ep: Endpoint) -> dict[str, Any]:
    ifname = interface_name(device, ep)
    return {
        "via": "LLDP",
        "chassis": {
            device.name: {
                "capability": {"type": "Bridge" if device.kind == "switch" else "Station", "enabled": True}
            }
        },
        "port": {"id": {"type": "ifname", "value": ifname}, "descr": ifname},
    }


def neighbours(plan: Plan, fabric: str) -> dict[str, dict[str, Any]]:
    """Switch name → expected ``lldpcli -f json`` document, for an Ethernet/RoCE fabric ({} for others)."""
    return dict(_documents(plan, fabric))


def _documents(plan: Plan, fabric: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(switch name, its expected ``lldpcli -f json`` document), by switch name, built one at a time."""
    per_switch = _per_switch(plan, fabric, _neighbour)
    for name in sorted(per_switch):
        yield name, {"lldp": {"interface": _interfaces(per_switch.pop(name))}}


def _per_switch(
    plan: Plan, fabric: str, make: Callable[[Device, Endpoint], T]
) -> dict[str, list[tuple[int, str, T]]]:
    """Switch name -> (port number, interface name, ``make(neighbour device, its end)``) per cabled port."""
    fabrics = plan.cluster.fabrics
    if fabric not in fabrics:
        raise BlueprintError(
            [Finding("VER001", Severity.ERROR, f"the blueprint has no `{fabric}` fabric", ("fabrics",))]
        )
    if fabrics[fabric].kind not in ("ethernet", "roce"):
        return {}
    devices = plan.device_by_name
    per_switch: dict[str, list[tuple[int, str, T]]] = {}
    for link in plan.links_of(fabric):
        for local, remote in ((link.a, link.b), (link.b, link.a)):
            ldev, rdev = devices.get(local.device), devices.get(remote.device)
            if ldev is None or rdev is None or ldev.kind != "switch":
                continue
            per_switch.setdefault(ldev.name, []).append(
                (local.port_number, interface_name(ldev, local), make(rdev, remote))
            )
    return per_switch


# json.dumps's own string encoder (ensure_ascii): the same escaping, without a dict and an encoder per call
_json_str: Callable[[str], str] = json.encoder.encode_basestring_ascii


def _compact_neighbour(device: Device, end: Endpoint) -> str:
    """``json.dumps(_neighbour(device, end), separators=(",", ":"))``, written directly: 659,000 of them at
    100k GPUs (the dict and json's encoder per neighbour cost ~5 s)."""
    ifname = _json_str(interface_name(device, end))
    kind = "Bridge" if device.kind == "switch" else "Station"
    return (
        f'{{"via":"LLDP","chassis":{{{_json_str(device.name)}:{{"capability":{{"type":"{kind}","enabled":true}}}}}},'
        f'"port":{{"id":{{"type":"ifname","value":{ifname}}},"descr":{ifname}}}}}'
    )


def _compact_document(entries: list[tuple[int, str, str]]) -> str:
    """``json.dumps(document, separators=(",", ":"))`` of a switch's document, from its neighbours' JSON
    texts: the 761,000 neighbour dicts of a 100k-GPU dragonfly are never all held at once (~0.9 GB)."""
    entries = sorted(entries, key=lambda t: (t[0], t[1]))
    items = ["{" + _json_str(ifname) + ":" + body + "}" for _n, ifname, body in entries]
    # lldpcli's own shape rule (see _interfaces): one interface is an object, several a list
    interface = items[0] if len(items) == 1 else "[" + ",".join(items) + "]"
    return '{"lldp":{"interface":' + interface + "}}"


def _interfaces(entries: list[tuple[int, str, dict[str, Any]]]) -> Any:
    entries = sorted(entries, key=lambda t: (t[0], t[1]))
    # lldpcli's own shape rule: one interface is an object, several are a list of one-key objects
    if len(entries) == 1:
        return {entries[0][1]: entries[0][2]}
    return [{ifname: body} for _n, ifname, body in entries]


def render_lldp(plan: Plan, fabric: str) -> dict[str, str]:
    """``<switch>.json`` → that switch's ``lldpcli -f json show neighbors`` text ({} for other fabrics)."""
    return {
        f"{name}.json": json.dumps(doc, indent=2) + "\n" for name, doc in neighbours(plan, fabric).items()
    }


def render_lldp_fabric(plan: Plan, fabric: str) -> str | None:
    """One JSON object for the whole fabric: switch name → its ``lldpcli -f json show neighbors`` output;
    None when the fabric has no cabled switch (a directly attached torus, an InfiniBand fabric)."""
    # One switch per line, compact, so json's C encoder writes it (indenting 12,800 switches' documents
    # goes through json's pure-Python encoder: seconds and most of a gigabyte).
    per_switch = _per_switch(plan, fabric, _compact_neighbour)
    lines = [f"{_json_str(name)}: {_compact_document(per_switch.pop(name))}" for name in sorted(per_switch)]
    return "{\n" + ",\n".join(lines) + "\n}\n" if lines else None
