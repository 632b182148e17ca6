"""Devices attached to fabric switch ports that are not pool nodes (blueprint ``appliances:``).

NVIDIA's DGX SuperPOD cables its UFM appliances, which run the subnet manager and the SHARP Aggregation
Manager, to compute leaf ports: the H100 reference architecture counts "Compute and UFM" cables as 8 per
DGX plus 4 (Table 4, 127 nodes: 1020), its 4 scalable units of 32 node slots holding 127 DGX so that one
node slot's leaf ports carry the UFM cables (catalogue data/appliances.yaml, [RAH100]). A site may also
put a spare host on spare leaf ports. Each appliance becomes a ``Device`` of kind ``appliance`` with its
cables (``Link`` layer ``appliance_switch``), a rack position and a bill-of-materials line.

The ports are the blueprint's (``links``: switch and port, refused when the topology already uses the
port or the switch has no such port) or, with ``ports: N``, ports the topology leaves free on the last
leaves of the fabric, where the RA puts them, the appliances of an HA pair on different leaves (UFM
manual: "it is recommended that the InfiniBand ports of the primary and secondary UFM-SDN Appliance be
connected to different fabric switches on the same tier").

``ports: N`` never takes a port the declared growth keeps for a planned node, and rule TOP019 refuses a
``links`` entry on one: on a fat-tree the ports its ``growth_nodes`` cable on today's leaves, on the storage
and management leaf-spines the ports of the compute unit those nodes join. Dragonfly, torus and hypercube
fabrics declare no growth.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import NamedTuple

from blueprints.catalog.appliances import ApplianceModel, appliance_model, appliance_models
from blueprints.catalog.load import did_you_mean
from blueprints.models.appliance import Appliance
from blueprints.models.naming import parse_ports
from blueprints.models.topology import FatTree, Hypercube, Torus
from generator.plan.media import MediaChooser, Position
from generator.plan.model import BomLine, Device, Endpoint, Link
from generator.plan.placement import Placed, PlacedRack, put_in_rack
from generator.plan.site_names import leaf_port_layout
from generator.resolve import ResolvedCluster, ResolvedFabric
from generator.topology.base import BuiltFabric, FatTreeParams, LeafSpineParams, Terminal
from generator.topology.metrics import FabricMetrics

_APPLIANCE_PORT = re.compile(r"^p([1-9][0-9]{0,2})$")


def appliance_port(k: int) -> str:
    """An appliance's k-th declared port as the plan names it (``p1``): cables.csv, labels, the net file."""
    return f"p{k}"


def appliance_port_number(port: str) -> int | None:
    """k for an appliance port name ``p<k>``, else None (how a reader of cables.csv tells one)."""
    m = _APPLIANCE_PORT.match(port)
    return int(m.group(1)) if m else None


LAYER = "appliance_switch"
LAYER_CODE = "AS"
KIND = "appliance"
_LETTER = {"compute": "C", "storage": "S", "management": "M"}


class AttachError(ValueError):
    """An appliance cannot be cabled or placed as declared; ``path`` points into the blueprint."""

    def __init__(self, message: str, path: tuple[str | int, ...]) -> None:
        super().__init__(message)
        self.path = path


@dataclass(frozen=True)
class Attachment:
    """An appliance of the blueprint on its switch ports, with its catalogue model."""

    index: int  # position in the blueprint's `appliances:` list
    spec: Appliance
    model: ApplianceModel | None  # None: a generic host
    ports: tuple[tuple[str, int], ...]  # (switch, logical port) per cable, in declaration order
    height_u: int | None  # None: not published and not declared (the device stays unracked)
    power_kw: float | None
    form_factor: str | None = None  # its ports' cage; None: not published and not declared (NET024)


def _path(i: int, *rest: str | int) -> tuple[str | int, ...]:
    return ("appliances", i, *rest)


def used_ports(built: BuiltFabric) -> dict[tuple[str, int], str]:
    """(switch, port) -> what the topology cables there (the far end), for every switch end."""
    used: dict[tuple[str, int], str] = {}
    for link in built.links:
        for end, far in ((link.a, link.b), (link.b, link.a)):
            if not isinstance(end.port, Terminal):
                other = far.port
                what = (
                    f"{other.host} {other.port}"
                    if isinstance(other, Terminal)
                    else f"{far.device} port {other}"
                )
                used[(end.device, end.port)] = what
    return used


def _model(a: Appliance, i: int) -> ApplianceModel | None:
    if a.model is None:
        return None
    m = appliance_model(a.model)
    if m is None:
        known = sorted(appliance_models())
        hint = did_you_mean(a.model, known) or f"known: {', '.join(known)}"
        raise AttachError(
            f"appliance `{a.name}`: unknown appliance model `{a.model}` ({hint})", _path(i, "model")
        )
    return m


def port_form_factor(a: Appliance) -> str | None:
    """The cage of the appliance's fabric ports: declared, else the catalogue's (None: nobody says)."""
    if a.port_form_factor is not None:
        return a.port_form_factor
    m = appliance_model(a.model)
    return m.port_form_factor if m else None


def _form_factor(cluster: ResolvedCluster, a: Appliance, i: int) -> str | None:
    """The appliance's port form factor, a declared one checked against the catalogue's transceivers (a
    cage no module of the catalogue fits would price every optical cable of it as "no catalogue match")."""
    ff = port_form_factor(a)
    known = sorted({t.form_factor for t in cluster.catalog.transceivers.values()})
    if a.port_form_factor is not None and a.port_form_factor not in known:
        hint = did_you_mean(a.port_form_factor, known) or f"known: {', '.join(known)}"
        raise AttachError(
            f"appliance `{a.name}`: no transceiver of the catalogue has form factor `{a.port_form_factor}` "
            f"({hint})",
            _path(i, "port_form_factor"),
        )
    return ff


def _site_ports(rf: ResolvedFabric) -> list[int] | None:
    """The site's port for each logical leaf down port (its port layout), None: the logical numbers."""
    layout = leaf_port_layout(rf)
    return parse_ports(layout.down) if layout else None


def growth_ports(rf: ResolvedFabric, built: BuiltFabric) -> dict[tuple[str, int], int]:
    """The (switch, port)s of today's leaves that the fat-tree's ``growth_nodes`` will cable nodes to, as
    generator/topology/fat_tree.py numbers them (its rail_node_port / flat_terminal_port), in the site's port
    layout, each with the 1-based number of the node that takes it. An appliance put there
    by ``ports: N`` moved to another port when the fabric grew, its running cable with it."""
    topo, params = rf.spec.topology, built.params
    if not isinstance(topo, FatTree) or not topo.growth_nodes or not isinstance(params, FatTreeParams):
        return {}
    from generator.topology.fat_tree import flat_terminal_port, rail_node_port  # as plan/build.py: late

    down = _site_ports(rf)
    leaves = [s.name for s in built.switches if s.tier == "leaf"]
    node_ends = [
        ln.a.port for ln in built.links if ln.layer == "node_leaf" and isinstance(ln.a.port, Terminal)
    ]
    hosts = len({t.host for t in node_ends})
    rails, per_leaf = max(1, params.rails), params.down
    # (node number, leaf index, builder port) as the builder numbers a node's ports; new leaves: no concern
    if params.rail_optimized:
        grown = [
            (i + 1, *rail_node_port(i, r, per_leaf, rails))
            for i in range(hosts, topo.growth_nodes)
            for r in range(rails)
        ]
    else:
        grown = [
            (k // rails + 1, *flat_terminal_port(k, per_leaf))
            for k in range(len(node_ends), topo.growth_nodes * rails)
        ]
    logical = [(n, j, p) for n, j, p in grown if j < len(leaves)]
    if down is None:
        return {(leaves[j], p): n for n, j, p in logical}
    return {(leaves[j], down[p - 1]): n for n, j, p in logical if p <= len(down)}


class _UnitGrowth(NamedTuple):
    """The compute nodes the declared growth adds to the last placement unit of today's compute fabric."""

    last_host: str  # today's last compute node (its unit is the one that grows)
    nodes: int  # compute nodes today
    joining: int  # nodes growth_nodes adds to that unit before it starts new ones


def _unit_growth(cluster: ResolvedCluster, builts: Mapping[str, BuiltFabric]) -> _UnitGrowth | None:
    """The storage and management leaf-spines are built per placement unit (generator/plan/placing.py):
    growth fills the compute fat-tree's last unit (a partial scalable unit, or leaf) before adding units."""
    rf, built = cluster.fabrics.get("compute"), builts.get("compute")
    topo = rf.spec.topology if rf is not None else None
    if not isinstance(topo, FatTree) or not topo.growth_nodes or built is None:
        return None
    if not isinstance(built.params, FatTreeParams):
        return None
    from generator.plan.placing import hosts_on, unit_nodes

    hosts = hosts_on(cluster, "compute")
    n, size = len(hosts), unit_nodes(built.params)
    if not hosts or topo.growth_nodes <= n:
        return None
    unit = (n - 1) // size
    leaves = sum(1 for s in built.switches if s.tier == "leaf")
    # a flat fat-tree's hosts beyond its leaves' units share one last unit, which takes every new node
    end = topo.growth_nodes if not built.params.rail_optimized and unit >= leaves else (unit + 1) * size
    joining = min(end, topo.growth_nodes) - n
    return _UnitGrowth(hosts[-1], n, joining) if joining > 0 else None


def leaf_spine_growth_ports(
    rf: ResolvedFabric, built: BuiltFabric, grow: _UnitGrowth
) -> dict[tuple[str, int], int]:
    """The (leaf, port)s of a leaf-spine that the compute nodes joining the last unit take, as
    generator/topology/leaf_spine.py numbers a unit's nodes (unit_node_port), in the site's port layout."""
    params = built.params
    if not isinstance(params, LeafSpineParams):
        return {}
    from generator.topology.leaf_spine import unit_node_port  # a builder module, as above: late

    ends = [(ln.group, ln.a.device) for ln in built.links if ln.layer == "node_leaf"]
    group = next((g for g, host in ends if host == grow.last_host), None)
    if group is None:  # the unit's nodes have no port on this fabric
        return {}
    per_host: dict[str, int] = {}
    for g, host in ends:
        if g == group:
            per_host[host] = per_host.get(host, 0) + 1
    width = max(per_host.values())
    leaves = [s.name for s in built.switches if s.tier == "leaf" and params.leaf_unit.get(s.name) == group]
    down = _site_ports(rf)
    out: dict[tuple[str, int], int] = {}
    for t in range(grow.joining):
        for i in range(width):
            j, p = unit_node_port(len(per_host) + t, i, params.down, width)
            if j < len(leaves) and (down is None or p <= len(down)):
                out[(leaves[j], down[p - 1] if down else p)] = grow.nodes + t + 1
    return out


def growth_reservations(
    cluster: ResolvedCluster, builts: Mapping[str, BuiltFabric]
) -> dict[str, dict[tuple[str, int], int]]:
    """Per fabric: the leaf ports free today that the declared growth cables a node to (the node's 1-based
    number on the compute fabric once grown); fabrics without such ports are left out."""
    out = {}
    grow = _unit_growth(cluster, builts)
    for name, built in builts.items():
        rf = cluster.fabrics[name]
        ports = growth_ports(rf, built)
        if not ports and grow is not None and name != "compute":
            ports = leaf_spine_growth_ports(rf, built, grow)
        if ports:
            out[name] = ports
    return out


class _Ports:
    """The switch ports of one fabric: which exist, which the topology or an earlier appliance took."""

    def __init__(
        self,
        rf: ResolvedFabric,
        switches: Mapping[str, Device],
        built: BuiltFabric,
        growth: Mapping[tuple[str, int], int],
    ) -> None:
        self.fabric = rf.name
        self.switches = {n: d for n, d in switches.items() if d.fabric == rf.name}
        self.taken = used_ports(built)
        # free today, a node's once the fabric grows: never chosen; a declared link there is rule TOP019's
        self.growth = growth
        # switch names are one name in any case (DNS, LLDP, OpenSM; the plan keeps them unique so): a link to
        # `ib-su1-r1` is a link to the site's `IB-SU1-R1`
        self.folded = {n.lower(): d for n, d in self.switches.items()}

    def claim(self, a: Appliance, i: int, j: int, switch: str, port: int) -> str:
        """Takes the port for ``a``; the switch's name as the plan spells it."""
        where = _path(i, "links", j)
        dev = self.switches.get(switch) or self.folded.get(switch.lower())
        if dev is None:
            hint = did_you_mean(switch, sorted(self.switches)) or "`blueprint plan` lists the switches"
            raise AttachError(
                f"appliance `{a.name}`: no switch `{switch}` on the {self.fabric} fabric ({hint})",
                (*where, "switch"),
            )
        switch = dev.name
        if port > dev.ports:
            raise AttachError(
                f"appliance `{a.name}`: switch {switch} has ports 1-{dev.ports}, not {port}", (*where, "port")
            )
        owner = self.taken.get((switch, port))
        if owner is not None:
            raise AttachError(
                f"appliance `{a.name}`: port {port} of {switch} is taken by the cable to {owner}",
                (*where, "port"),
            )
        self.taken[(switch, port)] = a.name
        return switch

    def free_leaf_ports(self) -> list[list[tuple[str, int]]]:
        """Free ports per candidate switch, the fabric's last leaves first (the RA's free node slot)."""
        devs = list(self.switches.values())
        leaves = (
            [d for d in devs if d.role == "leaf"]
            or [d for d in devs if d.role in ("router", "switch")]
            or devs
        )
        out = []
        for d in reversed(leaves):
            free = [
                (d.name, p)
                for p in range(1, d.ports + 1)
                if (d.name, p) not in self.taken and (d.name, p) not in self.growth
            ]
            if free:
                out.append(free)
        return out


def _auto(specs: list[tuple[int, Appliance]], ports: _Ports) -> dict[int, list[tuple[str, int]]]:
    """``ports: N`` appliances, round-robin over the leaves with free ports: consecutive cables (and the
    two appliances of an HA pair) land on different leaves."""
    pools = ports.free_leaf_ports()
    out: dict[int, list[tuple[str, int]]] = {}
    for i, a in specs:
        assert a.ports is not None
        got: list[tuple[str, int]] = []
        for _ in range(a.ports):
            if not pools:
                raise AttachError(
                    f"appliance `{a.name}`: the {ports.fabric} fabric has no free leaf port left for its "
                    f"{a.ports} cable(s) (the topology {'and growth_nodes use' if ports.growth else 'uses'} "
                    "every port; leave a node slot free, as NVIDIA's SuperPOD does with 127 nodes in 4 "
                    "scalable units of 32)",
                    _path(i, "ports"),
                )
            leaf = pools.pop(0)  # the next leaf in turn, then to the back of the queue
            choice = leaf.pop(0)
            if leaf:
                pools.append(leaf)
            ports.taken[choice] = a.name
            got.append(choice)
        out[i] = got
    return out


def _no_switch_problem(
    cluster: ResolvedCluster, builts: Mapping[str, BuiltFabric], switches: Mapping[str, Device], fabric: str
) -> str | None:
    """Why an appliance cannot be cabled to the fabric's switches (None: it has some). A direct-attach torus
    or hypercube has none: its nodes are the vertices, cabled to one another (generator/topology/cube.py),
    and `ports: N` read that as every leaf port taken ("no free leaf port left"), which misled."""
    if fabric in builts and any(d.fabric == fabric for d in switches.values()):
        return None
    rf = cluster.fabrics.get(fabric)
    if rf is None:
        return f"the blueprint declares no {fabric} fabric (`fabrics.{fabric}`) to cable it to"
    topo = rf.spec.topology
    if isinstance(topo, Torus | Hypercube) and topo.attach == "direct":
        others = sorted({d.fabric for d in switches.values() if d.fabric} - {fabric})
        elsewhere = f"`fabric: {others[0]}`" if others else "another fabric with switches"
        return (
            f"the {fabric} fabric has no switch to cable it to: its topology is a direct-attach {topo.kind} "
            f"(attach: direct), whose nodes are cabled to one another; cable the appliance to {elsewhere}, "
            f"or give the {topo.kind} `attach: switch` and a `switch` model"
        )
    return f"the {fabric} fabric has no switches in the plan to cable it to"


def resolve_attachments(
    cluster: ResolvedCluster,
    builts: Mapping[str, BuiltFabric],
    switches: Mapping[str, Device],
    growth: Mapping[str, Mapping[tuple[str, int], int]],
) -> list[Attachment]:
    """Every declared appliance with its checked ports and figures (declared first, then auto per fabric)."""
    specs = list(enumerate(cluster.blueprint.appliances))
    # one device, one name: NetBox rows and cable ends are found by it, compared without case as DNS, LLDP
    # and OpenSM compare names (RFC 4343; generator/plan/build.py _check_unique_names for hosts and switches)
    taken = {h.lower(): f"a host of pool `{p.name}` (`{h}`)" for p in cluster.pools for h in p.hostnames}
    taken.update((n.lower(), f"a switch of the {d.fabric} fabric (`{n}`)") for n, d in switches.items())
    for i, a in specs:
        other = taken.get(a.name.lower())
        if other is not None:
            raise AttachError(
                f"appliance `{a.name}`: the name is also {other} (names are compared without case: DNS, LLDP "
                "and OpenSM do)",
                _path(i, "name"),
            )
    per_fabric: dict[str, _Ports] = {}
    chosen: dict[int, list[tuple[str, int]]] = {}
    for i, a in specs:
        problem = _no_switch_problem(cluster, builts, switches, a.fabric)
        if problem is not None:
            raise AttachError(f"appliance `{a.name}`: {problem}", _path(i, "fabric"))
        rf = cluster.fabrics[a.fabric]
        ports = per_fabric.get(a.fabric) or per_fabric.setdefault(
            a.fabric, _Ports(rf, switches, builts[a.fabric], growth.get(a.fabric, {}))
        )
        if a.links:
            chosen[i] = [(ports.claim(a, i, j, ln.switch, ln.port), ln.port) for j, ln in enumerate(a.links)]
    for fabric, ports in per_fabric.items():
        chosen.update(_auto([(i, a) for i, a in specs if a.fabric == fabric and a.ports], ports))
    out = []
    for i, a in specs:
        m = _model(a, i)
        height = a.rack_units or (m.rack_units if m else None)
        watts = a.power_w or (m.power_w if m else None)
        kw = watts / 1000 if watts is not None else None
        ff = _form_factor(cluster, a, i)
        out.append(Attachment(i, a, m, tuple(chosen[i]), height, kw, ff))
    return out


def _rack_id(racks: list[PlacedRack], name: str) -> str:
    """The plan's rack ``name`` names: itself, else the one rack of that name in another case (``r01-01``
    for the site's ``R01-01``, as a rack label is read); unknown names stay for put_in_rack to refuse."""
    if any(r.id == name for r in racks):
        return name
    folded = [r.id for r in racks if r.id.lower() == name.lower()]
    return folded[0] if len(folded) == 1 else name


def place_attachments(atts: list[Attachment], racks: list[PlacedRack], placed: dict[str, Placed]) -> None:
    """Each appliance with a known height and draw into its declared rack, else its first switch's rack."""
    for att in atts:
        if att.height_u is None or att.power_kw is None:
            continue  # rule NET024 asks for the figures; the device stays unracked until then
        a = att.spec
        switch_rack = placed[att.ports[0][0]].rack if att.ports[0][0] in placed else None
        rack = _rack_id(racks, a.rack) if a.rack else switch_rack
        if rack is None:
            continue
        problem = put_in_rack(racks, rack, a.name, att.height_u, att.power_kw, placed)
        if problem is not None:
            raise AttachError(
                f"appliance `{a.name}`: {problem}", _path(att.index, "rack") if a.rack else _path(att.index)
            )


def attachment_devices(atts: list[Attachment], placed: Mapping[str, Placed]) -> list[Device]:
    out = []
    for n, att in enumerate(atts, start=1):
        pl = placed.get(att.spec.name)
        out.append(
            Device(
                name=att.spec.name,
                kind=KIND,
                role=(att.model.runs or "host") if att.model else "host",
                model=att.spec.model or "generic",
                fabric=att.spec.fabric,
                index=n,
                rack=pl.rack if pl else None,
                u=pl.u if pl else None,
                height_u=att.height_u or 0,
                power_kw=att.power_kw or 0.0,
                ports=len(att.ports),
            )
        )
    return out


def _switch_end(switch: str, port: int, cage_of: Mapping[str, tuple[int, int]]) -> Endpoint:
    ppc, nports = cage_of.get(switch, (1, 0))
    if ppc > 1 and port <= nports:
        return Endpoint(switch, str(port), port, (port - 1) // ppc + 1, (port - 1) % ppc + 1)
    return Endpoint(switch, str(port), port)


def attachment_links(
    cluster: ResolvedCluster,
    atts: list[Attachment],
    position: Mapping[str, Position],
    cage_of: Mapping[str, tuple[int, int]],
    chooser: MediaChooser,
    measure: Callable[[Position, Position], float],
) -> list[Link]:
    """One cable per declared port, ids ``<F>-AS-<NNNNNN>``, length and medium from both real positions
    (none while the appliance has no rack: NET024 says which figures it needs)."""
    links: list[Link] = []
    counters: dict[str, int] = {}
    for att in atts:
        rf = cluster.fabrics[att.spec.fabric]
        protocol = "infiniband" if rf.kind == "infiniband" else "ethernet"
        iface = att.model.fabric_interface if att.model else None
        for k, (switch, port) in enumerate(att.ports, start=1):
            letter = _LETTER[att.spec.fabric]
            counters[letter] = counters.get(letter, 0) + 1
            mine = Endpoint(att.spec.name, appliance_port(k), k, netdev=iface if k == 1 else None)
            medium, length, run, part = "", 0.0, 0.0, None
            pa, pb = position.get(att.spec.name), position.get(switch)
            if pa is not None and pb is not None:
                run = round(measure(pa, pb), 3)
                choice = chooser.choose(rf.speed_gbps, run, protocol)
                if choice is not None:
                    medium, m, length = choice
                    part = m.part_numbers.get(rf.speed_gbps)
            link_id = f"{letter}-{LAYER_CODE}-{counters[letter]:06d}"
            links.append(
                Link(
                    link_id,
                    att.spec.fabric,
                    LAYER,
                    _switch_end(switch, port, cage_of),  # A end the switch: racked, its pulls start there
                    mine,
                    rf.speed_gbps,
                    medium,
                    length,
                    run,
                    None,
                    part,
                )
            )
    return links


def appliance_bom_lines(devices: list[Device]) -> list[BomLine]:
    """One ``appliance`` line per model (a generic host counts as ``generic``)."""
    counts: dict[str, int] = {}
    for d in devices:
        if d.kind == KIND:
            counts[d.model] = counts.get(d.model, 0) + 1
    out = []
    for model, n in sorted(counts.items()):
        m = appliance_model(model)
        name = m.name if m else "host on fabric switch ports"
        out.append(BomLine(KIND, model, n, name, m.part_number if m else None))
    return out


def unsized_cable_lines(links: list[Link]) -> list[BomLine]:
    """One ``cable`` line per speed for the appliances' cables no length could be given (the appliance has
    no rack yet: NET024), so the BOM still counts every cable of the plan."""
    unsized: dict[float, int] = {}
    for link in links:
        if link.layer == LAYER and not link.medium:
            unsized[link.speed_gbps] = unsized.get(link.speed_gbps, 0) + 1
    detail = "G, length and medium unknown until the appliance is racked (NET024)"
    return [BomLine("cable", "unsized", n, f"{speed:g}{detail}") for speed, n in sorted(unsized.items())]


def with_appliance_cables(
    metrics: Mapping[str, FabricMetrics], links: Iterable[Link], devices: Iterable[Device]
) -> dict[str, FabricMetrics]:
    """Each fabric's metrics with its appliances' cables (layer ``appliance_switch``) and the switch ports
    they take, counted from those cables: the topology's metrics know only the topology's cables, and
    `plan` showed the SuperPOD's compute leaves "2040 used, 8 free" while cables.csv cabled 2,044 of the
    2,048 ports. Each cable takes a port the topology left free (resolve_attachments refuses any other),
    so a port it takes moves from the tier's free count to its used count."""
    tier = {d.name: d.role for d in devices if d.kind == "switch"}
    cables: Counter[str] = Counter()
    ports: Counter[tuple[str, str]] = Counter()  # (fabric, tier) -> switch ports the appliances take
    for link in links:
        cables[link.fabric] += 1
        for end in (link.a, link.b):
            if end.device in tier:
                ports[(link.fabric, tier[end.device])] += 1
    out = dict(metrics)
    for fabric, n in cables.items():
        m = metrics[fabric]
        taken = {t: k for (f, t), k in ports.items() if f == fabric}
        out[fabric] = replace(
            m,
            cables={**m.cables, LAYER: n},
            ports_used={t: m.ports_used.get(t, 0) + taken.get(t, 0) for t in m.ports_used | taken},
            ports_free={t: m.ports_free.get(t, 0) - taken.get(t, 0) for t in m.ports_free | taken},
        )
    return out
