"""Devices that only changed name: the same hardware at the same place with the same cables.

A device's name is its identity in a plan, so a switch renamed (``A06-SPINE-01`` → ``a06-spine-01``, or a
site moving from the tool's names to its own, ``topology.names``) read as one device removed and another
installed at the same rack and unit, every cable of it moved, and the change not live. On the floor
nothing moves: the device and its cables get new labels (the name is part of every cable label,
docs/cabling.md), as for a renamed rack or site.

A removed device and an added one are the same device renamed when they have the same kind, fabric,
role, model and height, sit at the same place (rack by row and position, as racks are compared, and
unit), and have the same cables (by id) on the same ports to the same far ends, a far end that is itself
renamed counting as its new name. So a device replaced by another model, moved to another unit, or with
a cable on another port is still what it is, and two devices that swap names keep their names (neither
is removed or added: each is relocated).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from itertools import compress
from operator import attrgetter, or_

from generator.plan.model import Device, Endpoint, Link, Plan

Slot = tuple[int, int]
# one cable at a device: (cable id, "a" or "b", the device's port, the far device, the far port)
_End = tuple[str, str, str, str, str]

_A_DEVICE, _B_DEVICE = attrgetter("a.device"), attrgetter("b.device")


def slots(plan: Plan) -> dict[str, Slot]:
    """Each rack's place on the floor, (row, position): what a device's rack is, whatever it is named."""
    return {r.id: (r.row, r.position) for r in plan.racks}


def _touching(links: list[Link], names: set[str] | Mapping[str, str]) -> list[bool]:
    """Per cable: whether either end is on one of ``names`` (a pass in C over every cable)."""
    has = names.__contains__
    return list(map(or_, map(has, map(_A_DEVICE, links)), map(has, map(_B_DEVICE, links))))


def touching(links: list[Link], names: set[str] | Mapping[str, str]) -> list[Link]:
    """The cables with either end on one of ``names``."""
    return list(compress(links, _touching(links, names)))


def _ends_by_device(links: list[Link], names: set[str]) -> dict[str, list[_End]]:
    out: dict[str, list[_End]] = defaultdict(list)
    for x in touching(links, names):
        if x.a.device in names:
            out[x.a.device].append((x.id, "a", x.a.port, x.b.device, x.b.port))
        if x.b.device in names:
            out[x.b.device].append((x.id, "b", x.b.port, x.a.device, x.a.port))
    return out


def _signature(ends: Iterable[_End], far: Mapping[str, str]) -> tuple[_End, ...]:
    """The cable ends, sorted, each far device named through ``far`` (unchanged if not in it)."""
    return tuple(
        sorted((cid, side, port, far.get(dev, dev), far_port) for cid, side, port, dev, far_port in ends)
    )


def _place(d: Device, at: dict[str, Slot]) -> tuple[object, ...]:
    return (d.kind, d.fabric, d.role, d.model, d.height_u, at.get(d.rack or "", d.rack), d.u)


def device_renames(
    old: Plan,
    new: Plan,
    links: tuple[list[Link], list[Link]],
    removed: tuple[Device, ...],
    added: tuple[Device, ...],
) -> dict[str, str]:
    """Old name → new name of each removed device that is an added one renamed (``links``: the old and
    new cables compared). Paired only where exactly one removed and one added device match, so a pairing
    never depends on the order of the plans."""
    if not removed or not added:
        return {}
    gone, came = {d.name for d in removed}, {d.name for d in added}
    old_ends, new_ends = _ends_by_device(links[0], gone), _ends_by_device(links[1], came)
    # first with every far end that may itself be renamed left unnamed (a tier renamed at once: the
    # leaves' far ends are the renamed spines), then checked with the pairs found
    blank_old, blank_new = dict.fromkeys(gone, ""), dict.fromkeys(came, "")
    old_at, new_at = slots(old), slots(new)
    candidates: dict[tuple[object, ...], list[str]] = defaultdict(list)
    for d in removed:
        candidates[(*_place(d, old_at), _signature(old_ends[d.name], blank_old))].append(d.name)
    wanted: dict[tuple[object, ...], list[str]] = defaultdict(list)
    for d in added:
        wanted[(*_place(d, new_at), _signature(new_ends[d.name], blank_new))].append(d.name)
    pairs = {
        olds[0]: news[0]
        for key, olds in candidates.items()
        if len(olds) == 1 and len(news := wanted.get(key, [])) == 1
    }
    # a pair whose far ends are not the same devices under the pairs found is no rename; dropping it can
    # break a pair that counted on it, so until none is dropped
    while True:
        wrong = [o for o, n in pairs.items() if _signature(old_ends[o], pairs) != _signature(new_ends[n], {})]
        if not wrong:
            return dict(sorted(pairs.items()))
        for o in wrong:
            del pairs[o]


def _renamed(ep: Endpoint, renames: Mapping[str, str]) -> Endpoint:
    name = renames.get(ep.device)
    return ep if name is None else ep._replace(device=name)


def with_new_names(links: list[Link], renames: Mapping[str, str]) -> list[Link]:
    """``links`` with each renamed device's new name at its ends (the other cables the same objects)."""
    if not renames:
        return links
    out = list(links)
    for i in compress(range(len(links)), _touching(links, renames)):
        x = links[i]
        out[i] = x._replace(a=_renamed(x.a, renames), b=_renamed(x.b, renames))
    return out
