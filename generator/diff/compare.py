"""Compare two plans by name and cable id.

Device names and cable ids are stable for a blueprint (``Link.id`` = fabric letter, layer code and a
counter in build order, and the builders append when a fabric grows), so "the same cable" means "the
same id": a cable whose id survives with a different port at either end has *moved*; one whose ports
stay but whose speed, medium or orderable length changes is *changed* (re-pulled or re-optioned).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import NamedTuple

from generator.diff.model import CableChange, CableMove, PlanDiff, PortSpeed, Relocation, Replacement
from generator.plan.model import Device, Link, Plan

CHANGED_FIELDS = ("speed_gbps", "medium", "length_m", "part_number")


def _ends(link: Link) -> tuple[tuple[str, str], tuple[str, str]]:
    return (link.a.device, link.a.port), (link.b.device, link.b.port)


def _devices_in_scope(
    plan: Plan, links: Iterable[Link], fabrics: tuple[str, ...] | None
) -> dict[str, Device]:
    if fabrics is None:
        return dict(plan.device_by_name)
    on_links = {ep.device for link in links for ep in (link.a, link.b)}
    return {
        d.name: d
        for d in plan.devices
        if (d.kind == "switch" and d.fabric in fabrics) or (d.kind == "node" and d.name in on_links)
    }


def _port_speeds(links: Iterable[Link]) -> dict[tuple[str, str], float]:
    out: dict[tuple[str, str], float] = {}
    for link in links:
        for ep in (link.a, link.b):
            out[(ep.device, ep.port)] = link.speed_gbps
    return out


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def _sample(names: list[str], k: int = 4) -> str:
    return ", ".join(names[:k]) + (" …" if len(names) > k else "")


class DeviceChanges(NamedTuple):
    added: tuple[Device, ...]
    removed: tuple[Device, ...]
    replaced: tuple[Replacement, ...]
    relocated: tuple[Relocation, ...]


class CableChanges(NamedTuple):
    added: tuple[Link, ...]
    removed: tuple[Link, ...]
    moved: tuple[CableMove, ...]
    changed: tuple[CableChange, ...]


class GoingDown(NamedTuple):
    """What is taken down before the new state is built."""

    devices: tuple[str, ...]  # removed, replaced or relocated devices (sorted)
    links: frozenset[str]  # cable ids: removed, moved, re-pulled, or on a device that goes down


def _device_changes(
    old: Plan, new: Plan, old_dev: dict[str, Device], new_dev: dict[str, Device]
) -> DeviceChanges:
    replaced: list[Replacement] = []
    relocated: list[Relocation] = []
    for d in new.devices:
        before = old_dev.get(d.name)
        if before is None or d.name not in new_dev:
            continue
        if before.model != d.model:
            replaced.append(Replacement(d.name, before.model, d.model))
        if (before.rack, before.u) != (d.rack, d.u):
            relocated.append(Relocation(d.name, before.rack, before.u, d.rack, d.u))
    return DeviceChanges(
        added=tuple(d for d in new.devices if d.name in new_dev and d.name not in old_dev),
        removed=tuple(d for d in old.devices if d.name in old_dev and d.name not in new_dev),
        replaced=tuple(replaced),
        relocated=tuple(relocated),
    )


def _cable_changes(old_links: list[Link], new_links: list[Link]) -> CableChanges:
    old_by = {x.id: x for x in old_links}
    new_ids = {x.id for x in new_links}
    moved: list[CableMove] = []
    changed: list[CableChange] = []
    for x in new_links:
        before = old_by.get(x.id)
        if before is None or before == x:  # absent, or equal in every field (most cables of a change)
            continue
        (oa, ob), (na, nb) = _ends(before), _ends(x)
        ends = tuple(e for e, was, now in (("a", oa, na), ("b", ob, nb)) if was != now)
        if ends:
            moved.append(CableMove(before, x, ends))
            continue
        fields = tuple(f for f in CHANGED_FIELDS if getattr(before, f) != getattr(x, f))
        if fields:
            changed.append(CableChange(before, x, fields))
    return CableChanges(
        added=tuple(x for x in new_links if x.id not in old_by),
        removed=tuple(x for x in old_links if x.id not in new_ids),
        moved=tuple(moved),
        changed=tuple(changed),
    )


def _port_speed_changes(old_links: list[Link], new_links: list[Link]) -> tuple[PortSpeed, ...]:
    old_speed, new_speed = _port_speeds(old_links), _port_speeds(new_links)
    # filtered, then sorted: the same order as sorting every port first, without sorting 600k ports
    changed = [(end, s) for end, s in new_speed.items() if end in old_speed and old_speed[end] != s]
    return tuple(PortSpeed(dev, port, old_speed[(dev, port)], s) for (dev, port), s in sorted(changed))


def _going_down(old_links: list[Link], devices: DeviceChanges, cables: CableChanges) -> GoingDown:
    """Every old cable that is removed, moved or re-pulled, and every cable of a device that is removed,
    replaced or moved to another rack."""
    names = {d.name for d in devices.removed} | {r.name for r in devices.replaced}
    names |= {r.name for r in devices.relocated}
    down = {x.id for x in cables.removed} | {m.id for m in cables.moved} | {c.id for c in cables.changed}
    by_device: dict[str, list[str]] = defaultdict(list)
    for x in old_links:
        for ep in (x.a, x.b):
            by_device[ep.device].append(x.id)
    for name in names:
        down.update(by_device.get(name, ()))
    return GoingDown(tuple(sorted(names)), frozenset(down))


def _port_conflicts(old_links: list[Link], added: tuple[Link, ...], down: frozenset[str]) -> list[str]:
    """A new cable must land on a port that was free before, or one a departing cable frees."""
    conflicts: list[str] = []
    old_port_cable = {end: x.id for x in old_links for end in _ends(x)}
    for x in added:
        for end in _ends(x):
            holder = old_port_cable.get(end)
            if holder is not None and holder not in down:
                conflicts.append(f"new cable {x.id} needs {end[0]} port {end[1]}, still used by {holder}")
    return conflicts


def _link_racks(plan: Plan, link: Link) -> set[str]:
    return {
        d.rack for ep in (link.a, link.b) if (d := plan.device_by_name.get(ep.device)) is not None and d.rack
    }


def _affected_racks(
    old: Plan, new: Plan, devices: DeviceChanges, cables: CableChanges, racks_changed: set[str]
) -> tuple[str, ...]:
    affected = {d.rack or "" for d in (*devices.added, *devices.removed)}
    for r in devices.relocated:
        affected.update((r.old_rack or "", r.new_rack or ""))
    affected.update(new.device_by_name[rp.name].rack or "" for rp in devices.replaced)
    for x in cables.added:
        affected |= _link_racks(new, x)
    for x in cables.removed:
        affected |= _link_racks(old, x)
    for m in cables.moved:
        affected |= _link_racks(old, m.old) | _link_racks(new, m.new)
    for c in cables.changed:
        affected |= _link_racks(new, c.new)
    affected.discard("")
    return tuple(sorted(affected | racks_changed))


def _disruption_reasons(
    devices: DeviceChanges, cables: CableChanges, speeds: tuple[PortSpeed, ...], conflicts: list[str]
) -> list[str]:
    reasons: list[str] = []
    if devices.removed:
        names = _sample([d.name for d in devices.removed])
        reasons.append(f"{_plural(len(devices.removed), 'device')} removed ({names})")
    if devices.replaced:
        names = _sample([r.name for r in devices.replaced])
        reasons.append(f"{_plural(len(devices.replaced), 'device')} replaced by another model ({names})")
    if devices.relocated:
        names = _sample([r.name for r in devices.relocated])
        reasons.append(f"{_plural(len(devices.relocated), 'device')} move to another rack or unit ({names})")
    if cables.removed:
        reasons.append(f"{_plural(len(cables.removed), 'cable')} removed")
    if cables.moved:
        reasons.append(f"{_plural(len(cables.moved), 'cable')} move to another port")
    if cables.changed:
        n = _plural(len(cables.changed), "cable")
        reasons.append(f"{n} change speed, medium or length and are re-pulled")
    if speeds:
        reasons.append(f"{_plural(len(speeds), 'port')} change speed")
    reasons.extend(conflicts[:5])
    return reasons


def compare(old: Plan, new: Plan, fabrics: Iterable[str] | None = None) -> PlanDiff:
    """The physical changes from ``old`` to ``new`` (optionally only on some fabrics)."""
    scope = tuple(sorted(set(fabrics))) if fabrics is not None else None
    old_links = [x for x in old.links if scope is None or x.fabric in scope]
    new_links = [x for x in new.links if scope is None or x.fabric in scope]
    old_dev = _devices_in_scope(old, old_links, scope)
    new_dev = _devices_in_scope(new, new_links, scope)

    devices = _device_changes(old, new, old_dev, new_dev)
    cables = _cable_changes(old_links, new_links)
    speeds = _port_speed_changes(old_links, new_links)
    old_racks, new_racks = {r.id for r in old.racks}, {r.id for r in new.racks}
    racks_added, racks_removed = tuple(sorted(new_racks - old_racks)), tuple(sorted(old_racks - new_racks))
    down = _going_down(old_links, devices, cables)
    conflicts = _port_conflicts(old_links, cables.added, down.links)
    affected = _affected_racks(old, new, devices, cables, new_racks ^ old_racks)
    reasons = _disruption_reasons(devices, cables, speeds, conflicts)
    return PlanDiff(
        old=old,
        new=new,
        fabrics=scope,
        devices_added=devices.added,
        devices_removed=devices.removed,
        devices_replaced=devices.replaced,
        devices_relocated=devices.relocated,
        cables_added=cables.added,
        cables_removed=cables.removed,
        cables_moved=cables.moved,
        cables_changed=cables.changed,
        port_speeds=speeds,
        racks_added=racks_added,
        racks_removed=racks_removed,
        racks_affected=affected,
        links_down=tuple(sorted(down.links)),
        devices_down=down.devices,
        disruptions=tuple(reasons) if (down.links or down.devices or conflicts) else (),
        conflicts=tuple(conflicts),
    )
