"""Placement units and the driver that puts them into the site's racks.

A unit is what is placed together: a scalable unit, a dragonfly group or a leaf's nodes of the compute
fabric (filled from the front of the site), or a pool without compute ports (filled from the back), with
the switches that sit in its network rack. ``place`` places unit after unit with the rack primitives of
``placement.py`` (``RackAllocator``), keeping units inside rows when the site has room for that; the
placement rules themselves are described there.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from blueprints.models.site import Site
from generator.plan.errors import PlanError
from generator.plan.placement import (
    Placed,
    PlacedRack,
    PlacementError,
    RackAllocator,
    default_rack_id,
    pool_demand,
    racks_for,
    shares_one_rack,
    switch_demand,
)
from generator.resolve import ResolvedCluster, ResolvedPool
from generator.topology.base import DragonflyParams, FatTreeParams, Terminal

if TYPE_CHECKING:
    from generator.plan.build import Fabrics, _Built


def hosts_on(cluster: ResolvedCluster, fabric: str) -> list[str]:
    """The nodes with ports on ``fabric`` in blueprint order: terminals_for's hosts, without its ports."""
    return [host for pool in cluster.pools if pool.ports_for(fabric) for host in pool.hostnames]


@dataclass
class Unit:
    """Nodes placed together with the switches that sit in their network rack."""

    label: str
    hosts: list[str]
    forward: bool  # compute units fill the site from the front, the rest from the back
    switches: list[str]


def unit_nodes(p: FatTreeParams) -> int:
    """Compute nodes per placement unit of a fat-tree: a scalable unit (rail-optimised), else the nodes one
    leaf carries."""
    return p.su_nodes if p.rail_optimized else max(1, p.down // max(1, p.rails))


def placement_units(cluster: ResolvedCluster, compute: _Built | None) -> list[Unit]:
    """Placement units: scalable units / dragonfly groups / leaves of the compute fabric first (in
    order, so growth appends), then one unit per pool without compute ports."""
    compute_hosts = hosts_on(cluster, "compute")
    units: list[Unit] = []
    if compute is None:
        for pool in cluster.pools:
            if pool.ports_for("compute") or pool.role == "gpu":
                units.append(Unit(pool.name, list(pool.hostnames), True, []))
    else:
        built = compute.built
        p = built.params
        if isinstance(p, FatTreeParams):
            leaves = [s for s in built.switches if s.tier == "leaf"]
            size = unit_nodes(p)
            if p.rail_optimized:
                by_su: dict[int, list[str]] = defaultdict(list)
                for s in leaves:
                    by_su[s.su or 0].append(s.name)
                for i in range(0, len(compute_hosts), size):
                    su = i // size + 1
                    units.append(Unit(f"su{su}", compute_hosts[i : i + size], True, by_su.get(su, [])))
            else:
                for i, leaf in enumerate(leaves):
                    units.append(
                        Unit(f"u{i + 1}", compute_hosts[i * size : (i + 1) * size], True, [leaf.name])
                    )
                rest = compute_hosts[len(leaves) * size :]
                if rest:
                    units.append(Unit(f"u{len(leaves) + 1}", rest, True, []))
        elif isinstance(p, DragonflyParams):
            routers = [s for s in built.switches if s.tier == "router"]
            host_router: dict[str, str] = {}
            for link in built.links:
                if isinstance(link.a.port, Terminal):
                    host_router.setdefault(link.a.device, link.b.device)
            group_of = {s.name: s.su for s in routers}
            by_group: dict[int, list[str]] = defaultdict(list)
            for h in compute_hosts:
                by_group[group_of.get(host_router.get(h, ""), 0) or 0].append(h)
            routers_of: dict[int | None, list[str]] = defaultdict(list)
            for s in routers:
                routers_of[s.su].append(s.name)
            for g in range(1, p.groups + 1):
                units.append(Unit(f"g{g}", by_group.get(g, []), True, routers_of.get(g, [])))
        else:
            units.append(Unit("u1", compute_hosts, True, [s.name for s in built.switches]))
    taken = {h for u in units for h in u.hosts}
    for pool in cluster.pools:
        rest = [h for h in pool.hostnames if h not in taken]
        if rest:
            units.append(Unit(pool.name, rest, False, []))
    return units


class Placement(NamedTuple):
    placed: dict[str, Placed]
    su_of_host: dict[str, int]
    racks: list[PlacedRack]


def place(cluster: ResolvedCluster, fabrics: Fabrics) -> Placement:
    """Racks for every unit; units kept inside rows when the site has room for that, else packed."""
    _check_network_racks(cluster, fabrics.units)
    try:
        return _place_once(cluster, fabrics, keep_rows=True)
    except PlacementError:
        try:
            return _place_once(cluster, fabrics, keep_rows=False)
        except PlacementError as exc:
            raise PlanError(str(exc), ("site",)) from None


@dataclass
class _Placer:
    """Places units one after the other into the site's racks (one attempt: rows kept or not)."""

    cluster: ResolvedCluster
    fabrics: Fabrics
    keep_rows: bool  # start a front-filled unit in a new row when it would straddle two
    alloc: RackAllocator
    pool_of: dict[str, ResolvedPool]  # host -> its pool
    placed: dict[str, Placed] = field(default_factory=dict)
    shared: dict[int, PlacedRack] = field(default_factory=dict)  # site.network_racks entry -> its rack
    groups: dict[str, int] = field(init=False)  # unit label -> the site.network_racks entry listing it

    slots: dict[int, int] = field(init=False)  # site.network_racks entry -> the slot its `rack` names

    def __post_init__(self) -> None:
        site = self.cluster.blueprint.site
        declared = site.network_racks or []
        self.groups = {unit: i for i, group in enumerate(declared) for unit in group.units}
        self.slots = _network_rack_slots(site)
        self.alloc.reserved.update(self.slots.values())

    def switch_items(self, names: list[str]) -> list[tuple[str, int, float]]:
        """(name, rack units, kW) of each switch, as the rack allocator takes them."""
        sw = self.fabrics.switches
        return [(n, sw[n].model.rack_units, sw[n].model.power_w / 1000) for n in names]

    def racks_for(self, unit: Unit) -> int:
        """Racks a unit will take (nodes by space, power and nodes_per_rack; network racks by space)."""
        site = self.cluster.blueprint.site
        usable = site.rack.units - site.rack.reserved_units
        racks = 0
        for pool_name, n in Counter(self.pool_of[h].name for h in unit.hosts).items():
            pool = next(p for p in self.cluster.pools if p.name == pool_name)
            racks += racks_for(site, pool_demand(pool, n))
        switch_u = sum(height for _, height, _ in self.switch_items(unit.switches))
        group = self.groups.get(unit.label)
        if group is not None:  # a shared network rack: counted by the unit that opens it in the fill
            return racks + (0 if group in self.shared or group in self.slots or not switch_u else 1)
        shared = site.switch_placement == "top-of-rack"
        return racks + (0 if shared or not switch_u else -(-switch_u // usable))

    def place_unit(self, unit: Unit, from_end: bool) -> None:
        """The unit's nodes pool by pool, then its switches (top of rack, own racks, or middle of row)."""
        alloc = self.alloc
        if self.keep_rows and not from_end:
            alloc.start_unit_in_row(self.racks_for(unit))
        first = len(alloc.racks)
        by_pool: dict[str, list[str]] = defaultdict(list)
        for h in unit.hosts:
            by_pool[self.pool_of[h].name].append(h)
        for names in by_pool.values():
            pool = self.pool_of[names[0]]
            height, kw = pool.server.rack_units, pool.server.power_kw
            alloc.place_nodes(names, height, kw, pool.nodes_per_rack, self.placed, from_end=from_end)
        if unit.switches and unit.label in self.groups:
            self.place_in_shared_rack(unit, from_end)
        elif unit.switches:
            mode = self.cluster.blueprint.site.switch_placement
            share = alloc.racks[-1] if (mode == "top-of-rack" and len(alloc.racks) > first) else None
            alloc.place_switches(
                self.switch_items(unit.switches), self.placed, from_end=from_end, share=share
            )
            if mode == "middle-of-row" and not from_end:
                alloc.move_network_racks_to_middle(first, self.placed)

    def place_in_shared_rack(self, unit: Unit, from_end: bool) -> None:
        """The unit's switches stacked in the network rack of its ``site.network_racks`` entry, opened by the
        first of its units placed (right after that unit's compute racks); refused, located at the entry,
        when the leaves of its units do not fit one rack's units or power budget."""
        group = self.groups[unit.label]
        rack = self.shared.get(group)
        if rack is None:
            slot = self.slots.get(group)  # None: the fill's next slot, right after this unit's compute racks
            alloc = self.alloc
            rack = alloc.new_rack("network", from_end) if slot is None else alloc.open_rack(slot, "network")
            self.shared[group] = rack
        for name, height, kw in self.switch_items(unit.switches):
            if not rack.fits(height, kw):
                raise PlanError(self.shared_overflow(group, rack), ("site", "network_racks", group))
            self.placed[name] = Placed(rack.id, rack.put(name, height, kw))

    def shared_overflow(self, group: int, rack: PlacedRack) -> str:
        """Why the switches of a ``site.network_racks`` entry do not fit one rack: their units and draw."""
        labels = set((self.cluster.blueprint.site.network_racks or [])[group].units)
        items = [i for u in self.fabrics.units if u.label in labels for i in self.switch_items(u.switches)]
        units, kw = sum(i[1] for i in items), sum(i[2] for i in items)
        return (
            f"the {len(items)} switches of units {', '.join(sorted(labels))} take {units}U and {kw:g} kW, "
            f"more than one network rack holds ({rack.usable}U usable, {rack.budget_kw:g} kW budget)"
        )


def _check_network_racks(cluster: ResolvedCluster, units: list[Unit]) -> None:
    """Every unit a ``site.network_racks`` entry lists is one the plan places (su1.., u1.., g1.., pools)."""
    labels = [u.label for u in units]
    for i, group in enumerate(cluster.blueprint.site.network_racks or []):
        for j, label in enumerate(group.units):
            if label not in labels:
                shown = ", ".join(labels[:8]) + (f" ... ({len(labels)} units)" if len(labels) > 8 else "")
                raise PlanError(
                    f"`site.network_racks` names unit `{label}`, which the plan does not have "
                    f"(its units: {shown})",
                    ("site", "network_racks", i, "units", j),
                )


def _network_rack_slots(site: Site) -> dict[int, int]:
    """The row-major slot of each ``site.network_racks`` entry that names its rack (the site's rack names,
    else the default ids ``r01-09``; case ignored, as the names are told apart)."""
    named = [(i, g.rack) for i, g in enumerate(site.network_racks or []) if g.rack is not None]
    if not named:
        return {}
    per_row = site.racks_per_row
    if site.rack_names is not None:
        names = site.rack_names.all(site.rows, per_row)
    else:
        names = [default_rack_id(r, p) for r in range(1, site.rows + 1) for p in range(1, per_row + 1)]
    slot_of = {name.casefold(): n for n, name in enumerate(names)}
    slots: dict[int, int] = {}
    for i, rack in named:
        if rack.casefold() not in slot_of:
            raise PlanError(
                f"`site.network_racks` names rack `{rack}`, which the site does not have (its racks: "
                f"{names[0]} ... {names[-1]}, {len(names)} in all)",
                ("site", "network_racks", i, "rack"),
            )
        slots[i] = slot_of[rack.casefold()]
    return slots


def _place_once(cluster: ResolvedCluster, fabrics: Fabrics, *, keep_rows: bool) -> Placement:
    """Compute units from the front, then central switches and the other pools from the far end."""
    pool_of = {h: pool for pool in cluster.pools for h in pool.hostnames}
    site = cluster.blueprint.site
    demands = [*map(pool_demand, cluster.pools), *(switch_demand(e.model) for e in fabrics.switches.values())]
    alloc = RackAllocator(site, one_rack=shares_one_rack(site, demands))  # a small site: one rack
    placer = _Placer(cluster, fabrics, keep_rows, alloc, pool_of)
    units = fabrics.units
    su_of_host: dict[str, int] = {}
    for i, unit in enumerate(u for u in units if u.forward):
        for h in unit.hosts:
            su_of_host[h] = i + 1
        placer.place_unit(unit, from_end=False)
    in_units = {n for u in units for n in u.switches}
    central = [n for n in fabrics.switches if n not in in_units]
    if central:  # at the far end of the site: their racks do not move when units are added
        placer.alloc.place_switches(placer.switch_items(central), placer.placed, from_end=True)
    for unit in units:
        if not unit.forward:
            placer.place_unit(unit, from_end=True)
    placer.alloc.check_capacity()
    racks = sorted(placer.alloc.racks, key=lambda r: (r.row, r.position))
    return Placement(placer.placed, su_of_host, racks)
