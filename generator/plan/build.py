"""ResolvedCluster → Plan: run the topology builders and place racks; the cables are made in
``links.py``, the bill of materials counted in ``bom.py``."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import NamedTuple

from blueprints.catalog.schema import Switch
from blueprints.models import Dragonfly, FatTree, Hypercube, LeafSpine, Torus, parse_ratio
from blueprints.models.site import Site
from generator.findings import BlueprintError, Finding, Severity
from generator.gcpause import gc_paused
from generator.plan.attached import (
    AttachError,
    Attachment,
    attachment_devices,
    attachment_links,
    place_attachments,
    resolve_attachments,
)
from generator.plan.bom import bill_of_materials
from generator.plan.links import FABRIC_LETTER, fabric_links
from generator.plan.media import MediaChooser, Position, rack_xy, run_lengths
from generator.plan.model import Device, FabricMetrics, Link, Plan, Rack
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
from generator.plan.site_names import SiteLayoutError, apply_site_layout
from generator.resolve import ResolvedCluster, ResolvedFabric, ResolvedPool
from generator.topology.base import (
    BuiltFabric,
    DragonflyParams,
    FatTreeParams,
    LeafSpineParams,
    SwitchSpec,
    Terminal,
    TopologyError,
)
from generator.topology.cube import cube
from generator.topology.dragonfly import dragonfly
from generator.topology.fat_tree import fat_tree
from generator.topology.leaf_spine import leaf_spine
from generator.topology.metrics import compute_metrics


class PlanError(ValueError):
    """The blueprint cannot be turned into a physical plan; ``path`` says which part of it."""

    def __init__(self, message: str, path: tuple[str | int, ...] = ()) -> None:
        super().__init__(message)
        self.path = path


@dataclass
class _Built:
    fabric: ResolvedFabric
    built: BuiltFabric
    switch_models: dict[str, tuple[str, Switch]]  # switch name → (catalogue id, entry)


def terminals_for(cluster: ResolvedCluster, fabric: str) -> list[list[Terminal]]:
    """Node ports on ``fabric``, node by node in blueprint order, ports in rail order."""
    out: list[list[Terminal]] = []
    for pool in cluster.pools:
        ports = pool.ports_for(fabric)
        if not ports:
            continue
        for host in pool.hostnames:
            out.append(
                [
                    Terminal(
                        host, p.plan_port, p.port, p.index, p.cage, p.cage_port, p.os_netdev, p.faceplate
                    )
                    for p in ports
                ]
            )
    return out


def _hosts_on(cluster: ResolvedCluster, fabric: str) -> list[str]:
    """The nodes with ports on ``fabric`` in blueprint order: terminals_for's hosts, without its ports."""
    return [host for pool in cluster.pools if pool.ports_for(fabric) for host in pool.hostnames]


def _radix(switch: Switch, speed: float, path: tuple[str | int, ...], sid: str) -> int:
    k = switch.ports_at(speed)
    if k <= 0:
        raise PlanError(
            f"switch {sid} has no ports at {speed:g} Gb/s (native {switch.speed_gbps:g}, "
            f"splits {sorted(switch.splits)})",
            (*path, "topology", "switch"),
        )
    return k


def _cage_factor(switch: Switch, radix: int) -> int:
    """Logical ports per physical cage at the fabric speed (QM9700 at NDR200: 2 × 2 = 4)."""
    return max(1, switch.ports_per_cage * radix // switch.ports)


class _LeafSwitch(NamedTuple):
    """The fabric's (leaf) switch model and its port count at the fabric speed."""

    model: Switch
    radix: int


def _leaf_switch(rf: ResolvedFabric) -> _LeafSwitch:
    assert rf.switch is not None and rf.switch_id is not None  # resolve gives switched fabrics a model
    return _LeafSwitch(rf.switch, _radix(rf.switch, rf.speed_gbps, rf.source_path, rf.switch_id))


def _build_fat_tree(rf: ResolvedFabric, topo: FatTree, nodes: list[list[Terminal]]) -> BuiltFabric:
    sw = _leaf_switch(rf)
    return fat_tree(
        nodes,
        radix=sw.radix,
        tiers=topo.tiers,
        ratio=parse_ratio(topo.oversubscription),
        rail_optimized=topo.rail_optimized,
        su_size=topo.scalable_unit,
        growth_nodes=topo.growth_nodes,
        ports_per_cage=_cage_factor(sw.model, sw.radix),
        prefix=FABRIC_LETTER[rf.name].lower(),
    )


def _build_dragonfly(rf: ResolvedFabric, topo: Dragonfly, nodes: list[list[Terminal]]) -> BuiltFabric:
    return dragonfly(
        nodes,
        p=topo.p,
        a=topo.a,
        h=topo.h,
        groups=topo.groups,
        radix=_leaf_switch(rf).radix,
        arrangement=topo.global_arrangement,
        prefix=FABRIC_LETTER[rf.name].lower(),
    )


def _build_cube(rf: ResolvedFabric, topo: Torus | Hypercube, nodes: list[list[Terminal]]) -> BuiltFabric:
    dims = list(topo.dimensions) if isinstance(topo, Torus) else [2] * topo.dimension
    sw, path = rf.switch, rf.source_path
    cube_radix = (
        _radix(sw, rf.speed_gbps, path, rf.switch_id or "") if (sw and topo.attach == "switch") else None
    )
    if topo.attach == "switch" and cube_radix is None:
        raise PlanError(f"a switched {topo.kind} needs `switch`", (*path, "topology"))
    return cube(
        nodes,
        dims=dims,
        kind=topo.kind,
        attach=topo.attach,
        nodes_per_switch=topo.nodes_per_switch,
        radix=cube_radix,
        prefix=FABRIC_LETTER[rf.name].lower(),
    )


def _build_leaf_spine(
    rf: ResolvedFabric, topo: LeafSpine, nodes: list[list[Terminal]], units: list[_Unit], growth: float
) -> BuiltFabric:
    """Leaves per placement unit (``units`` in placement order), so a unit's leaves sit in its rack."""
    sw = _leaf_switch(rf)
    uplinks = sw.model.uplinks
    up_speed = uplinks.speed_gbps if uplinks else rf.speed_gbps
    by_host = {t[0].host: t for t in nodes}
    groups = [(u.label, [by_host[h] for h in u.hosts if h in by_host]) for u in units]
    return leaf_spine(
        groups,
        radix=sw.radix,
        ratio=parse_ratio(topo.oversubscription),
        growth=growth,
        uplink_ports=uplinks.count if uplinks else 0,
        uplink_speed_gbps=up_speed if uplinks else None,
        node_speed_gbps=rf.speed_gbps if uplinks else None,
        small_units=[u.label for u in units if not u.forward],
        spine_radix=(rf.spine_switch or sw.model).ports_at(up_speed) or None,
        ports_per_cage=_cage_factor(sw.model, sw.radix),
        prefix=FABRIC_LETTER[rf.name].lower(),
    )


def _run_builder(
    rf: ResolvedFabric, nodes: list[list[Terminal]], units: list[_Unit], growth: float
) -> BuiltFabric:
    """The topology builder the fabric's kind names; its argument errors located at ``topology``."""
    topo = rf.spec.topology
    try:
        if isinstance(topo, FatTree):
            return _build_fat_tree(rf, topo, nodes)
        if isinstance(topo, Dragonfly):
            return _build_dragonfly(rf, topo, nodes)
        if isinstance(topo, Torus | Hypercube):
            return _build_cube(rf, topo, nodes)
        if isinstance(topo, LeafSpine):
            return _build_leaf_spine(rf, topo, nodes, units, growth)
    except TopologyError as exc:
        raise PlanError(str(exc), (*rf.source_path, "topology")) from None
    kind = topo.kind if topo is not None else None  # pragma: no cover - the models admit no other kind
    raise PlanError(f"unknown topology {kind}", (*rf.source_path, "topology"))  # pragma: no cover


def _switch_models(
    rf: ResolvedFabric, built: BuiltFabric, spines: list[str]
) -> dict[str, tuple[str, Switch]]:
    """Switch name -> (catalogue id, entry): ``spines`` get the fabric's spine model, the rest its switch."""
    models: dict[str, tuple[str, Switch]] = {}
    if spines:
        assert rf.switch is not None and rf.switch_id is not None
        spine_model = (rf.spine_switch_id or rf.switch_id, rf.spine_switch or rf.switch)
        models.update(dict.fromkeys(spines, spine_model))
    for s in built.switches:
        if s.name not in models:
            assert rf.switch is not None and rf.switch_id is not None
            models[s.name] = (rf.switch_id, rf.switch)
    return models


def build_fabric(
    cluster: ResolvedCluster, rf: ResolvedFabric, units: list[_Unit] | None = None, growth: float = 1.0
) -> _Built | None:
    topo = rf.spec.topology
    if topo is None or cluster.is_cloud:
        return None
    nodes = terminals_for(cluster, rf.name)
    if not nodes:
        return None
    built = _run_builder(rf, nodes, units or [], growth)
    if isinstance(topo, FatTree | LeafSpine):
        assert rf.switch is not None
        built = _site_layout(built, topo, rf.switch, rf.name, rf.source_path)
    # by their site names: a spine renamed by the blueprint is still of the spine model
    spines = [s.name for s in built.switches if s.tier == "spine"] if isinstance(topo, LeafSpine) else []
    return _Built(rf, built, _switch_models(rf, built, spines))


def _site_layout(
    built: BuiltFabric, topo: FatTree | LeafSpine, leaf: Switch, fabric: str, path: tuple[str | int, ...]
) -> BuiltFabric:
    """Site names and leaf port layout (the blueprint's, else the switch model's catalogue layout)."""
    layout = topo.port_layout or leaf.port_layout
    try:
        return apply_site_layout(
            built,
            fabric=fabric,
            names=topo.names,
            layout_down=layout.down if layout else None,
            layout_up=layout.up if layout else None,
        )
    except SiteLayoutError as exc:
        where = ("names", *exc.field) if exc.field[0] != "port_layout" else exc.field
        raise PlanError(str(exc), (*path, "topology", *where)) from None


@dataclass
class _Unit:
    """Nodes placed together with the switches that sit in their network rack."""

    label: str
    hosts: list[str]
    forward: bool  # compute units fill the site from the front, the rest from the back
    switches: list[str]


def _units(cluster: ResolvedCluster, compute: _Built | None) -> list[_Unit]:
    """Placement units: scalable units / dragonfly groups / leaves of the compute fabric first (in
    order, so growth appends), then one unit per pool without compute ports."""
    compute_hosts = _hosts_on(cluster, "compute")
    units: list[_Unit] = []
    if compute is None:
        for pool in cluster.pools:
            if pool.ports_for("compute") or pool.role == "gpu":
                units.append(_Unit(pool.name, list(pool.hostnames), True, []))
    else:
        built = compute.built
        p = built.params
        if isinstance(p, FatTreeParams):
            leaves = [s for s in built.switches if s.tier == "leaf"]
            if p.rail_optimized:
                size = p.su_nodes
                by_su: dict[int, list[str]] = defaultdict(list)
                for s in leaves:
                    by_su[s.su or 0].append(s.name)
                for i in range(0, len(compute_hosts), size):
                    su = i // size + 1
                    units.append(_Unit(f"su{su}", compute_hosts[i : i + size], True, by_su.get(su, [])))
            else:
                size = max(1, p.down // max(1, p.rails))
                for i, leaf in enumerate(leaves):
                    units.append(
                        _Unit(f"u{i + 1}", compute_hosts[i * size : (i + 1) * size], True, [leaf.name])
                    )
                rest = compute_hosts[len(leaves) * size :]
                if rest:
                    units.append(_Unit(f"u{len(leaves) + 1}", rest, True, []))
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
                units.append(_Unit(f"g{g}", by_group.get(g, []), True, routers_of.get(g, [])))
        else:
            units.append(_Unit("u1", compute_hosts, True, [s.name for s in built.switches]))
    taken = {h for u in units for h in u.hosts}
    for pool in cluster.pools:
        rest = [h for h in pool.hostnames if h not in taken]
        if rest:
            units.append(_Unit(pool.name, rest, False, []))
    return units


def _check_unique_names(cluster: ResolvedCluster, builts: dict[str, _Built]) -> None:
    """Site names may collide with a host or another fabric's switch: one device, one name."""
    owner: dict[str, str] = {h: f"pool {p.name}" for p in cluster.pools for h in p.hostnames}
    for fname, b in builts.items():
        for s in b.built.switches:
            if s.name in owner:
                raise PlanError(
                    f"switch name `{s.name}` of the {fname} fabric is also used by {owner[s.name]}",
                    (*b.fabric.source_path, "topology", "names"),
                )
            owner[s.name] = f"the {fname} fabric"


def build_plan(cluster: ResolvedCluster) -> Plan:
    """The physical plan. Raises PlanError (with a blueprint path) when the design cannot be built."""
    from generator.plan.size import too_large

    excess = too_large(cluster)  # refuse before building: a few lines of YAML can ask for 2^20 switches
    if excess:
        raise PlanError("; ".join(e.message for e in excess) + " (see docs/architecture.md)", excess[0].path)
    with gc_paused():
        return _build_plan(cluster)


class _SwitchEntry(NamedTuple):
    spec: SwitchSpec
    model_id: str
    model: Switch
    fabric: str


class _Fabrics(NamedTuple):
    builts: dict[str, _Built]
    units: list[_Unit]
    switches: dict[str, _SwitchEntry]  # switch name → its spec, catalogue entry and fabric


class _Placement(NamedTuple):
    placed: dict[str, Placed]
    su_of_host: dict[str, int]
    racks: list[PlacedRack]


def _build_fabrics(cluster: ResolvedCluster) -> _Fabrics:
    """The compute fabric first (its units place everything), then storage/management per unit."""
    builts: dict[str, _Built] = {}
    if "compute" in cluster.fabrics:
        b = build_fabric(cluster, cluster.fabrics["compute"])
        if b is not None:
            builts["compute"] = b
    units = _units(cluster, builts.get("compute"))
    growth = 1.0
    topo = cluster.fabrics["compute"].spec.topology if "compute" in cluster.fabrics else None
    if isinstance(topo, FatTree) and topo.growth_nodes and builts.get("compute"):
        growth = max(1.0, topo.growth_nodes / max(1, len(_hosts_on(cluster, "compute"))))
    # leaf-spine fabrics: units without compute ports first, so adding compute units only appends
    ls_order = [u for u in units if not u.forward] + [u for u in units if u.forward]
    unit_by_label = {u.label: u for u in units}
    for name, rf in cluster.fabrics.items():
        if name == "compute":
            continue
        b = build_fabric(cluster, rf, ls_order, growth)
        if b is not None:
            builts[name] = b
            leaf_unit = b.built.params.leaf_unit if isinstance(b.built.params, LeafSpineParams) else {}
            for leaf, label in leaf_unit.items():
                unit_by_label[label].switches.append(leaf)
    _check_unique_names(cluster, builts)
    switches = {
        s.name: _SwitchEntry(s, *b.switch_models[s.name], fname)
        for fname, b in builts.items()
        for s in b.built.switches
    }
    return _Fabrics(builts, units, switches)


def _place(cluster: ResolvedCluster, fabrics: _Fabrics) -> _Placement:
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
    fabrics: _Fabrics
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

    def racks_for(self, unit: _Unit) -> int:
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

    def place_unit(self, unit: _Unit, from_end: bool) -> None:
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

    def place_in_shared_rack(self, unit: _Unit, from_end: bool) -> None:
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


def _check_network_racks(cluster: ResolvedCluster, units: list[_Unit]) -> None:
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


def _place_once(cluster: ResolvedCluster, fabrics: _Fabrics, *, keep_rows: bool) -> _Placement:
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
    return _Placement(placer.placed, su_of_host, racks)


def _devices(cluster: ResolvedCluster, fabrics: _Fabrics, where: _Placement) -> list[Device]:
    devices: list[Device] = []
    for pool in cluster.pools:
        for i, h in enumerate(pool.hostnames, start=1):
            pl = where.placed.get(h)
            devices.append(
                Device(
                    name=h,
                    kind="node",
                    role=pool.role,
                    model=pool.server_id,
                    fabric=None,
                    pool=pool.name,
                    su=where.su_of_host.get(h),
                    index=i,
                    rack=pl.rack if pl else None,
                    u=pl.u if pl else None,
                    height_u=pool.server.rack_units,
                    power_kw=pool.server.power_kw,
                    ports=len(pool.ports),
                )
            )
    for name, (s, mid, entry, fname) in fabrics.switches.items():
        pl = where.placed.get(name)
        devices.append(
            Device(
                name=name,
                kind="switch",
                role=s.tier,
                model=mid,
                fabric=fname,
                su=s.su,
                pod=s.pod,
                rail=s.rail,
                index=s.index,
                rack=pl.rack if pl else None,
                u=pl.u if pl else None,
                height_u=entry.rack_units,
                power_kw=entry.power_w / 1000,
                ports=s.ports + s.uplink_ports,
                ports_per_cage=s.ports_per_cage,
            )
        )
    return devices


def _racks(site: Site, raw: list[PlacedRack]) -> list[Rack]:
    out = []
    for r in raw:
        x, y = rack_xy(site, r.row, r.position)
        out.append(
            Rack(
                r.id,
                r.row,
                r.position,
                x,
                y,
                r.units,
                r.budget_kw,
                r.purpose,
                tuple(n for n, _, _ in r.devices),
                round(r.power, 3),
                r.used,
            )
        )
    return out


def _build_plan(cluster: ResolvedCluster) -> Plan:
    site = cluster.blueprint.site
    fabrics = _build_fabrics(cluster)
    where = _place(cluster, fabrics) if not cluster.is_cloud else _Placement({}, {}, [])
    devices = _devices(cluster, fabrics, where)
    attached = _attach(cluster, fabrics, devices, where)
    devices.extend(attachment_devices(attached, where.placed))
    device_by = {d.name: d for d in devices}
    racks = _racks(site, where.racks)
    pos_of_rack = {r.id: (r.x_m, r.y_m) for r in racks}
    position = {name: Position(*pos_of_rack[pl.rack], pl.u, pl.rack) for name, pl in where.placed.items()}
    cage_of = {name: (e.spec.ports_per_cage, e.spec.ports) for name, e in fabrics.switches.items()}
    chooser = MediaChooser(cluster.catalog)
    links: list[Link] = []
    metrics: dict[str, FabricMetrics] = {}
    for fname, b in fabrics.builts.items():
        cables, unreachable = fabric_links(site, fname, b, position, cage_of, chooser)
        links.extend(cables)
        m = compute_metrics(fname, b.built, b.fabric.speed_gbps)
        if unreachable:
            note = f"{unreachable} cables exceed every catalogue medium's reach"
            m = FabricMetrics(**{**m.__dict__, "notes": (*m.notes, note)})
        metrics[fname] = m
    links.extend(attachment_links(cluster, attached, position, cage_of, chooser, run_lengths(site)))
    bill = bill_of_materials(cluster, devices, links, racks, chooser, device_by, fabrics.switches)
    return Plan(
        cluster=cluster,
        devices=tuple(devices),
        links=tuple(links),
        racks=tuple(racks),
        metrics=metrics,
        bom=tuple(bill.lines),
        transceivers=bill.transceivers,
        transceivers_by_fabric=bill.by_fabric,
    )


def _attach(
    cluster: ResolvedCluster, fabrics: _Fabrics, devices: list[Device], where: _Placement
) -> list[Attachment]:
    """The blueprint's appliances on free switch ports, placed in racks (generator/plan/attached.py)."""
    if not cluster.blueprint.appliances:
        return []
    switches = {d.name: d for d in devices if d.kind == "switch"}
    try:
        atts = resolve_attachments(cluster, {n: b.built for n, b in fabrics.builts.items()}, switches)
        place_attachments(atts, where.racks, where.placed)
    except AttachError as exc:
        raise PlanError(str(exc), exc.path) from None
    return atts


def plan_or_raise(cluster: ResolvedCluster, locate=None) -> Plan:  # type: ignore[no-untyped-def]
    """build_plan for commands: a PlanError becomes a located BlueprintError (exit 2)."""
    try:
        return build_plan(cluster)
    except PlanError as exc:
        f = Finding(
            "PLN001",
            Severity.ERROR,
            f"cannot build the physical plan: {exc}",
            exc.path,
            "fix the topology parameters or the site size (see `blueprint validate`)",
        )
        raise BlueprintError([locate(f) if locate else f]) from None
