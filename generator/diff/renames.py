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
a cable on another port is still what it is.

Names may be reused: a site renumbering its switches renames leaf-a → leaf-b while leaf-b → leaf-c (a
chain), or swaps two names (a cycle). Read by name, leaf-b moved to leaf-a's unit and every cable of both
switches moved. So a device whose name moved to another place is matched too, as a removed or added one
is, but only on its cables (two cable-less switches that swap places are relocated, as the plans say),
and only in whole chains and cycles: a name given to another device must have left its own (renamed
too), or one device would bear the name twice. ``relabel_order`` says in which order to relabel them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Iterator, Mapping
from itertools import compress
from operator import attrgetter, or_

from generator.diff.model import Relabel
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
    gone: tuple[Device, ...],
    came: tuple[Device, ...],
) -> dict[str, str]:
    """Old name → new name of each device that is another one renamed (``links``: the old and new cables
    compared; ``gone``: the old plan's devices removed or moved to another place, ``came``: the new plan's
    added or moved, a moved one's name being in both). Paired only where exactly one old and one new device
    match, so a pairing never depends on the order of the plans."""
    if not gone or not came:
        return {}
    old_names, new_names = {d.name for d in gone}, {d.name for d in came}
    old_ends, new_ends = _ends_by_device(links[0], old_names), _ends_by_device(links[1], new_names)
    reused = old_names & new_names
    # first with every far end that may itself be renamed left unnamed (a tier renamed at once: the
    # leaves' far ends are the renamed spines), then checked with the pairs found
    keys = (
        _keys(gone, slots(old), old_ends, reused, dict.fromkeys(old_names, "")),
        _keys(came, slots(new), new_ends, reused, dict.fromkeys(new_names, "")),
    )
    pairs = {
        olds[0]: news[0]
        for key, olds in keys[0].items()
        if len(olds) == 1 and len(news := keys[1].get(key, [])) == 1
    }
    return _whole(pairs, (old_ends, new_ends), (old_names, new_names))


def _whole(
    pairs: dict[str, str],
    ends: tuple[dict[str, list[_End]], dict[str, list[_End]]],
    names: tuple[set[str], set[str]],
) -> dict[str, str]:
    """``pairs`` less each whose far ends are not the same devices under the pairs kept, or that gives a
    name whose device keeps it or takes one from a device that keeps its own (a chain or cycle of renames
    is whole). Dropping a pair can break one that counted on it, so round after round, each round checking
    again only those (a chain of 100,000 renames broken at its end unravels one pair a round)."""
    (old_ends, new_ends), (old_names, new_names) = ends, names
    given = {n: o for o, n in pairs.items()}

    def _holds(o: str, n: str) -> bool:
        if n in old_names and n not in pairs:  # the old n keeps its name
            return False
        if o in new_names and o not in given:  # the new o is no old device renamed
            return False
        return _signature(old_ends[o], pairs) == _signature(new_ends[n], {})

    check = set(pairs)
    while check:
        # checked against the same pairs, the round's order does not matter
        wrong = [(o, n) for o in check if not _holds(o, n := pairs[o])]
        for o, n in wrong:
            del pairs[o], given[n]
        check = set()
        for o, n in wrong:  # its neighbours' far ends, the device renamed to its name, the one renamed from n
            check.update(far for _, _, _, far, _ in old_ends[o])
            check.update(x for x in (given.get(o), n) if x is not None)
        check &= pairs.keys()
    return dict(sorted(pairs.items()))


def _keys(
    devices: tuple[Device, ...],
    at: dict[str, Slot],
    ends: dict[str, list[_End]],
    reused: set[str],
    blank: Mapping[str, str],
) -> dict[tuple[object, ...], list[str]]:
    """The devices by place and cables (far ends through ``blank``). A reused name is matched only on its
    cables: without any, its place is all there is, and the name it bears says which device it is."""
    out: dict[tuple[object, ...], list[str]] = defaultdict(list)
    for d in devices:
        if d.name in reused and not ends[d.name]:
            continue
        out[(*_place(d, at), _signature(ends[d.name], blank))].append(d.name)
    return out


def relabel_order(renames: Mapping[str, str], in_use: tuple[Collection[str], ...]) -> tuple[Relabel, ...]:
    """The renames in an order a technician can follow with no two devices labelled alike at any time: a
    device's new label once its holder has been relabelled (a chain from its end), and a cycle opened with
    a temporary label no device bears (in any of ``in_use``), as one swaps two values through a third.
    Each chain and cycle is walked once from its end (a site shifting 100,000 host names by one is one
    chain: looking for the next free name among all of them each time took minutes)."""
    came_from = {n: o for o, n in renames.items()}  # injective: a name is given to one device
    out: list[Relabel] = []
    for o in sorted(renames):  # chains, each from the device whose new name no device bears
        if renames[o] not in renames:
            for x in _back(o, came_from, stop=None):
                out.append(Relabel(x, renames[x], x, renames[x]))
    done = {r.old for r in out}
    taken: set[str] | None = None  # every device name, case folded: built for the first cycle only
    for first in sorted(renames.keys() - done):  # what is left is cycles: each opened at its least name
        if first in done:
            continue
        if taken is None:
            taken = {name.casefold() for names in in_use for name in names}
        tmp = _free(f"tmp-{first}", taken)
        out.append(Relabel(first, renames[first], first, tmp))
        for x in _back(came_from[first], came_from, stop=first):
            out.append(Relabel(x, renames[x], x, renames[x]))
            done.add(x)
        out.append(Relabel(first, renames[first], tmp, renames[first]))
        done.add(first)
    return tuple(out)


def _back(start: str, came_from: Mapping[str, str], stop: str | None) -> Iterator[str]:
    """``start``, the device renamed to its name, the one renamed to that one's …, until none is (or
    ``stop``)."""
    x: str | None = start
    while x is not None and x != stop:
        yield x
        x = came_from.get(x)


def _free(name: str, taken: set[str]) -> str:
    """``name``, or it with the first ``-N`` suffix, that no device bears, case aside (``TMP-A`` and
    ``tmp-a`` on two switches side by side are one label to a technician)."""
    out, n = name, 1
    while out.casefold() in taken:
        n += 1
        out = f"{name}-{n}"
    return out


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
