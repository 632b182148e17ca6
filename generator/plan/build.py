"""ResolvedCluster → Plan: run the topology builders and place racks (units and their placement in
``placing.py``); the cables are made in ``links.py``, the bill of materials counted in ``bom.py``."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
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
    growth_reservations,
    place_attachments,
    resolve_attachments,
    with_appliance_cables,
)
from generator.plan.bom import bill_of_materials
from generator.plan.errors import PlanError
from generator.plan.links import FABRIC_LETTER, fabric_links
from generator.plan.media import MediaChooser, Position, rack_xy, run_lengths
from generator.plan.model import Device, FabricMetrics, Link, Plan, Rack
from generator.plan.placement import PlacedRack
from generator.plan.placing import Placement, Unit, hosts_on, place, placement_units
from generator.plan.site_names import SiteLayoutError, apply_site_layout, leaf_port_layout
from generator.resolve import ResolvedCluster, ResolvedFabric
from generator.topology.base import (
    BuiltFabric,
    LeafSpineParams,
    SwitchSpec,
    Terminal,
    TopologyError,
)
from generator.topology.metrics import compute_metrics


@dataclass
class _Built:
    """A fabric as its builder made it, with each switch's catalogue entry."""

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
        # per host only its name differs: the rest of each port's Terminal (in its field order) made once per
        # pool, and tuple.__new__ as for the plan's links (8,192 ports on the dragonfly example)
        rest = [(p.plan_port, p.port, p.index, p.cage, p.cage_port, p.os_netdev, p.faceplate) for p in ports]
        out.extend([_new(Terminal, (host, *r)) for r in rest] for host in pool.hostnames)
    return out


_new = tuple.__new__


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


# Each builder's module is imported when a fabric of its kind is built: validate of a one-node blueprint
# builds none, a fat-tree site imports no dragonfly (issue 32: validate's CPU).


def _build_fat_tree(rf: ResolvedFabric, topo: FatTree, nodes: list[list[Terminal]]) -> BuiltFabric:
    from generator.topology.fat_tree import fat_tree

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
    from generator.topology.dragonfly import dragonfly

    sw = _leaf_switch(rf)
    return dragonfly(
        nodes,
        p=topo.p,
        a=topo.a,
        h=topo.h,
        groups=topo.groups,
        radix=sw.radix,
        arrangement=topo.global_arrangement,
        ports_per_cage=_cage_factor(sw.model, sw.radix),
        prefix=FABRIC_LETTER[rf.name].lower(),
    )


def _build_cube(rf: ResolvedFabric, topo: Torus | Hypercube, nodes: list[list[Terminal]]) -> BuiltFabric:
    from generator.topology.cube import cube

    dims = topo.vertex_dims
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
        ports_per_cage=_cage_factor(sw, cube_radix) if (sw and cube_radix) else 1,
        prefix=FABRIC_LETTER[rf.name].lower(),
    )


def _build_leaf_spine(
    rf: ResolvedFabric, topo: LeafSpine, nodes: list[list[Terminal]], units: list[Unit], growth: float
) -> BuiltFabric:
    """Leaves per placement unit (``units`` in placement order), so a unit's leaves sit in its rack."""
    from generator.topology.leaf_spine import leaf_spine

    sw = _leaf_switch(rf)
    uplinks = sw.model.uplinks
    up_speed = uplinks.speed_gbps if uplinks else rf.speed_gbps
    by_host = {t[0].host: t for t in nodes}
    groups = [(u.label, [by_host[h] for h in u.hosts if h in by_host]) for u in units]
    spine = rf.spine_switch or sw.model
    spine_radix = spine.ports_at(up_speed) or None
    return leaf_spine(
        groups,
        radix=sw.radix,
        ratio=parse_ratio(topo.oversubscription),
        growth=growth,
        uplink_ports=uplinks.count if uplinks else 0,
        uplink_speed_gbps=up_speed if uplinks else None,
        node_speed_gbps=rf.speed_gbps if uplinks else None,
        small_units=[u.label for u in units if not u.forward],
        spine_radix=spine_radix,
        ports_per_cage=_cage_factor(sw.model, sw.radix),
        spine_ports_per_cage=_cage_factor(spine, spine_radix) if spine_radix else 1,
        prefix=FABRIC_LETTER[rf.name].lower(),
    )


def _run_builder(
    rf: ResolvedFabric, nodes: list[list[Terminal]], units: list[Unit], growth: float
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
    cluster: ResolvedCluster, rf: ResolvedFabric, units: list[Unit] | None = None, growth: float = 1.0
) -> _Built | None:
    topo = rf.spec.topology
    if topo is None or cluster.is_cloud:
        return None
    nodes = terminals_for(cluster, rf.name)
    if not nodes:
        return None
    _one_port_a_rail(cluster, rf, topo)
    built = _run_builder(rf, nodes, units or [], growth)
    if isinstance(topo, FatTree | LeafSpine):
        assert rf.switch is not None
        built = _site_layout(built, topo, rf)
    # by their site names: a spine renamed by the blueprint is still of the spine model
    spines = [s.name for s in built.switches if s.tier == "spine"] if isinstance(topo, LeafSpine) else []
    return _Built(rf, built, _switch_models(rf, built, spines))


def _one_port_a_rail(cluster: ResolvedCluster, rf: ResolvedFabric, topo: object) -> None:
    """A rail-optimised fat-tree cables port k of every node to rail k's leaf: a pool with fewer ports on the
    fabric (a head node with one HCA for the subnet manager) has no place in it. Named by pool, at the
    setting that asks for rails."""
    if not isinstance(topo, FatTree) or not topo.rail_optimized:
        return
    counts = {p.name: len(p.ports_for(rf.name)) for p in cluster.pools if p.ports_for(rf.name)}
    rails = max(counts.values(), default=0)
    short = [f"`{name}` ({n})" for name, n in counts.items() if n != rails]
    if short:
        raise PlanError(
            f"{rf.name} is rail-optimised ({rails} rails: every node gives one port to each rail's leaves), "
            f"and pool(s) {', '.join(short)} have fewer ports on it; give them a port a rail, set "
            "rail_optimized: false, or run the subnet manager on the GPU nodes or on UFM appliances "
            "(appliances: take free leaf ports)",
            (*rf.source_path, "topology", "rail_optimized"),
        )


def _site_layout(built: BuiltFabric, topo: FatTree | LeafSpine, rf: ResolvedFabric) -> BuiltFabric:
    """Site names and leaf port layout (the blueprint's, else the switch model's catalogue layout)."""
    layout = leaf_port_layout(rf)
    try:
        return apply_site_layout(
            built,
            fabric=rf.name,
            names=topo.names,
            layout_down=layout.down if layout else None,
            layout_up=layout.up if layout else None,
        )
    except SiteLayoutError as exc:
        message, where = str(exc), exc.field
        if exc.field[0] != "port_layout":
            where = ("names", *exc.field)
        elif topo.port_layout is None:  # the catalogue's layout: say so, at the setting that chose it
            message = f"{message} (the port_layout of switch `{rf.switch_id}` in the catalogue)"
            where = ("switch",)
        raise PlanError(message, (*rf.source_path, "topology", *where)) from None


def _check_unique_names(cluster: ResolvedCluster, builts: dict[str, _Built]) -> None:
    """Site names may collide with a host or another switch: one device, one name. Compared without case, as
    DNS, LLDP and OpenSM compare names (RFC 4343): `SW-1` and `sw-1` were two inventory hosts that resolve to
    one switch, which got both switches' configuration."""
    owner: dict[str, str] = {h.lower(): f"`{h}` of pool {p.name}" for p in cluster.pools for h in p.hostnames}
    for fname, b in builts.items():
        for s in b.built.switches:
            other = owner.get(s.name.lower())
            if other is not None:
                raise PlanError(
                    f"switch name `{s.name}` of the {fname} fabric is also used by {other} (names are "
                    "compared without case: DNS, LLDP and OpenSM do)",
                    (*b.fabric.source_path, "topology", "names"),
                )
            owner[s.name.lower()] = f"switch `{s.name}` of the {fname} fabric"


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


class Fabrics(NamedTuple):
    builts: dict[str, _Built]
    units: list[Unit]
    switches: dict[str, _SwitchEntry]  # switch name → its spec, catalogue entry and fabric


def _build_fabrics(cluster: ResolvedCluster) -> Fabrics:
    """The compute fabric first (its units place everything), then storage/management per unit."""
    builts: dict[str, _Built] = {}
    topo = cluster.fabrics["compute"].spec.topology if "compute" in cluster.fabrics else None
    # a leaf-spine compute fabric is built as the others are, over the pools' units (it has no scalable units
    # or groups of its own to place by); any other compute topology's units place everything
    flat = isinstance(topo, LeafSpine)
    if "compute" in cluster.fabrics and not flat:
        b = build_fabric(cluster, cluster.fabrics["compute"])
        if b is not None:
            builts["compute"] = b
    units = placement_units(cluster, builts.get("compute"))
    growth = 1.0
    if isinstance(topo, FatTree) and topo.growth_nodes and builts.get("compute"):
        growth = max(1.0, topo.growth_nodes / max(1, len(hosts_on(cluster, "compute"))))
    # leaf-spine fabrics: units without compute ports first, so adding compute units only appends
    ls_order = [u for u in units if not u.forward] + [u for u in units if u.forward]
    unit_by_label = {u.label: u for u in units}
    for name, rf in cluster.fabrics.items():
        if name == "compute" and not flat:
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
    return Fabrics(builts, units, switches)


def _devices(cluster: ResolvedCluster, fabrics: Fabrics, where: Placement) -> list[Device]:
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
    where = place(cluster, fabrics) if not cluster.is_cloud else Placement({}, {}, [])
    devices = _devices(cluster, fabrics, where)
    # only appliances can take a leaf port kept for growth (ports: N avoid them, TOP019 reports links there)
    built_by = {n: b.built for n, b in fabrics.builts.items()}
    growth = growth_reservations(cluster, built_by) if cluster.blueprint.appliances else {}
    attached = _attach(cluster, built_by, growth, devices, where)
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
    appliance_cables = attachment_links(cluster, attached, position, cage_of, chooser, run_lengths(site))
    links.extend(appliance_cables)
    metrics = with_appliance_cables(metrics, appliance_cables, devices)
    return Plan(
        cluster=cluster,
        devices=tuple(devices),
        links=tuple(links),
        racks=tuple(racks),
        metrics=metrics,
        growth_ports=growth,
        # counted on first read of Plan.bom / .transceivers: no rule reads them (validate, issue 32)
        bill=partial(bill_of_materials, cluster, devices, links, racks, chooser, device_by, fabrics.switches),
    )


def _attach(
    cluster: ResolvedCluster,
    builts: dict[str, BuiltFabric],
    growth: dict[str, dict[tuple[str, int], int]],
    devices: list[Device],
    where: Placement,
) -> list[Attachment]:
    """The blueprint's appliances on free switch ports, placed in racks (generator/plan/attached.py)."""
    if not cluster.blueprint.appliances:
        return []
    switches = {d.name: d for d in devices if d.kind == "switch"}
    try:
        atts = resolve_attachments(cluster, builts, switches, growth)
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
