"""One row per cable, in pull order: the table every cabling format (CSV, XLSX, NetBox) is written from.

Everything here is read from the plan (``Plan.links``, ``Plan.device_by_name``, ``Plan.rack_by_id``) and the
catalogue's media entries; nothing about the fabric is re-derived.

Label convention (docs/cabling.md): ``<site>-R<row>-<position>-U<unit>-<device>-<port>``, e.g.
``dc1-R01-05-U12-c-leaf-su1-r0-P09/2`` — site, rack (row and position in the row, as on the floor plan),
lowest rack unit of the device, device name, port as printed on the faceplate (``P<cage>/<sub-port>`` for
twin-port cages, ``P<n>`` for single ports, the RDMA port ``mlx5_3/1`` for adapters without cages); a host
port whose adapter the blueprint labels (``pools[].ports[].label``) prints that label (``HCA-5``).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Iterable
from itertools import islice
from typing import Any, NamedTuple

from generator.emit.lldp import interface_name
from generator.plan.model import Device, Endpoint, Link, Plan, Rack
from generator.plan.placement import default_rack_id
from generator.platform.ports import site_labels
from generator.resolve import ResolvedCluster

# Label printers (wrap-around cable labels) take one or two lines of about 20-24 characters; a label
# longer than two such lines is still printed but reported (labels_too_long) so the site can shorten names.
LABEL_SOFT_MAX = 40
UNRACKED = "unracked"

_PRINTABLE = re.compile(r"^[!-~]+$")  # printable ASCII without spaces: survives every label printer
_DIGITS = re.compile(r"(\d+)")


class CablingError(ValueError):
    """The plan cannot be turned into a cable plan (a duplicate label, an unprintable name)."""


# NamedTuples, not frozen dataclasses: a 100k-GPU plan has 315k rows and 630k ends, and a frozen
# dataclass costs several times more to build (object.__setattr__ per field).
class CableEnd(NamedTuple):
    device: str
    port: str  # plan port id: "17" (switch logical port) or "mlx5_0/1" (node RDMA port)
    label_port: str  # faceplate port: "P09/1", "P17", "mlx5_0/1"
    cage: int | None
    cage_port: int | None
    netdev: str | None  # the OS interface: a node's netdev, an Ethernet switch port's swp17 / swp17s0
    kind: str  # node | switch
    role: str
    model: str
    rack: str  # Rack.id, or "" when the device has no rack
    row: int | None
    position: int | None
    u: int | None
    location: str  # "<site>-R01-05-U12" (the part of the label before the device)
    label: str  # the full end label
    endpoint: Endpoint  # the plan's endpoint, for writers that name ports as a device's OS does

    @property
    def rack_or_unracked(self) -> str:
        return self.rack or UNRACKED


class CableRow(NamedTuple):
    seq: int  # pull order, 1-based
    id: str
    fabric: str
    layer: str
    speed_gbps: float
    a: CableEnd
    b: CableEnd
    medium: str  # media catalogue id
    medium_name: str
    medium_kind: str  # dac | acc | aoc | mmf | smf | utp
    netbox_type: str
    needs_transceivers: bool
    length_m: float
    run_m: float
    part_number: str
    rail: int | None


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders ``mlx5_10/1`` after ``mlx5_2/1`` and port ``10`` after ``9``."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in _DIGITS.split(text) if p)


def rack_code(rack: Rack) -> str:
    """The site's rack name where it declares them (``site.rack_names``: ``A09``), else ``R<row>-<position>``
    with at least two digits each (``R01-05``)."""
    if rack.id != default_rack_id(rack.row, rack.position):
        return rack.id
    return f"R{rack.row:02d}-{rack.position:02d}"


def end_location(site: str, rack: Rack | None, device: Device) -> str:
    parts = [site]
    if rack is not None:
        parts.append(rack_code(rack))
    if device.u is not None:
        parts.append(f"U{device.u:02d}")
    return "-".join(parts)


# What every end on one device shares, built once per device rather than once per port: the CableEnd
# fields from ``kind`` to ``location``, the label prefix "<location>-<device>", the device's part of the
# pull-order key, and whether the prefix is printable.
_Place = tuple[tuple[str, str, str, str, int | None, int | None, int | None, str], str, tuple, bool]


def _place(site: str, plan: Plan, name: str, link_id: str) -> _Place:
    device = plan.device_by_name.get(name)
    if device is None:
        raise CablingError(f"cable {link_id}: device `{name}` is not in the plan")
    rack = plan.rack_by_id.get(device.rack) if device.rack else None
    if device.rack and rack is None:
        raise CablingError(f"cable {link_id}: rack `{device.rack}` of `{device.name}` is not in the plan")
    location = end_location(site, rack, device)
    rack_id, row, position = (rack.id, rack.row, rack.position) if rack else ("", None, None)
    fields = (device.kind, device.role, device.model, rack_id, row, position, device.u, location)
    order = (
        0 if rack_id else 1,
        row or 0,
        position or 0,
        rack_id,
        device.u if device.u is not None else -1,
        device.name,
    )
    prefix = f"{location}-{device.name}"
    # A label "<prefix>-<port>" is printable exactly when "<prefix>-" and "-<port>" both are (the pattern is
    # a character class), so each half is checked once per device and once per distinct port.
    return fields, prefix, order, bool(_PRINTABLE.match(prefix + "-"))


def _medium_info(cluster: ResolvedCluster, link: Link) -> tuple[str, str, str, bool, str]:
    """(name, kind, NetBox cable type, needs transceivers, catalogue part number) of the link's medium."""
    medium = cluster.catalog.media.get(link.medium)
    if medium is None:
        return link.medium, "", "", False, ""
    return (
        medium.name,
        medium.kind,
        medium.netbox_type,
        bool(medium.needs_transceivers),
        medium.part_numbers.get(link.speed_gbps, ""),
    )


# A cable before it is numbered: the link, its A and B ends, and its medium's (name, kind, NetBox type,
# needs transceivers, part number).
_Made = tuple[Link, CableEnd, CableEnd, tuple[str, str, str, bool, str]]


def cable_rows(cluster: ResolvedCluster, plan: Plan, links: Iterable[Link] | None = None) -> list[CableRow]:
    """Every cable of the plan (or of ``links``), sorted by A-end rack, then unit, then device and port."""
    site = cluster.blueprint.site.name
    places: dict[str, _Place] = {}
    label_ports: dict[tuple, tuple[str, bool]] = {}  # Endpoint minus device → (label port, printable)
    mediums: dict[tuple[str, float], tuple[str, str, str, bool, str]] = {}
    made: list[_Made] = []
    labels: list[str] = []
    new = tuple.__new__
    ethernet = {name for name, f in cluster.fabrics.items() if f.kind in ("ethernet", "roce")}
    switch_ifs: dict[tuple, str] = {}  # (ports per cage, endpoint minus device) -> swp name
    named = site_labels(cluster.pools)  # declared adapter labels (HCA-5): usually none
    for link in plan.links if links is None else links:
        ends: list[CableEnd] = []
        on_ethernet = link.fabric in ethernet
        for ep in (link.a, link.b):  # one loop body for both ends: no call per end (630k at 100k GPUs)
            place = places.get(ep.device)
            if place is None:
                place = places[ep.device] = _place(site, plan, ep.device, link.id)
            port = label_ports.get(ep[1:])
            if port is None:
                label_port = ep.label_port
                port = label_ports[ep[1:]] = (label_port, bool(_PRINTABLE.match("-" + label_port)))
            fields, prefix, _, printable = place
            if named and fields[0] == "node":
                port = _site_port(plan, ep, named, port)
            label = f"{prefix}-{port[0]}"
            if not (printable and port[1]):
                raise CablingError(f"cable {link.id}: label {label!r} is not printable ASCII without spaces")
            labels.append(label)
            netdev = ep.netdev
            if on_ethernet and fields[0] == "switch":
                netdev = _switch_ifname(plan, ep, switch_ifs)
            ends.append(
                new(
                    CableEnd,
                    (ep.device, ep.port, port[0], ep.cage, ep.cage_port, netdev, *fields, label, ep),
                )
            )
        info = mediums.get((link.medium, link.speed_gbps))
        if info is None:
            info = mediums[(link.medium, link.speed_gbps)] = _medium_info(cluster, link)
        made.append((link, ends[0], ends[1], info))
    keys = _pull_keys(made, places)
    order = sorted(range(len(made)), key=keys.__getitem__)
    _break_ties(order, keys, made)
    rows = _numbered(made, order)
    if len(set(labels)) != len(labels) or len({row.id for row in rows}) != len(rows):
        _check_unique(rows)  # names the first clash in pull order
    return rows


def _site_port(
    plan: Plan, ep: Endpoint, named: dict[str, dict[str, str]], port: tuple[str, bool]
) -> tuple[str, bool]:
    """The site's label for a host port's adapter (``pools[].ports[].label``, e.g. ``HCA-5``) where the
    blueprint declares one: what the site writes on its cables, in place of the chassis or RDMA name."""
    own = named.get(plan.device_by_name[ep.device].pool or "", {}).get(ep.port)
    return port if own is None else (own, bool(_PRINTABLE.match("-" + own)))


def _switch_ifname(plan: Plan, ep: Endpoint, cache: dict[tuple, str]) -> str:
    """The name the switch OS gives an Ethernet switch port (``swp17``, ``swp17s0`` for a split cage), by the
    same rule as the expected-LLDP files, NetBox and the switch configuration (``lldp.interface_name``);
    a few hundred distinct names, looked up once per end."""
    device = plan.device_by_name[ep.device]
    key = (device.ports_per_cage, ep[1:])
    name = cache.get(key)
    if name is None:
        name = cache[key] = interface_name(device, ep)
    return name


def _numbered(made: list[_Made], order: list[int]) -> list[CableRow]:
    """The cables in pull ``order``, numbered from 1."""
    new = tuple.__new__
    rows: list[CableRow] = []
    for seq, i in enumerate(order, 1):
        link, a, b, (name, kind, netbox_type, transceivers, part) = made[i]
        rows.append(
            new(
                CableRow,
                (
                    seq,
                    link.id,
                    link.fabric,
                    link.layer,
                    link.speed_gbps,
                    a,
                    b,
                    link.medium,
                    name,
                    kind,
                    netbox_type,
                    transceivers,
                    link.length_m,
                    link.run_m,
                    link.part_number or part or "",
                    link.rail,
                ),
            )
        )
    return rows


def _pull_keys(made: list[tuple[Link, CableEnd, CableEnd, Any]], places: dict[str, _Place]) -> list[int]:
    """The pull-order key of each cable (A-end device order, then natural port order) as one integer.

    Devices and port names are few (15k and a few hundred at 100k GPUs) against 315k cables: ranking them
    once and sorting cables on an int is several times faster than comparing nested tuples. Equal ints mean
    equal keys, so ties stay ties for _break_ties.
    """
    device_rank = {name: i for i, name in enumerate(sorted(places, key=lambda n: places[n][2]))}
    ports = {a.port for _, a, _, _ in made}
    natural = {port: natural_key(port) for port in ports}
    distinct = sorted(set(natural.values()))
    rank_of = {key: i for i, key in enumerate(distinct)}
    port_rank = {port: rank_of[natural[port]] for port in ports}
    width = len(distinct) or 1
    return [device_rank[a.device] * width + port_rank[a.port] for _, a, _, _ in made]


def _break_ties(order: list[int], keys: list[int], made: list[tuple]) -> None:
    """Order cables whose A ends sort equal (two cables on one port) by cable id, in place.

    The id's natural key is the last part of the pull order; computing it only for ties saves building
    315k of them for a sort that never looks at them.
    """
    ordered = [keys[i] for i in order]
    if not any(map(operator.eq, ordered, islice(ordered, 1, None))):
        return
    start, n = 0, len(order)
    while start < n:
        stop = start + 1
        while stop < n and ordered[stop] == ordered[start]:
            stop += 1
        if stop - start > 1:
            order[start:stop] = sorted(order[start:stop], key=lambda i: natural_key(made[i][0].id))
        start = stop


def _check_unique(rows: list[CableRow]) -> None:
    """Two cables on one port, or two ports printing the same label, would send a technician astray."""
    seen: dict[str, str] = {}
    ids: set[str] = set()
    for row in rows:
        if row.id in ids:
            raise CablingError(f"cable id {row.id} appears twice in the plan")
        ids.add(row.id)
        for end in (row.a, row.b):
            other = seen.get(end.label)
            if other is not None:
                raise CablingError(f"label {end.label} is used by cables {other} and {row.id}")
            seen[end.label] = row.id


def rows_by_rack(rows: list[CableRow]) -> dict[str, list[CableRow]]:
    """Pulls grouped by the rack they start in (A end), in pull order; unracked pulls last."""
    out: dict[str, list[CableRow]] = {}
    for row in rows:
        out.setdefault(row.a.rack_or_unracked, []).append(row)
    return out


def labels_too_long(rows: list[CableRow]) -> list[str]:
    return sorted({e.label for r in rows for e in (r.a, r.b) if len(e.label) > LABEL_SOFT_MAX})


def fmt_num(x: float) -> str:
    """Numbers as a person writes them: 3 not 3.0, 0.5, 2.25."""
    return f"{x:g}" if x == x else ""
