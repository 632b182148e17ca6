"""The bill of materials: switches, servers, cables (one per twin-port DAC/ACC pair), transceivers per cage
or port and per fabric, racks."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING, NamedTuple

from blueprints.catalog.schema import Switch
from generator.plan.attached import KIND as APPLIANCE
from generator.plan.attached import appliance_bom_lines, port_form_factor, unsized_cable_lines
from generator.plan.links import PROTOCOL
from generator.plan.media import MediaChooser
from generator.plan.model import BomLine, Device, Endpoint, Link, Rack
from generator.resolve import ResolvedCluster

if TYPE_CHECKING:
    from generator.plan.build import _SwitchEntry


class Bom(NamedTuple):
    transceivers: dict[str, int]  # transceiver id → modules, all fabrics
    by_fabric: dict[str, dict[str, int]]  # fabric → transceiver id → modules
    lines: list[BomLine]


class _Module(NamedTuple):
    """One transceiver: the catalogue id chosen and the fabric of the cable it serves; not ``chosen``: an
    appliance port's whose form factor nobody gives (the id is unchosen_module's)."""

    transceiver: str
    fabric: str
    chosen: bool = True


def unchosen_module(medium_kind: str, speed_gbps: float) -> str:
    """The BOM key of the modules at appliance ports whose form factor nobody gives: counted (the cable
    needs them) but not chosen, rather than a made-up ``generic-...-unknown`` part (rule NET024 asks)."""
    return f"appliance-port-{medium_kind}-{speed_gbps:g}g"


CableKey = tuple[str, float, float]  # (medium id, orderable length, speed): one BOM cable line


def _cable_keys(
    links: list[Link], cluster: ResolvedCluster, device_by: dict[str, Device]
) -> dict[CableKey, set[object]]:
    """Cables to order per (medium, length, speed): a switch-to-switch DAC/ACC between twin-port cages is
    one cable for its two links, everything else one per link."""
    cat = cluster.catalog
    out: dict[CableKey, set[object]] = defaultdict(set)
    for link in links:
        if not link.medium:
            continue
        twin_twin = (
            link.a.cage is not None
            and link.b.cage is not None
            and device_by[link.a.device].kind == "switch"
            and device_by[link.b.device].kind == "switch"
        )
        if cat.media[link.medium].kind in ("dac", "acc") and twin_twin:
            out[(link.medium, link.length_m, link.speed_gbps)].add(
                (link.a.device, link.a.cage, link.b.device, link.b.cage)
            )
        else:
            out[(link.medium, link.length_m, link.speed_gbps)].add(link.id)
    return out


class _Socket(NamedTuple):
    """Where a module plugs in: a cage (twin-port: one module for both ports) or a port; its form factor
    (None: an appliance port nobody gives one for) and the speed it must carry."""

    key: tuple[str, object]
    form_factor: str | None
    speed_gbps: float


def _socket(
    ep: Endpoint,
    link: Link,
    dev: Device,
    entry: Switch | None,
    nic_ff: dict[tuple[str, str], str],
    appliance_ff: dict[str, str | None],
) -> _Socket:
    if entry is not None:  # a switch port
        key: tuple[str, object] = ("cage", ep.cage) if ep.cage is not None else ("port", ep.port)
        ff = entry.form_factor
        speed = entry.speed_gbps if ep.cage is not None else link.speed_gbps
        if ep.cage is None and entry.uplinks and ep.port_number > entry.ports:
            ff = "qsfp28" if entry.uplinks.speed_gbps == 100 else ff
        return _Socket(key, ff, speed)
    if ep.cage is not None:
        # server twin-port cages (DGX H100/H200) take flat-top (RHS) modules, switch cages finned (IHS)
        return _Socket(("cage", ep.cage), "osfp-twin-rhs", link.speed_gbps)
    if dev.kind == APPLIANCE:  # its cage is the catalogue's or the blueprint's, never a pool NIC's
        return _Socket(("port", ep.port), appliance_ff.get(dev.name), link.speed_gbps)
    return _Socket(("port", ep.port), nic_ff.get((dev.pool or "", ep.port), "unknown"), link.speed_gbps)


def _modules(
    cluster: ResolvedCluster,
    links: list[Link],
    chooser: MediaChooser,
    device_by: dict[str, Device],
    switches: dict[str, _SwitchEntry],
) -> dict[tuple[str, tuple[str, object]], _Module]:
    """(device, cage-or-port key) -> the transceiver it takes, for every cable whose medium needs them."""
    cat = cluster.catalog
    nic_ff: dict[tuple[str, str], str] = {}
    for pool in cluster.pools:
        for p in pool.ports:
            nic = cat.nics.get(p.model)
            nic_ff[(pool.name, p.plan_port)] = nic.form_factor if nic else "unknown"
    appliance_ff = {a.name: port_form_factor(a) for a in cluster.blueprint.appliances}
    protocol_of = {name: PROTOCOL[rf.kind] for name, rf in cluster.fabrics.items()}
    modules: dict[tuple[str, tuple[str, object]], _Module] = {}
    for link in links:
        if not link.medium:
            continue
        medium = cat.media[link.medium]
        if not medium.needs_transceivers:
            continue
        for ep in (link.a, link.b):
            # _socket's key, known before the socket is made: a twin-port cage's second port (half the
            # switch ends of a 100k-GPU fat-tree) needs nothing more
            if (ep.device, ("cage", ep.cage) if ep.cage is not None else ("port", ep.port)) in modules:
                continue
            dev = device_by[ep.device]
            entry = switches[dev.name].model if dev.kind == "switch" else None
            socket = _socket(ep, link, dev, entry, nic_ff, appliance_ff)
            if (ep.device, socket.key) not in modules:
                if socket.form_factor is None:
                    tid = unchosen_module(medium.kind, socket.speed_gbps)
                    modules[(ep.device, socket.key)] = _Module(tid, link.fabric, chosen=False)
                    continue
                tid = chooser.transceiver(
                    medium.kind, socket.speed_gbps, socket.form_factor, link.run_m, protocol_of[link.fabric]
                )
                modules[(ep.device, socket.key)] = _Module(tid, link.fabric)
    return modules


def _bom_lines(
    cluster: ResolvedCluster,
    devices: list[Device],
    cable_keys: dict[CableKey, set[object]],
    transceivers: dict[str, int],
    racks: list[Rack],
    unchosen: set[str],
) -> list[BomLine]:
    """Switches, servers, cables, transceivers, racks: each sorted by catalogue id."""
    cat = cluster.catalog
    bom: list[BomLine] = []
    for model, n in sorted(Counter(d.model for d in devices if d.kind == "switch").items()):
        sw = cat.switches.get(model)
        bom.append(BomLine("switch", model, n, sw.name if sw else ""))
    for model, n in sorted(Counter(d.model for d in devices if d.kind == "node").items()):
        srv = cat.servers.get(model)
        bom.append(BomLine("server", model, n, srv.name if srv else model))
    bom.extend(appliance_bom_lines(devices))
    for (mid, length, speed), keys in sorted(cable_keys.items()):
        medium = cat.media[mid]
        detail = f"{speed:g}G {length:g} m {medium.name}"
        bom.append(BomLine("cable", mid, len(keys), detail, medium.part_numbers.get(speed)))
    for tid, n in transceivers.items():
        t = cat.transceivers.get(tid)
        name, part = (t.name, t.part_number) if t else ("no catalogue match", None)
        if tid in unchosen:
            name = (
                "not chosen: the appliance ports' form factor is unknown; declare port_form_factor (NET024)"
            )
        bom.append(BomLine("transceiver", tid, n, name, part))
    if racks:
        rack = cluster.blueprint.site.rack
        bom.append(BomLine("rack", f"{rack.units}U", len(racks), f"{rack.power_kw:g} kW budget each"))
    return bom


def bill_of_materials(
    cluster: ResolvedCluster,
    devices: list[Device],
    links: list[Link],
    racks: list[Rack],
    chooser: MediaChooser,
    device_by: dict[str, Device],
    switches: dict[str, _SwitchEntry],
) -> Bom:
    modules = _modules(cluster, links, chooser, device_by, switches)
    transceivers = dict(sorted(Counter(m.transceiver for m in modules.values()).items()))
    by_fabric: dict[str, Counter[str]] = defaultdict(Counter)
    for m in modules.values():
        by_fabric[m.fabric][m.transceiver] += 1
    unchosen = {m.transceiver for m in modules.values() if not m.chosen}
    bom = _bom_lines(cluster, devices, _cable_keys(links, cluster, device_by), transceivers, racks, unchosen)
    at = next((i for i, b in enumerate(bom) if b.item in ("transceiver", "rack")), len(bom))
    bom[at:at] = unsized_cable_lines(links)  # appliances' cables before their rack is known (NET024)
    per_fabric = {f: dict(sorted(c.items())) for f, c in sorted(by_fabric.items())}
    return Bom(transceivers, per_fabric, bom)
