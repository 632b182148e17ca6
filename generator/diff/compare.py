"""Compare two plans by name and cable id.

Device names and cable ids are stable for a blueprint (``Link.id`` = fabric letter, layer code and a
counter in build order, and the builders append when a fabric grows), so "the same cable" means "the
same id": a cable whose id survives with a different port at either end has *moved*; one whose ports
stay but whose speed, medium or orderable length changes is *changed* (re-pulled or re-optioned).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

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


def compare(old: Plan, new: Plan, fabrics: Iterable[str] | None = None) -> PlanDiff:
    """The physical changes from ``old`` to ``new`` (optionally only on some fabrics)."""
    scope = tuple(sorted(set(fabrics))) if fabrics is not None else None
    old_links = [x for x in old.links if scope is None or x.fabric in scope]
    new_links = [x for x in new.links if scope is None or x.fabric in scope]
    old_dev = _devices_in_scope(old, old_links, scope)
    new_dev = _devices_in_scope(new, new_links, scope)

    added_d = tuple(d for d in new.devices if d.name in new_dev and d.name not in old_dev)
    removed_d = tuple(d for d in old.devices if d.name in old_dev and d.name not in new_dev)
    replaced: list[Replacement] = []
    relocated: list[Relocation] = []
    for d in new.devices:
        o = old_dev.get(d.name)
        if o is None or d.name not in new_dev:
            continue
        if o.model != d.model:
            replaced.append(Replacement(d.name, o.model, d.model))
        if (o.rack, o.u) != (d.rack, d.u):
            relocated.append(Relocation(d.name, o.rack, o.u, d.rack, d.u))

    old_by = {x.id: x for x in old_links}
    new_by = {x.id: x for x in new_links}
    added_c = tuple(x for x in new_links if x.id not in old_by)
    removed_c = tuple(x for x in old_links if x.id not in new_by)
    moved: list[CableMove] = []
    changed: list[CableChange] = []
    for x in new_links:
        o = old_by.get(x.id)
        if o is None:
            continue
        (oa, ob), (na, nb) = _ends(o), _ends(x)
        ends = tuple(e for e, before, after in (("a", oa, na), ("b", ob, nb)) if before != after)
        if ends:
            moved.append(CableMove(o, x, ends))
            continue
        fields = tuple(f for f in CHANGED_FIELDS if getattr(o, f) != getattr(x, f))
        if fields:
            changed.append(CableChange(o, x, fields))

    old_speed, new_speed = _port_speeds(old_links), _port_speeds(new_links)
    speeds = tuple(
        PortSpeed(dev, port, old_speed[(dev, port)], s)
        for (dev, port), s in sorted(new_speed.items())
        if (dev, port) in old_speed and old_speed[(dev, port)] != s
    )

    old_racks = {r.id for r in old.racks}
    new_racks = {r.id for r in new.racks}
    racks_added = tuple(sorted(new_racks - old_racks))
    racks_removed = tuple(sorted(old_racks - new_racks))

    # what goes down: every old cable that is removed, moved or re-pulled, and every cable of a device
    # that is removed, replaced or moved to another rack
    down_devices = sorted(
        {d.name for d in removed_d} | {r.name for r in replaced} | {r.name for r in relocated}
    )
    down_set = set(down_devices)
    down: set[str] = {x.id for x in removed_c} | {m.id for m in moved} | {c.id for c in changed}
    by_device: dict[str, list[str]] = defaultdict(list)
    for x in old_links:
        for ep in (x.a, x.b):
            by_device[ep.device].append(x.id)
    for name in down_set:
        down.update(by_device.get(name, ()))

    # a new cable must land on a port that was free before, or one a departing cable frees
    conflicts: list[str] = []
    old_port_cable = {end: x.id for x in old_links for end in _ends(x)}
    for x in added_c:
        for end in _ends(x):
            holder = old_port_cable.get(end)
            if holder is not None and holder not in down:
                conflicts.append(f"new cable {x.id} needs {end[0]} port {end[1]}, still used by {holder}")

    affected: set[str] = set()
    for d in (*added_d,):
        affected.add(d.rack or "")
    for d in removed_d:
        affected.add(d.rack or "")
    for r in relocated:
        affected.update((r.old_rack or "", r.new_rack or ""))
    for rp in replaced:
        affected.add(new.device_by_name[rp.name].rack or "")

    def ends_racks(plan: Plan, link: Link) -> None:
        for ep in (link.a, link.b):
            d = plan.device_by_name.get(ep.device)
            if d is not None and d.rack:
                affected.add(d.rack)

    for x in added_c:
        ends_racks(new, x)
    for x in removed_c:
        ends_racks(old, x)
    for m in moved:
        ends_racks(old, m.old)
        ends_racks(new, m.new)
    for c in changed:
        ends_racks(new, c.new)
    affected.discard("")
    affected.update(racks_added)
    affected.update(racks_removed)

    reasons: list[str] = []
    if removed_d:
        reasons.append(
            f"{_plural(len(removed_d), 'device')} removed ({_sample([d.name for d in removed_d])})"
        )
    if replaced:
        reasons.append(
            f"{_plural(len(replaced), 'device')} replaced by another model "
            f"({_sample([r.name for r in replaced])})"
        )
    if relocated:
        reasons.append(
            f"{_plural(len(relocated), 'device')} move to another rack or unit "
            f"({_sample([r.name for r in relocated])})"
        )
    if removed_c:
        reasons.append(f"{_plural(len(removed_c), 'cable')} removed")
    if moved:
        reasons.append(f"{_plural(len(moved), 'cable')} move to another port")
    if changed:
        reasons.append(f"{_plural(len(changed), 'cable')} change speed, medium or length and are re-pulled")
    if speeds:
        reasons.append(f"{_plural(len(speeds), 'port')} change speed")
    reasons.extend(conflicts[:5])
    return PlanDiff(
        old=old,
        new=new,
        fabrics=scope,
        devices_added=added_d,
        devices_removed=removed_d,
        devices_replaced=tuple(replaced),
        devices_relocated=tuple(relocated),
        cables_added=added_c,
        cables_removed=removed_c,
        cables_moved=tuple(moved),
        cables_changed=tuple(changed),
        port_speeds=speeds,
        racks_added=racks_added,
        racks_removed=racks_removed,
        racks_affected=tuple(sorted(affected)),
        links_down=tuple(sorted(down)),
        devices_down=tuple(down_devices),
        disruptions=tuple(reasons) if (down or down_devices or conflicts) else (),
        conflicts=tuple(conflicts),
    )
