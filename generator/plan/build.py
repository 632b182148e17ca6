"""ResolvedCluster → Plan: run the topology builders, place racks, size cables, count the BOM."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from blueprints.catalog.schema import Switch
from blueprints.models import Dragonfly, FatTree, Hypercube, LeafSpine, Torus, parse_ratio
from generator.findings import BlueprintError, Finding, Severity
from generator.gcpause import gc_paused
from generator.plan.media import MediaChooser, Position, rack_xy, run_length
from generator.plan.model import BomLine, Device, Endpoint, FabricMetrics, Link, Plan, Rack
from generator.plan.placement import Placed, PlacementError, RackAllocator
from generator.resolve import ResolvedCluster, ResolvedFabric, ResolvedPool
from generator.topology.base import BuiltFabric, SwitchSpec, Terminal, TopologyError
from generator.topology.cube import cube
from generator.topology.dragonfly import dragonfly
from generator.topology.fat_tree import fat_tree
from generator.topology.leaf_spine import leaf_spine
from generator.topology.metrics import compute_metrics

FABRIC_LETTER = {"compute": "C", "storage": "S", "management": "M"}
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
                    Terminal(host, p.plan_port, p.port, p.index, p.cage, p.cage_port, p.os_netdev, p.faceplate)
                    for p in ports
                ]
            )
    return out


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


def build_fabric(
    cluster: ResolvedCluster, rf: ResolvedFabric, units: list[_Unit] | None = None, growth: float = 1.0
) -> _Built | None:
    topo = rf.spec.topology
    if topo is None or cluster.is_cloud:
        return None
    nodes = terminals_for(cluster, rf.name)
    if not nodes:
        return None
    letter = FABRIC_LETTER[rf.name].lower()
    path = rf.source_path
    speed = rf.speed_gbps
    sw = rf.switch
    models: dict[str, tuple[str, Switch]] = {}
    try:
        if isinstance(topo, FatTree):
            assert sw is not None and rf.switch_id is not None
            k = _radix(sw, speed, path, rf.switch_id)
            built = fat_tree(
                nodes,
                radix=k,
                tiers=topo.tiers,
                ratio=parse_ratio(topo.oversubscription),
                rail_optimized=topo.rail_optimized,
                su_size=topo.scalable_unit,
                growth_nodes=topo.growth_nodes,
                ports_per_cage=_cage_factor(sw, k),
                prefix=letter,
            )
        elif isinstance(topo, Dragonfly):
            assert sw is not None and rf.switch_id is not None
            k = _radix(sw, speed, path, rf.switch_id)
            built = dragonfly(
                nodes,
                p=topo.p,
                a=topo.a,
                h=topo.h,
                groups=topo.groups,
                radix=k,
                arrangement=topo.global_arrangement,
                prefix=letter,
            )
        elif isinstance(topo, Torus | Hypercube):
            dims = list(topo.dimensions) if isinstance(topo, Torus) else [2] * topo.dimension
            k = _radix(sw, speed, path, rf.switch_id or "") if (sw and topo.attach == "switch") else None
            if topo.attach == "switch" and k is None:
                raise PlanError(f"a switched {topo.kind} needs `switch`", (*path, "topology"))
            built = cube(
                nodes,
                dims=dims,
                kind=topo.kind,
                attach=topo.attach,
                nodes_per_switch=topo.nodes_per_switch,
                radix=k,
                prefix=letter,
            )
        elif isinstance(topo, LeafSpine):
            assert sw is not None and rf.switch_id is not None
            k = _radix(sw, speed, path, rf.switch_id)
            spine = rf.spine_switch or sw
            up_speed = sw.uplinks.speed_gbps if sw.uplinks else speed
            by_host = {t[0].host: t for t in nodes}
            groups = [(u.label, [by_host[h] for h in u.hosts if h in by_host]) for u in (units or [])]
            built = leaf_spine(
                groups,
                radix=k,
                ratio=parse_ratio(topo.oversubscription),
                growth=growth,
                uplink_ports=sw.uplinks.count if sw.uplinks else 0,
                uplink_speed_gbps=up_speed if sw.uplinks else None,
                spine_radix=spine.ports_at(up_speed) or None,
                ports_per_cage=_cage_factor(sw, k),
                prefix=letter,
            )
            for s in built.switches:
                if s.tier == "spine":
                    models[s.name] = (rf.spine_switch_id or rf.switch_id, spine)
        else:  # pragma: no cover - the models admit no other kind
            raise PlanError(f"unknown topology {topo.kind}", (*path, "topology"))
    except TopologyError as exc:
        raise PlanError(str(exc), (*path, "topology")) from None
    for s in built.switches:
        if s.name not in models:
            assert sw is not None and rf.switch_id is not None
            models[s.name] = (rf.switch_id, sw)
    return _Built(rf, built, models)


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
    compute_hosts = [t[0].host for t in terminals_for(cluster, "compute") if t]
    units: list[_Unit] = []
    if compute is None:
        for pool in cluster.pools:
            if pool.ports_for("compute") or pool.role == "gpu":
                units.append(_Unit(pool.name, list(pool.hostnames), True, []))
    else:
        built = compute.built
        p = built.params
        if built.kind == "fat-tree":
            leaves = [s for s in built.switches if s.tier == "leaf"]
            if p.get("rail_optimized"):
                size = int(p["su_nodes"])
                by_su: dict[int, list[str]] = defaultdict(list)
                for s in leaves:
                    by_su[s.su or 0].append(s.name)
                for i in range(0, len(compute_hosts), size):
                    su = i // size + 1
                    units.append(_Unit(f"su{su}", compute_hosts[i : i + size], True, by_su.get(su, [])))
            else:
                size = max(1, int(p["down"]) // max(1, int(p["rails"])))
                for i, leaf in enumerate(leaves):
                    units.append(
                        _Unit(f"u{i + 1}", compute_hosts[i * size : (i + 1) * size], True, [leaf.name])
                    )
                rest = compute_hosts[len(leaves) * size :]
                if rest:
                    units.append(_Unit(f"u{len(leaves) + 1}", rest, True, []))
        elif built.kind == "dragonfly":
            routers = [s for s in built.switches if s.tier == "router"]
            host_router: dict[str, str] = {}
            for link in built.links:
                if isinstance(link.a.port, Terminal):
                    host_router.setdefault(link.a.device, link.b.device)
            group_of = {s.name: s.su for s in routers}
            by_group: dict[int, list[str]] = defaultdict(list)
            for h in compute_hosts:
                by_group[group_of.get(host_router.get(h, ""), 0) or 0].append(h)
            for g in range(1, int(p["groups"]) + 1):
                units.append(
                    _Unit(f"g{g}", by_group.get(g, []), True, [s.name for s in routers if s.su == g])
                )
        else:
            units.append(_Unit("u1", compute_hosts, True, [s.name for s in built.switches]))
    taken = {h for u in units for h in u.hosts}
    for pool in cluster.pools:
        rest = [h for h in pool.hostnames if h not in taken]
        if rest:
            units.append(_Unit(pool.name, rest, False, []))
    return units


def build_plan(cluster: ResolvedCluster) -> Plan:
    """The physical plan. Raises PlanError (with a blueprint path) when the design cannot be built."""
    with gc_paused():
        return _build_plan(cluster)


def _build_plan(cluster: ResolvedCluster) -> Plan:
    site = cluster.blueprint.site
    builts: dict[str, _Built] = {}
    if "compute" in cluster.fabrics:
        b = build_fabric(cluster, cluster.fabrics["compute"])
        if b is not None:
            builts["compute"] = b
    units = _units(cluster, builts.get("compute"))
    growth = 1.0
    topo = cluster.fabrics["compute"].spec.topology if "compute" in cluster.fabrics else None
    if isinstance(topo, FatTree) and topo.growth_nodes and builts.get("compute"):
        growth = max(1.0, topo.growth_nodes / max(1, len(terminals_for(cluster, "compute"))))
    # leaf-spine fabrics: units without compute ports first, so adding compute units only appends
    ls_order = [u for u in units if not u.forward] + [u for u in units if u.forward]
    unit_by_label = {u.label: u for u in units}
    for name, rf in cluster.fabrics.items():
        if name == "compute":
            continue
        b = build_fabric(cluster, rf, ls_order, growth)
        if b is not None:
            builts[name] = b
            for leaf, label in dict(b.built.params.get("leaf_unit", {})).items():  # type: ignore[call-overload]
                unit_by_label[label].switches.append(leaf)
    pool_of: dict[str, ResolvedPool] = {h: pool for pool in cluster.pools for h in pool.hostnames}
    placed: dict[str, Placed] = {}
    su_of_host: dict[str, int] = {}
    spec_of: dict[str, tuple[SwitchSpec, str, Switch, str]] = {}  # name → (spec, model id, entry, fabric)
    for fname, b in builts.items():
        for s in b.built.switches:
            mid, entry = b.switch_models[s.name]
            spec_of[s.name] = (s, mid, entry, fname)

    def switch_items(names: list[str]) -> list[tuple[str, int, float]]:
        return [(n, spec_of[n][2].rack_units, spec_of[n][2].power_w / 1000) for n in names]

    def place_unit(unit: _Unit, alloc: RackAllocator, from_end: bool) -> None:
        by_pool: dict[str, list[str]] = defaultdict(list)
        for h in unit.hosts:
            by_pool[pool_of[h].name].append(h)
        for names in by_pool.values():
            pool = pool_of[names[0]]
            alloc.place_nodes(
                names,
                pool.server.rack_units,
                pool.server.power_kw,
                pool.nodes_per_rack,
                placed,
                from_end=from_end,
            )
        if unit.switches:
            alloc.place_switches(switch_items(unit.switches), placed, from_end=from_end)

    if not cluster.is_cloud:
        alloc = RackAllocator(site)
        try:
            for i, unit in enumerate(u for u in units if u.forward):
                for h in unit.hosts:
                    su_of_host[h] = i + 1
                place_unit(unit, alloc, from_end=False)
            in_units = {n for u in units for n in u.switches}
            central = [n for n in spec_of if n not in in_units]
            if central:  # at the far end of the site: their racks do not move when units are added
                alloc.place_switches(switch_items(central), placed, from_end=True)
            for unit in units:
                if not unit.forward:
                    place_unit(unit, alloc, from_end=True)
        except PlacementError as exc:
            raise PlanError(str(exc), ("site",)) from None
        racks_raw = sorted(alloc.racks, key=lambda r: (r.row, r.position))
    else:
        racks_raw = []

    # ---- devices ---------------------------------------------------------------------------------
    devices: list[Device] = []
    for pool in cluster.pools:
        for i, h in enumerate(pool.hostnames, start=1):
            pl = placed.get(h)
            devices.append(
                Device(
                    name=h,
                    kind="node",
                    role=pool.role,
                    model=pool.server_id,
                    fabric=None,
                    pool=pool.name,
                    su=su_of_host.get(h),
                    index=i,
                    rack=pl.rack if pl else None,
                    u=pl.u if pl else None,
                    height_u=pool.server.rack_units,
                    power_kw=pool.server.power_kw,
                    ports=len(pool.ports),
                )
            )
    for name, (s, mid, entry, fname) in spec_of.items():
        pl = placed.get(name)
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
    device_by = {d.name: d for d in devices}

    # ---- racks -----------------------------------------------------------------------------------
    racks: list[Rack] = []
    pos_of_rack: dict[str, tuple[float, float]] = {}
    for r in racks_raw:
        x, y = rack_xy(site, r.row, r.position)
        pos_of_rack[r.id] = (x, y)
        racks.append(
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

    # ---- links, lengths, media --------------------------------------------------------------------
    chooser = MediaChooser(cluster.catalog)
    links: list[Link] = []
    notes: dict[str, list[str]] = defaultdict(list)
    where: dict[str, Position] = {}
    for name, pl in placed.items():
        x, y = pos_of_rack[pl.rack]
        where[name] = Position(x, y, pl.u, pl.rack)
    cage_of = {name: (spec.ports_per_cage, spec.ports) for name, (spec, _, _, _) in spec_of.items()}
    for fname, b in builts.items():
        letter = FABRIC_LETTER[fname]
        speed = b.fabric.speed_gbps
        counters: Counter[str] = Counter()
        unreachable = 0
        for raw in b.built.links:
            code = LAYER_CODE.get(raw.layer, raw.layer[:2].upper())
            if raw.group is not None:
                code = f"{code}-{raw.group}"
            counters[code] += 1
            ends = []
            for ref in (raw.a, raw.b):
                port = ref.port
                if isinstance(port, Terminal):
                    ends.append(
                        Endpoint(
                            port.host,
                            port.port,
                            port.port_number,
                            port.cage,
                            port.cage_port,
                            port.netdev,
                            port.faceplate,
                        )
                    )
                else:
                    ppc, nports = cage_of[ref.device]
                    if ppc > 1 and port <= nports:
                        ends.append(
                            Endpoint(ref.device, str(port), port, (port - 1) // ppc + 1, (port - 1) % ppc + 1)
                        )
                    else:
                        ends.append(Endpoint(ref.device, str(port), port))
            lspeed = raw.speed_gbps or speed
            medium_id, length, run, part = "", 0.0, 0.0, None
            pa, pb = where.get(ends[0].device), where.get(ends[1].device)
            if pa is not None and pb is not None:
                run = round(run_length(site, pa, pb), 3)
                choice = chooser.choose(lspeed, run)
                if choice is None:
                    unreachable += 1
                else:
                    medium_id, medium, length = choice
                    part = medium.part_numbers.get(lspeed)
            links.append(
                Link(
                    f"{letter}-{code}-{counters[code]:0{4 if raw.group else 6}d}",
                    fname,
                    raw.layer,
                    ends[0],
                    ends[1],
                    lspeed,
                    medium_id,
                    length,
                    run,
                    raw.rail,
                    part,
                )
            )
        if unreachable:
            notes[fname].append(f"{unreachable} cables exceed every catalogue medium's reach")

    metrics: dict[str, FabricMetrics] = {}
    for fname, b in builts.items():
        m = compute_metrics(fname, b.built, b.fabric.speed_gbps)
        if notes.get(fname):
            m = FabricMetrics(**{**m.__dict__, "notes": (*m.notes, *notes[fname])})
        metrics[fname] = m

    transceivers, bom = _bill_of_materials(cluster, devices, links, racks, chooser, device_by, spec_of)
    return Plan(
        cluster=cluster,
        devices=tuple(devices),
        links=tuple(links),
        racks=tuple(racks),
        metrics=metrics,
        bom=tuple(bom),
        transceivers=transceivers,
    )


def _bill_of_materials(
    cluster: ResolvedCluster,
    devices: list[Device],
    links: list[Link],
    racks: list[Rack],
    chooser: MediaChooser,
    device_by: dict[str, Device],
    spec_of: dict[str, tuple[SwitchSpec, str, Switch, str]],
) -> tuple[dict[str, int], list[BomLine]]:
    cat = cluster.catalog
    nic_ff: dict[tuple[str, str], str] = {}
    for pool in cluster.pools:
        for p in pool.ports:
            entry = cat.nics.get(p.model)
            nic_ff[(pool.name, p.plan_port)] = entry.form_factor if entry else "unknown"
    modules: dict[tuple[str, object], str] = {}  # (device, cage-or-port key) → transceiver id
    cable_keys: dict[tuple[str, float, float], set[object]] = defaultdict(set)
    for link in links:
        if not link.medium:
            continue
        medium = cat.media[link.medium]
        twin_twin = (
            link.a.cage is not None
            and link.b.cage is not None
            and device_by[link.a.device].kind == "switch"
            and device_by[link.b.device].kind == "switch"
        )
        if medium.kind in ("dac", "acc") and twin_twin:
            cable_keys[(link.medium, link.length_m, link.speed_gbps)].add(
                (link.a.device, link.a.cage, link.b.device, link.b.cage)
            )
        else:
            cable_keys[(link.medium, link.length_m, link.speed_gbps)].add(link.id)
        if not medium.needs_transceivers:
            continue
        for ep in (link.a, link.b):
            dev = device_by[ep.device]
            if dev.kind == "switch":
                entry = spec_of[dev.name][2]
                key: object = ("cage", ep.cage) if ep.cage is not None else ("port", ep.port)
                ff = entry.form_factor
                speed = entry.speed_gbps if ep.cage is not None else link.speed_gbps
                if ep.cage is None and entry.uplinks and ep.port_number > entry.ports:
                    ff = "qsfp28" if entry.uplinks.speed_gbps == 100 else ff
            else:
                if ep.cage is not None:
                    key, ff, speed = ("cage", ep.cage), "osfp-twin", link.speed_gbps
                else:
                    key, ff, speed = (
                        ("port", ep.port),
                        nic_ff.get((dev.pool or "", ep.port), "unknown"),
                        link.speed_gbps,
                    )
            if (ep.device, key) not in modules:
                modules[(ep.device, key)] = chooser.transceiver(medium.kind, speed, ff, link.run_m)
    transceivers = dict(sorted(Counter(modules.values()).items()))
    bom: list[BomLine] = []
    for model, n in sorted(Counter(d.model for d in devices if d.kind == "switch").items()):
        sw = cat.switches.get(model)
        bom.append(BomLine("switch", model, n, sw.name if sw else ""))
    for model, n in sorted(Counter(d.model for d in devices if d.kind == "node").items()):
        srv = cat.servers.get(model)
        bom.append(BomLine("server", model, n, srv.name if srv else model))
    for (mid, length, speed), keys in sorted(cable_keys.items()):
        medium = cat.media[mid]
        bom.append(
            BomLine(
                "cable",
                mid,
                len(keys),
                f"{speed:g}G {length:g} m {medium.name}",
                medium.part_numbers.get(speed),
            )
        )
    for tid, n in transceivers.items():
        t = cat.transceivers.get(tid)
        bom.append(
            BomLine(
                "transceiver", tid, n, t.name if t else "no catalogue match", t.part_number if t else None
            )
        )
    if racks:
        bom.append(
            BomLine(
                "rack",
                f"{cluster.blueprint.site.rack.units}U",
                len(racks),
                f"{cluster.blueprint.site.rack.power_kw:g} kW budget each",
            )
        )
    return transceivers, bom


def plan_or_raise(cluster: ResolvedCluster, locate=None) -> Plan:  # type: ignore[no-untyped-def]
    """build_plan for commands: a PlanError becomes a located BlueprintError (exit 2)."""
    try:
        return build_plan(cluster)
    except PlanError as exc:
        f = Finding(
            "PLAN001",
            Severity.ERROR,
            f"cannot build the physical plan: {exc}",
            exc.path,
            "fix the topology parameters or the site size (see `blueprint validate`)",
        )
        raise BlueprintError([locate(f) if locate else f]) from None
