"""Expected LLDP neighbours per Ethernet switch, in ``lldpcli show neighbors -f json`` shape.

One file per switch (``<switch>.json``): what ``lldpcli -f json show neighbors`` run on that switch
should print once the fabric is cabled as planned — compare it by eye, or save the real output
of every switch under the same names and run ``blueprint verify-cabling --discovered DIR``.

Conventions (documented in docs/cabling.md): switch interfaces are named ``swp<port>`` (NVIDIA
Cumulus Linux on Spectrum switches; ``swp<cage>s<n>`` for a sub-port of a split twin-port cage),
hosts are expected to advertise their SysName as the plan's hostname and their interface name as
the port id (lldpd: ``configure lldp portidsubtype ifname``), so the neighbour's port is the
host's netdev (``eth1``). Only fields the plan knows are written (no MACs, ages or TTLs).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from generator.findings import BlueprintError, Finding, Severity
from generator.fsutil import atomic_write_text
from generator.plan.model import Device, Endpoint, Plan
from generator.resolve import ResolvedCluster

NAME = "lldp"


def applies(cluster: ResolvedCluster) -> bool:
    return any(f.kind in ("ethernet", "roce") for f in cluster.fabrics.values())


def emit(cluster: ResolvedCluster, plan: Plan, out: Path) -> None:
    """Write ``<fabric>/<switch>.json`` for every Ethernet/RoCE fabric."""
    for name, fabric in sorted(cluster.fabrics.items()):
        if fabric.kind in ("ethernet", "roce"):
            for fname, text in render_lldp(plan, name).items():
                atomic_write_text(out / name / fname, text)


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


def render_lldp(plan: Plan, fabric: str) -> dict[str, str]:
    """File name → JSON text for every switch of an Ethernet/RoCE fabric ({} for other fabrics)."""
    fabrics = plan.cluster.fabrics
    if fabric not in fabrics:
        raise BlueprintError(
            [Finding("VER001", Severity.ERROR, f"the blueprint has no `{fabric}` fabric", ("fabrics",))]
        )
    if fabrics[fabric].kind not in ("ethernet", "roce"):
        return {}
    devices = plan.device_by_name
    per_switch: dict[str, list[tuple[int, str, dict[str, Any]]]] = {}
    for link in plan.links_of(fabric):
        for local, remote in ((link.a, link.b), (link.b, link.a)):
            ldev, rdev = devices.get(local.device), devices.get(remote.device)
            if ldev is None or rdev is None or ldev.kind != "switch":
                continue
            per_switch.setdefault(ldev.name, []).append(
                (local.port_number, interface_name(ldev, local), _neighbour(rdev, remote))
            )
    out: dict[str, str] = {}
    for name in sorted(per_switch):
        entries = sorted(per_switch[name], key=lambda t: (t[0], t[1]))
        # lldpcli's own shape rule: one interface is an object, several are a list of one-key objects
        interfaces: Any = (
            {entries[0][1]: entries[0][2]}
            if len(entries) == 1
            else [{ifname: body} for _n, ifname, body in entries]
        )
        out[f"{name}.json"] = json.dumps({"lldp": {"interface": interfaces}}, indent=2) + "\n"
    return out
