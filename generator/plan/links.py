"""A fabric's cables: stable ids (fabric letter, layer code, number), both ends with their cages, run
lengths between the racks, and the medium and part each run takes."""

from __future__ import annotations

from operator import itemgetter
from typing import TYPE_CHECKING

from blueprints.models.site import Site
from generator.plan.media import MediaChooser, Position, run_lengths
from generator.plan.model import Endpoint, Link
from generator.topology.base import PortRef, Terminal

if TYPE_CHECKING:
    from generator.plan.build import _Built


FABRIC_LETTER = {"compute": "C", "storage": "S", "management": "M"}


PROTOCOL = {"infiniband": "infiniband", "roce": "ethernet", "ethernet": "ethernet"}


LAYER_CODE = {
    "node_leaf": "NL",
    "leaf_spine": "LS",
    "spine_core": "SC",
    "node_router": "NR",
    "local": "LO",
    "global": "GL",
    "node_switch": "NS",
    "torus": "TO",
    "hypercube": "HC",
}


def _endpoint(ref: PortRef, cage_of: dict[str, tuple[int, int]]) -> Endpoint:
    # tuple.__new__: NamedTuple's own __new__ costs a Python call per end (630,000 at 100k GPUs)
    port = ref.port
    if isinstance(port, Terminal):
        return _new(Endpoint, _TERMINAL_END(port))
    ppc, nports = cage_of[ref.device]
    if ppc > 1 and port <= nports:
        return _new(
            Endpoint, (ref.device, str(port), port, (port - 1) // ppc + 1, (port - 1) % ppc + 1, None, None)
        )
    return _new(Endpoint, (ref.device, str(port), port, None, None, None, None))


_new = tuple.__new__
# a node terminal's fields in an Endpoint's order (its host is the end's device; the rail is not an end's),
# picked in C
_TERMINAL_END = itemgetter(
    *(Terminal._fields.index("host" if f == "device" else f) for f in Endpoint._fields)
)


class _Sequence:
    """The cable ids of one layer (and numbering group) of a fabric: ``C-NL-000001``, ``C-LS-su1-0001``."""

    __slots__ = ("n", "pattern")

    def __init__(self, letter: str, layer: str, group: str | None) -> None:
        code = LAYER_CODE.get(layer, layer[:2].upper())
        code = code if group is None else f"{code}-{group}"
        self.pattern, self.n = f"{letter}-{code}-%0{4 if group else 6}d", 0


# What a cable of one speed and run takes: (medium id, orderable length, part number); ("", 0.0, None) when
# no medium reaches. Worked out once per (speed, run): a fabric has a few hundred distinct runs, not 20,000.
_Media = tuple[str, float, str | None]
_UNREACHABLE: _Media = ("", 0.0, None)


def _media(chooser: MediaChooser, speed: float, run: float, protocol: str) -> _Media:
    choice = chooser.choose(speed, run, protocol)
    if choice is None:
        return _UNREACHABLE
    medium_id, medium, length = choice
    return medium_id, length, medium.part_numbers.get(speed)


def fabric_links(
    site: Site,
    fname: str,
    b: _Built,
    where: dict[str, Position],
    cage_of: dict[str, tuple[int, int]],
    chooser: MediaChooser,
) -> tuple[list[Link], int]:
    """One fabric's cables with stable ids, run lengths and media; and how many no medium reaches."""
    letter, fabric_speed = FABRIC_LETTER[fname], b.fabric.speed_gbps
    measure, protocol = run_lengths(site), PROTOCOL[b.fabric.kind]
    sequences: dict[tuple[str, str | None], _Sequence] = {}
    media: dict[tuple[float, float], _Media] = {}
    unreachable = 0
    links: list[Link] = []
    for raw in b.built.links:  # 20,000 on the dragonfly example: no per-link objects beyond the Link
        seq = sequences.get((raw.layer, raw.group))
        if seq is None:
            seq = sequences[(raw.layer, raw.group)] = _Sequence(letter, raw.layer, raw.group)
        seq.n += 1
        a, z = _endpoint(raw.a, cage_of), _endpoint(raw.b, cage_of)
        lspeed = raw.speed_gbps or fabric_speed
        pa, pb = where.get(a.device), where.get(z.device)
        if pa is not None and pb is not None:
            run = round(measure(pa, pb), 3)
            taken = media.get((lspeed, run))
            if taken is None:
                taken = media[(lspeed, run)] = _media(chooser, lspeed, run, protocol)
            if taken is _UNREACHABLE:
                unreachable += 1
            medium_id, length, part = taken
        else:
            medium_id, length, run, part = "", 0.0, 0.0, None
        link = (seq.pattern % seq.n, fname, raw.layer, a, z, lspeed, medium_id, length, run, raw.rail, part)
        links.append(_new(Link, link))
    return links, unreachable
