"""Compare two plans by name and cable id.

Device names and cable ids are stable for a blueprint (``Link.id`` = fabric letter, layer code and a
counter in build order, and the builders append when a fabric grows), so "the same cable" means "the
same id": a cable whose id survives with another speed, medium, orderable length or part is *changed*
(re-pulled: on its ports, or on the other ports it now lands on); one that only lands on another port at
either end has *moved*.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import chain, compress, repeat
from operator import is_, itemgetter, mul, ne, not_, or_
from typing import NamedTuple

from generator.diff.model import CableChange, CableMove, PlanDiff, PortSpeed, Relocation, Replacement
from generator.diff.renames import device_renames, relabel_order, slots, touching, with_new_names
from generator.gcpause import gc_paused
from generator.plan.model import Device, Endpoint, Link, Plan

CHANGED_FIELDS = ("speed_gbps", "medium", "length_m", "part_number")

# Two 100k-GPU plans hold 600,000 cables. Every pass over all of them runs in map/zip/compress (C code);
# Python code runs per cable only for the cables that differ (comparing took 3x building a plan before:
# benchmarks/day2.py, issue 32). The results are those of the plain loops the docstrings describe.
_ID, _A, _B, _SPEED = (itemgetter(Link._fields.index(f)) for f in ("id", "a", "b", "speed_gbps"))
_FIELD_GETTERS = tuple(itemgetter(Link._fields.index(f)) for f in CHANGED_FIELDS)
# the CHANGED_FIELDS names whose bit (1 << index) is set, for every combination of bits
_FIELDS_BY_MASK = tuple(
    tuple(f for i, f in enumerate(CHANGED_FIELDS) if m & (1 << i)) for m in range(1 << len(CHANGED_FIELDS))
)
_new = tuple.__new__
_DEVICE = itemgetter(Endpoint._fields.index("device"))
_PORT = itemgetter(Endpoint._fields.index("device"), Endpoint._fields.index("port"))  # where a cable lands

PortKey = tuple[str, str]  # (device, port)
# the ends of a moved cable on another port, by 2 x (a moved) + (b moved)
_MOVED_ENDS: tuple[tuple[str, ...], ...] = ((), ("b",), ("a",), ("a", "b"))


def _ends(link: Link) -> tuple[PortKey, PortKey]:
    return _PORT(link.a), _PORT(link.b)


def _port_keys(links: list[Link]) -> chain[PortKey]:
    """The a end then the b end of each cable, cable by cable: ``(k for x in links for k in _ends(x))``."""
    a_ends, b_ends = map(_PORT, map(_A, links)), map(_PORT, map(_B, links))
    return chain.from_iterable(zip(a_ends, b_ends, strict=True))


def _twice(values: list[object]) -> chain[object]:
    """Each value twice in a row: one per end of its cable, beside ``_port_keys``."""
    return chain.from_iterable(zip(values, values, strict=True))


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


def _port_speeds(links: list[Link]) -> dict[PortKey, float]:
    """Each cable's speed at both its ends; a later cable on a port wins."""
    return dict(zip(_port_keys(links), _twice(list(map(_SPEED, links))), strict=True))  # type: ignore[arg-type]


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
    # by the rack's place, not its name: renamed racks (site.rack_names) moved every device, 91 unplugged
    old_slot, new_slot = slots(old), slots(new)
    for d in new.devices:
        before = old_dev.get(d.name)
        if before is None or d.name not in new_dev:
            continue
        if before.model != d.model:
            replaced.append(Replacement(d.name, before.model, d.model))
        was = (old_slot.get(before.rack or "", before.rack), before.u)
        if was != (new_slot.get(d.rack or "", d.rack), d.u):
            relocated.append(Relocation(d.name, before.rack, before.u, d.rack, d.u))
    return DeviceChanges(
        added=tuple(d for d in new.devices if d.name in new_dev and d.name not in old_dev),
        removed=tuple(d for d in old.devices if d.name in old_dev and d.name not in new_dev),
        replaced=tuple(replaced),
        relocated=tuple(relocated),
    )


class _Cables(NamedTuple):
    changes: CableChanges
    speed_changed: list[tuple[Link, Link]]  # (old, new) of one id, same ports, another speed


def _cable_changes(old_links: list[Link], new_links: list[Link]) -> _Cables:
    """Per new cable, the old one of its id: none is *added*; one equal in every field is unchanged (most
    cables of a change); one with another port at either end has *moved*; else a CHANGED_FIELDS difference
    makes it *changed*. An old id no new cable has is *removed*. (Cable ids are unique in a plan.)"""
    old_by = dict(zip(map(_ID, old_links), old_links, strict=True))
    # each new cable takes its old one out: what stays, in the old plan's order, is what was removed
    before_of = list(map(old_by.pop, map(_ID, new_links), repeat(None)))  # None: a new id
    differing = list(compress(zip(before_of, new_links, strict=True), map(ne, before_of, new_links)))
    olds = [b for b, _ in differing if b is not None]  # the differing cables whose id both plans have
    news = [x for b, x in differing if b is not None]
    at_a = list(map(ne, map(_PORT, map(_A, olds)), map(_PORT, map(_A, news))))  # a end on another port
    at_b = list(map(ne, map(_PORT, map(_B, olds)), map(_PORT, map(_B, news))))
    shifted = list(compress(zip(olds, news, at_a, at_b, strict=True), map(or_, at_a, at_b)))
    # a moved cable whose speed, medium, length or part changes is re-pulled there: "moved" told technicians
    # to take a 400G optic to a 200G AOC port, or a 10 m cable to a 15 m run
    ends = [_MOVED_ENDS[2 * a + b] for _, _, a, b in shifted]
    m_old, m_new = [o for o, _, _, _ in shifted], [x for _, x, _, _ in shifted]
    rerouted = [
        c._replace(ends=e) for c, e in zip(_field_changes(m_old, m_new, keep_all=True), ends, strict=True)
    ]
    moved = [CableMove(c.old, c.new, c.ends) for c in rerouted if not c.fields]
    repulled = [c for c in rerouted if c.fields]
    kept = list(map(not_, map(or_, at_a, at_b)))  # both ends on their ports
    s_old, s_new = list(compress(olds, kept)), list(compress(news, kept))
    at = {id(x): i for i, x in enumerate(news)}  # in the new plan's order, as the plain loop gives them
    changed = sorted(_field_changes(s_old, s_new) + repulled, key=lambda c: at[id(c.new)])
    changes = CableChanges(
        added=tuple(compress(new_links, map(is_, before_of, repeat(None)))),
        removed=tuple(old_by.values()),
        moved=tuple(moved),
        changed=tuple(changed),
    )
    resped = map(ne, map(_SPEED, s_old), map(_SPEED, s_new))
    speed_changed = list(compress(zip(s_old, s_new, strict=True), resped))
    return _Cables(changes, speed_changed)


def _field_changes(olds: list[Link], news: list[Link], keep_all: bool = False) -> list[CableChange]:
    """The pairs (same id) that differ in a CHANGED_FIELDS field, with those fields (every pair with
    ``keep_all``, those that differ in none with no fields): per field a column of differences, the fields of
    each pair looked up by the bits they make (a growth of 100k GPUs re-pulls 65,000 cables whose runs
    changed)."""
    bits = [
        list(map(mul, map(ne, map(get, olds), map(get, news)), repeat(1 << i)))
        for i, get in enumerate(_FIELD_GETTERS)
    ]
    mask = list(map(sum, zip(*bits, strict=True)))
    fields = map(_FIELDS_BY_MASK.__getitem__, mask)
    pairs = zip(olds, news, fields, repeat((), len(olds)), strict=True)  # tuple.__new__: every field given
    return list(map(_new, repeat(CableChange), pairs if keep_all else compress(pairs, mask)))


def _port_speed_changes(cables: _Cables) -> tuple[PortSpeed, ...]:
    """Ports cabled in both plans whose speed differs, sorted by (device, port).

    A port holds one cable in a plan, so a port's speed can differ only at an end of a cable added,
    removed or moved, or of one whose speed changed: only those ends are compared, not 600k ports. (Each
    cable's speed at both its ends; a later cable on a port wins.)"""
    c = cables.changes
    # re-pulled onto other ports (CableChange.ends): both ends' speeds, as for a moved cable
    rerouted = [(ch.old, ch.new) for ch in c.changed if ch.ends]
    repulled = [*cables.speed_changed, *rerouted]
    old_x = [*c.removed, *(m.old for m in c.moved), *(o for o, _ in repulled)]
    new_x = [*c.added, *(m.new for m in c.moved), *(x for _, x in repulled)]
    old_speed, new_speed = _port_speeds(old_x), _port_speeds(new_x)
    changed = [(end, s) for end, s in new_speed.items() if end in old_speed and old_speed[end] != s]
    return tuple(PortSpeed(dev, port, old_speed[(dev, port)], s) for (dev, port), s in sorted(changed))


class _EndDevices(NamedTuple):
    """The device at the a end and at the b end of each old cable, in order (read once, scanned twice)."""

    a: list[str]
    b: list[str]

    @classmethod
    def of(cls, links: list[Link]) -> _EndDevices:
        return cls(list(map(_DEVICE, map(_A, links))), list(map(_DEVICE, map(_B, links))))

    def touching(self, names: set[str]) -> map[bool]:
        """Per cable: whether either end is on one of ``names``."""
        return map(or_, map(names.__contains__, self.a), map(names.__contains__, self.b))


def _going_down(
    old_links: list[Link], ends: _EndDevices, devices: DeviceChanges, cables: CableChanges
) -> GoingDown:
    """Every old cable that is removed, moved or re-pulled, and every cable of a device that is removed,
    replaced or moved to another rack."""
    names = {d.name for d in devices.removed} | {r.name for r in devices.replaced}
    names |= {r.name for r in devices.relocated}
    down = {x.id for x in cables.removed} | {m.id for m in cables.moved} | {c.id for c in cables.changed}
    if names:  # the old cables with either end on one of them
        down.update(compress(map(_ID, old_links), ends.touching(names)))
    return GoingDown(tuple(sorted(names)), frozenset(down))


def _port_conflicts(
    old_links: list[Link], ends: _EndDevices, added: tuple[Link, ...], down: frozenset[str]
) -> list[str]:
    """A new cable must land on a port that was free before, or one a departing cable frees."""
    conflicts: list[str] = []
    if not added:
        return conflicts
    # the old cable on each port a new cable needs (a later cable on a port wins, as in a plain loop over
    # every old cable): found among the old cables of the devices those ports are on
    wanted = {end for x in added for end in _ends(x)}
    near = list(compress(old_links, ends.touching({device for device, _ in wanted})))
    ports = list(_port_keys(near))
    held = zip(ports, _twice(list(map(_ID, near))), strict=True)
    old_port_cable = dict(compress(held, map(wanted.__contains__, ports)))
    for x in added:
        for end in _ends(x):
            holder = old_port_cable.get(end)
            if holder is not None and holder not in down:
                conflicts.append(f"new cable {x.id} needs {end[0]} port {end[1]}, still used by {holder}")
    return conflicts


def _link_racks(plan: Plan, links: Iterable[Link]) -> set[str]:
    """The racks of the devices at either end of ``links`` (the plan's devices; those with a rack)."""
    names = {n for x in links for n in (x.a.device, x.b.device)}
    by_name = plan.device_by_name
    return {d.rack for n in names if (d := by_name.get(n)) is not None and d.rack}


def _affected_racks(
    old: Plan, new: Plan, devices: DeviceChanges, cables: CableChanges, racks_changed: set[str]
) -> tuple[str, ...]:
    affected = {d.rack or "" for d in (*devices.added, *devices.removed)}
    for r in devices.relocated:
        affected.update((r.old_rack or "", r.new_rack or ""))
    affected.update(new.device_by_name[rp.name].rack or "" for rp in devices.replaced)
    affected |= _link_racks(new, chain(cables.added, (m.new for m in cables.moved)))
    affected |= _link_racks(new, (c.new for c in cables.changed))
    affected |= _link_racks(old, (c.old for c in cables.changed if c.ends))
    affected |= _link_racks(old, chain(cables.removed, (m.old for m in cables.moved)))
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
    with gc_paused():  # as when the plans were built (generator/gcpause.py): no cycles among the cables
        return _compare(old, new, tuple(sorted(set(fabrics))) if fabrics is not None else None)


def _compare(old: Plan, new: Plan, scope: tuple[str, ...] | None) -> PlanDiff:
    old_links = list(old.links) if scope is None else [x for x in old.links if x.fabric in scope]
    new_links = list(new.links) if scope is None else [x for x in new.links if x.fabric in scope]
    old_dev = _devices_in_scope(old, old_links, scope)
    new_dev = _devices_in_scope(new, new_links, scope)

    devices, renames = _renamed_devices(
        old, new, (old_links, new_links), _device_changes(old, new, old_dev, new_dev)
    )
    # the old cables under the renamed devices' new names: a renamed device's cables are where they were
    named_now = with_new_names(old_links, renames)
    differing = _cable_changes(named_now, new_links)
    speeds = _port_speed_changes(differing)
    cables = _with_old_names(differing.changes, old_links, renames)
    racks_added, racks_removed, renamed = _rack_changes(old, new, (old_dev, new_dev) if scope else None)
    ends = _EndDevices.of(named_now)
    down = _going_down(named_now, ends, devices, cables)
    conflicts = _port_conflicts(named_now, ends, cables.added, down.links)
    relabelled = _relabelled_racks(new, new_links, renames)
    affected = _affected_racks(old, new, devices, cables, {*racks_added, *racks_removed, *relabelled})
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
        racks_renamed=renamed,
        site_renamed=_site_renamed(old, new),
        devices_renamed=tuple(renames.items()),
        device_relabels=relabel_order(renames, (old.device_by_name, new.device_by_name)),
    )


def _renamed_devices(
    old: Plan, new: Plan, links: tuple[list[Link], list[Link]], devices: DeviceChanges
) -> tuple[DeviceChanges, dict[str, str]]:
    """The devices only renamed (generator/diff/renames.py), taken out of those added, removed, replaced and
    relocated. A device relocated by name may be one whose name another renamed device took (a chain or
    cycle of renames: leaf-a → leaf-b while leaf-b → leaf-c), so it is matched too."""
    moved = [r.name for r in devices.relocated]
    gone = (*devices.removed, *(old.device_by_name[n] for n in moved))
    came = (*devices.added, *(new.device_by_name[n] for n in moved))
    renames = device_renames(old, new, links, gone, came)
    if not renames:
        return devices, renames
    # in a whole chain or cycle, a name reused is both renamed away and given: neither its old device nor
    # its new one is relocated or replaced
    new_names = set(renames.values())
    return (
        DeviceChanges(
            added=tuple(d for d in devices.added if d.name not in new_names),
            removed=tuple(d for d in devices.removed if d.name not in renames),
            replaced=tuple(r for r in devices.replaced if r.name not in renames),
            relocated=tuple(r for r in devices.relocated if r.name not in renames),
        ),
        renames,
    )


def _with_old_names(cables: CableChanges, old_links: list[Link], renames: dict[str, str]) -> CableChanges:
    """The old side of each re-pulled cable as the old plan has it (a renamed device's cables were compared
    under its new name; none of them is removed or moved, as a renamed device keeps its cables' ends)."""
    if not renames or not cables.changed:
        return cables
    wanted = {c.old.id for c in cables.changed}
    old_by = {x.id: x for x in old_links if x.id in wanted}
    return cables._replace(changed=tuple(c._replace(old=old_by[c.old.id]) for c in cables.changed))


def _relabelled_racks(new: Plan, new_links: list[Link], renames: dict[str, str]) -> set[str]:
    """The racks of the renamed devices and of every end of their cables: labels change there."""
    if not renames:
        return set()
    names = set(renames.values())
    racks = {new.device_by_name[n].rack or "" for n in names}
    racks |= _link_racks(new, touching(new_links, names))
    racks.discard("")
    return racks


def _site_renamed(old: Plan, new: Plan) -> tuple[str, str] | None:
    """The site's name, which begins every cable label (generator/emit/cabling/rows.py), when it changed."""
    if old.cluster is None or new.cluster is None:  # a plan built without its blueprint names no site
        return None
    a, b = old.cluster.blueprint.site.name, new.cluster.blueprint.site.name
    return (a, b) if a != b else None


def _rack_changes(
    old: Plan, new: Plan, scoped: tuple[Mapping[str, Device], Mapping[str, Device]] | None = None
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[tuple[str, str], ...]]:
    """Racks new and emptied by their place on the floor, and those only renamed (same row and position).
    With --fabric, only racks that hold a device of those fabrics (in either plan) count: the rest of the
    floor is outside the comparison."""
    old_slots, new_slots = slots(old), slots(new)
    old_at = {slot: rid for rid, slot in old_slots.items()}
    new_at = {slot: rid for rid, slot in new_slots.items()}
    if scoped is not None:
        held = {old_slots[d.rack] for d in scoped[0].values() if d.rack in old_slots}
        held |= {new_slots[d.rack] for d in scoped[1].values() if d.rack in new_slots}
        old_at = {s: r for s, r in old_at.items() if s in held}
        new_at = {s: r for s, r in new_at.items() if s in held}
    added = tuple(sorted(new_at[s] for s in new_at.keys() - old_at.keys()))
    removed = tuple(sorted(old_at[s] for s in old_at.keys() - new_at.keys()))
    renamed = tuple(
        sorted((old_at[s], new_at[s]) for s in old_at.keys() & new_at.keys() if old_at[s] != new_at[s])
    )
    return added, removed, renamed
