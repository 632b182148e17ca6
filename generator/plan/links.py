"""A fabric's cables: stable ids (fabric letter, layer code, number), both ends with their cages, run
lengths between the racks, and the medium and part each run takes."""

from __future__ import annotations

from collections import Counter
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
        return _new(
            Endpoint,
            (port.host, port.port, port.port_number, port.cage, port.cage_port, port.netdev, port.faceplate),
        )
    ppc, nports = cage_of[ref.device]
    if ppc > 1 and port <= nports:
        return _new(
            Endpoint, (ref.device, str(port), port, (port - 1) // ppc + 1, (port - 1) % ppc + 1, None, None)
        )
    return _new(Endpoint, (ref.device, str(port), port, None, None, None, None))


_new = tuple.__new__


def fabric_links(
    site: Site,
    fname: str,
    b: _Built,
    where: dict[str, Position],
    cage_of: dict[str, tuple[int, int]],
    chooser: MediaChooser,
) -> tuple[list[Link], int]:
    """One fabric's cables with stable ids, run lengths and media; and how many no medium reaches."""
    letter = FABRIC_LETTER[fname]
    counters: Counter[str] = Counter()
    codes: dict[tuple[str, str | None], str] = {}
    measure, protocol = run_lengths(site), PROTOCOL[b.fabric.kind]
    unreachable = 0
    links: list[Link] = []
    for raw in b.built.links:
        code = codes.get((raw.layer, raw.group))
        if code is None:
            code = LAYER_CODE.get(raw.layer, raw.layer[:2].upper())
            code = codes[(raw.layer, raw.group)] = code if raw.group is None else f"{code}-{raw.group}"
        counters[code] += 1
        a, z = _endpoint(raw.a, cage_of), _endpoint(raw.b, cage_of)
        lspeed = raw.speed_gbps or b.fabric.speed_gbps
        medium_id, length, run, part = "", 0.0, 0.0, None
        pa, pb = where.get(a.device), where.get(z.device)
        if pa is not None and pb is not None:
            run = round(measure(pa, pb), 3)
            choice = chooser.choose(lspeed, run, protocol)
            if choice is None:
                unreachable += 1
            else:
                medium_id, medium, length = choice
                part = medium.part_numbers.get(lspeed)
        link_id = f"{letter}-{code}-{counters[code]:0{4 if raw.group else 6}d}"
        links.append(
            _new(Link, (link_id, fname, raw.layer, a, z, lspeed, medium_id, length, run, raw.rail, part))
        )
    return links, unreachable
