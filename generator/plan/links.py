"""A fabric's cables: stable ids (fabric letter, layer code, number), both ends with their cages, run
lengths between the racks, and the medium and part each run takes."""

from __future__ import annotations

from operator import itemgetter
from typing import TYPE_CHECKING

from blueprints.models.site import Site
from generator.plan.media import MediaChooser, Position, run_lengths
from generator.plan.model import Endpoint, Link
from generator.topology.base import Terminal

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


def _switch_end(device: str, port: int, cage_of: dict[str, tuple[int, int]]) -> Endpoint:
    ppc, nports = cage_of[device]
    if ppc > 1 and port <= nports:
        return _new(
            Endpoint, (device, str(port), port, (port - 1) // ppc + 1, (port - 1) % ppc + 1, None, None)
        )
    return _new(Endpoint, (device, str(port), port, None, None, None, None))


_new = tuple.__new__
# a node terminal's fields as an Endpoint's (all but the rail), picked in C: one per node cable end
_TERMINAL_END = itemgetter(0, 1, 2, 4, 5, 6, 7)


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
    # 20,000 cables on the dragonfly example, 630,000 ends at 100k GPUs: the ends are made with tuple.__new__
    # (NamedTuple's own __new__ costs a Python call each), the id sequence looked up when the layer changes
    seq, layer_group = None, None
    for raw in b.built.links:
        if (raw.layer, raw.group) != layer_group:
            layer_group = (raw.layer, raw.group)
            seq = sequences.get(layer_group)
            if seq is None:
                seq = sequences[layer_group] = _Sequence(letter, raw.layer, raw.group)
        assert seq is not None
        seq.n += 1
        ra, rb = raw.a, raw.b
        pa_, pb_ = ra.port, rb.port
        a = (
            _new(Endpoint, _TERMINAL_END(pa_))
            if isinstance(pa_, Terminal)
            else _switch_end(ra.device, pa_, cage_of)
        )
        z = (
            _new(Endpoint, _TERMINAL_END(pb_))
            if isinstance(pb_, Terminal)
            else _switch_end(rb.device, pb_, cage_of)
        )
        lspeed = raw.speed_gbps or fabric_speed
        pa, pb = where.get(ra.device), where.get(rb.device)
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
