"""A leaf/spine for storage and management networks, built per placement unit, 2 or 3 tiers as needed.

Every unit (a scalable unit of GPU nodes, or a pool of storage/login/management nodes) gets its own
leaves, which sit in that unit's network rack: adding a unit appends leaves and cables and moves nothing.
Small pools (those without compute ports, which fill fewer ports than one leaf set) share leaves.
Cable ids are numbered per unit (``S-NL-su3-0001``) so growing one unit renumbers no other.
Inside a unit a node with w ports on this fabric uses w different leaves (a leaf set), so one leaf
failure does not cut a dual-homed node off. Leaves with dedicated uplink ports (SN2201: 48 x 1G down,
4 x 100G up) use those for the spines.

Right-sizing: leaves get the uplink bandwidth the most loaded leaf's node ports need at the oversubscription
asked for (not the switch's other half), spread evenly over the spines. Every leaf meets every spine with the
same number of links (and every spine its core group): OpenSM's ftree routing rejects a fabric whose upward
port groups differ in size ("ERR AB0B: Different number of ports in an upward port group"), found by
routing the generated storage fabric with the real OpenSM. Small pools therefore share leaves.
At least 2 spines when the leaf has 2 uplinks (one spine would cut every leaf off when it fails). When the
leaves do not fit one spine layer the fabric gets pods: each pod's spines give half their ports to the
pod's leaves and half to core groups (spine *s* of every pod joins core group *s*), the layout that needs
the fewest cables (then switches).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

from generator.topology.base import (
    BuiltFabric,
    CoreLayer,
    LeafSpineParams,
    PortRef,
    RawLink,
    SpineLayer,
    SwitchSpec,
    Terminal,
    TopologyError,
    ceil_div,
    ratio_down_ports,
)


class LeafLoad(NamedTuple):
    name: str
    unit: str
    ports_used: int  # node ports on this leaf
    need_up: int  # uplinks its (grown) node bandwidth needs at the ratio


class SpineLayout(NamedTuple):
    """How leaves meet spines (and spines meet cores)."""

    spines: int  # spines per pod (2 tiers: the spine count)
    pods: list[list[int]]  # leaf indexes per pod; one pod = 2 tiers
    per_leaf: list[int]  # links from each leaf to each spine of its pod
    cores_per_group: int
    core_pair: list[int]  # per pod: links from a spine to each core of its group
    spine_up: int  # most uplinks of a spine to cores

    @property
    def switches(self) -> int:
        return self.spines * len(self.pods) + self.spines * self.cores_per_group


@dataclass
class _Shape:
    radix: int  # leaf node-facing capacity
    down: int  # leaf down ports
    up: int  # leaf ports available for spines
    first_up: int  # number of the first uplink port
    sradix: int  # spine ports at the uplink speed
    ratio: tuple[float, float]
    speed_ratio: float  # node port speed / uplink speed
    growth: float


class Group(NamedTuple):
    """Nodes that get their own leaves: one unit, or small pools sharing a leaf set."""

    label: str
    nodes: list[Sequence[Terminal]]


def _share_small_units(
    units: Sequence[tuple[str, Sequence[Sequence[Terminal]]]], down: int, small: set[str]
) -> list[Group]:
    """Merge consecutive small units (pools) while their nodes fit one leaf set together."""
    out: list[Group] = []
    for label, nodes in units:
        cabled = [t for t in nodes if t]
        if not cabled:
            continue
        last = out[-1] if out else None
        if (
            last is not None
            and label in small
            and last.label in small
            and len(last.nodes) + len(cabled) <= down
        ):
            last.nodes.extend(cabled)
            continue
        out.append(Group(label, cabled))
    return out


class _Leaves(NamedTuple):
    loads: list[LeafLoad]
    links: list[RawLink]  # node-leaf cables
    leaf_unit: dict[str, str]  # leaf name -> the unit whose rack it sits in


def unit_node_port(node: int, port: int, down: int, width: int) -> tuple[int, int]:
    """(leaf index among its group's leaves, leaf port) of the ``node``-th node's ``port``-th port in a group
    whose nodes have ``width`` ports here: leaf sets of ``width`` leaves of ``down`` node ports, node n on
    port n mod down + 1 of set n // down (a unit's next node appends)."""
    s, pos = divmod(node, down)
    return s * width + port, pos + 1


def _leaves(groups: list[Group], shape: _Shape, prefix: str) -> _Leaves:
    links: list[RawLink] = []
    loads: list[LeafLoad] = []
    leaf_unit: dict[str, str] = {}
    d, u = shape.ratio
    for label, nodes in groups:
        width = max(len(t) for t in nodes)
        sets = ceil_div(len(nodes), shape.down)
        names = [f"{prefix}-leaf-{label}-{k + 1:02d}" for k in range(sets * width)]
        used = dict.fromkeys(names, 0)
        for n, terms in enumerate(nodes):
            for i, term in enumerate(terms):
                j, port = unit_node_port(n, i, shape.down, width)
                used[names[j]] += 1
                links.append(
                    RawLink(
                        PortRef(term.host, term), PortRef(names[j], port), "node_leaf", term.rail, group=label
                    )
                )
        for name in names:
            need = max(1, ceil_div(int(used[name] * shape.speed_ratio * u * 1000), int(d * 1000)))
            loads.append(LeafLoad(name, label, used[name], min(need, shape.up)))
            leaf_unit[name] = label
    return _Leaves(loads, links, leaf_unit)


def _pods(per_leaf: list[int], capacity: int) -> list[list[int]] | None:
    """Consecutive leaves into pods whose links per spine fit ``capacity`` ports."""
    pods: list[list[int]] = [[]]
    load = 0
    for j, p in enumerate(per_leaf):
        if p > capacity:
            return None
        if load + p > capacity:
            pods.append([])
            load = 0
        pods[-1].append(j)
        load += p
    return pods


class _Candidate(NamedTuple):
    cables: int  # leaf-spine (and spine-core) cables bought
    switches: int  # spines (and cores)
    layout: SpineLayout


def _uniform_per_leaf(loads: list[LeafLoad], spines: int) -> list[int]:
    """Links from each leaf to each spine: the same for every leaf (OpenSM ftree, see above)."""
    return [ceil_div(max(ld.need_up for ld in loads), spines)] * len(loads)


def _two_tier_layouts(loads: list[LeafLoad], shape: _Shape, lo: int) -> list[_Candidate]:
    out = []
    for spines in range(lo, shape.up + 1):
        per_leaf = _uniform_per_leaf(loads, spines)
        if max(p * spines for p in per_leaf) <= shape.up and sum(per_leaf) <= shape.sradix:
            lay = SpineLayout(spines, [list(range(len(loads)))], per_leaf, 0, [], 0)
            out.append(_Candidate(sum(per_leaf) * spines, spines, lay))
    return out


def _three_tier_layouts(loads: list[LeafLoad], shape: _Shape, lo: int) -> list[_Candidate]:
    """Per spine count: pods that fit half a spine, and the fewest cores whose ports take the pods."""
    out = []
    half = shape.sradix // 2
    for spines in range(lo, shape.up + 1):
        per_leaf = _uniform_per_leaf(loads, spines)
        if max(p * spines for p in per_leaf) > shape.up:
            continue
        pods = _pods(per_leaf, half)
        if pods is None or len(pods) < 2:
            continue
        loads_up = [sum(per_leaf[j] for j in pod) for pod in pods]  # 1:1 at the spine
        for cores in range(1, max(loads_up) + 1):
            pairs = [ceil_div(max(loads_up), cores)] * len(loads_up)
            if max(pairs) * cores <= shape.sradix - half and sum(pairs) <= shape.sradix:
                lay = SpineLayout(spines, pods, per_leaf, cores, pairs, max(pairs) * cores)
                out.append(
                    _Candidate(sum(per_leaf) * spines + sum(pairs) * cores * spines, lay.switches, lay)
                )
                break
    return out


def _layout(loads: list[LeafLoad], shape: _Shape) -> SpineLayout:
    """The 2-tier layout with the fewest uplinks, then spines; else the 3-tier one with the fewest cables."""
    lo = min(2, shape.up)  # a second spine whenever the leaves have the ports for it
    # the fewest cables (and optics), then the fewest switches; the first of equals
    candidates = _two_tier_layouts(loads, shape, lo) or _three_tier_layouts(loads, shape, lo)
    if not candidates:
        raise TopologyError(
            f"{len(loads)} leaves do not fit 3 tiers of {shape.sradix}-port spines; use a larger spine switch"
        )
    return min(candidates, key=lambda c: (c.cables, c.switches)).layout


def _final_loads(loads: list[LeafLoad], small: set[str], growth: float) -> list[LeafLoad]:
    """Today's leaves, then the compute-unit leaves the declared growth adds (as loaded as the fullest
    one): spines and cores are sized for these, so adding a unit only appends cables."""
    unit_leaves = [ld for ld in loads if ld.unit not in small]
    if growth <= 1.0 or not unit_leaves:
        return loads
    full = max(ld.need_up for ld in unit_leaves)
    now = [ld._replace(need_up=full) if ld.unit not in small else ld for ld in loads]
    more = max(0, int(len(unit_leaves) * growth + 0.999) - len(unit_leaves))
    return now + [LeafLoad(f"growth-{k}", "growth", 0, full) for k in range(more)]


def _current(lay: SpineLayout, n: int) -> SpineLayout:
    """The layout restricted to the first ``n`` (built) leaves."""
    pods = [[j for j in pod if j < n] for pod in lay.pods]
    kept = [k for k, pod in enumerate(pods) if pod]
    return lay._replace(
        pods=[pods[k] for k in kept],
        per_leaf=lay.per_leaf[:n],
        core_pair=[lay.core_pair[k] for k in kept] if lay.core_pair else [],
    )


class _Spines(NamedTuple):
    switches: list[SwitchSpec]  # spines, then cores
    links: list[RawLink]  # leaf-spine, then spine-core cables


def _spine_links(
    loads: list[LeafLoad], lay: SpineLayout, shape: _Shape, prefix: str, up_speed: float | None, ppc: int
) -> _Spines:
    three = len(lay.pods) > 1
    switches: list[SwitchSpec] = []
    links: list[RawLink] = []
    spine_names: list[list[str]] = []
    for p, pod in enumerate(lay.pods):
        names = [
            f"{prefix}-spine-p{p + 1}-{s + 1:02d}" if three else f"{prefix}-spine-{s + 1:03d}"
            for s in range(lay.spines)
        ]
        spine_names.append(names)
        switches.extend(
            SwitchSpec(
                n, "spine", shape.sradix, ppc, pod=p + 1 if three else None, index=p * lay.spines + s + 1
            )
            for s, n in enumerate(names)
        )
        next_port = [1] * lay.spines
        for j in pod:
            ld, per = loads[j], lay.per_leaf[j]
            for s, spine in enumerate(names):
                for t in range(per):
                    links.append(
                        RawLink(
                            PortRef(ld.name, shape.first_up + s * per + t),
                            PortRef(spine, next_port[s]),
                            "leaf_spine",
                            None,
                            up_speed,
                            group=ld.unit,
                        )
                    )
                    next_port[s] += 1
    if three:
        switches.extend(_core_links(lay, spine_names, shape, prefix, up_speed, links, ppc))
    return _Spines(switches, links)


def _core_links(
    lay: SpineLayout,
    spine_names: list[list[str]],
    shape: _Shape,
    prefix: str,
    up_speed: float | None,
    links: list[RawLink],
    ppc: int,
) -> list[SwitchSpec]:
    half = shape.sradix // 2
    first_port = [1 + sum(lay.core_pair[:p]) for p in range(len(lay.core_pair))]
    cores = [
        [f"{prefix}-core-g{g + 1}-{c + 1:02d}" for c in range(lay.cores_per_group)] for g in range(lay.spines)
    ]
    for p, names in enumerate(spine_names):
        for s, spine in enumerate(names):
            for c, core in enumerate(cores[s]):
                for t in range(lay.core_pair[p]):
                    links.append(
                        RawLink(
                            PortRef(spine, half + c * lay.core_pair[p] + t + 1),
                            PortRef(core, first_port[p] + t),
                            "spine_core",
                            None,
                            up_speed,
                        )
                    )
    return [
        SwitchSpec(n, "core", shape.sradix, ppc, index=g * lay.cores_per_group + c + 1)
        for g, row in enumerate(cores)
        for c, n in enumerate(row)
    ]


def _shape(
    radix: int,
    ratio: tuple[float, float],
    uplink_ports: int,
    uplink_speed_gbps: float | None,
    node_speed_gbps: float | None,
    spine_radix: int | None,
    growth: float,
) -> _Shape:
    """Leaf ports: dedicated uplink ports when the switch has them, else the ratio's share of the radix."""
    if uplink_ports:
        down, up, first_up = radix, uplink_ports, radix + 1
    else:
        down = ratio_down_ports(radix, ratio)
        up, first_up = radix - down, down + 1
    speed_ratio = (node_speed_gbps / uplink_speed_gbps) if (node_speed_gbps and uplink_speed_gbps) else 1.0
    return _Shape(radix, down, up, first_up, spine_radix or radix, ratio, speed_ratio, growth)


def _params(
    shape: _Shape, leaves: _Leaves, lay: SpineLayout | None, uplink_speed_gbps: float | None
) -> LeafSpineParams:
    """What the metrics and placement read; ``lay`` None: one leaf, no spine."""
    n = len(leaves.loads)
    spine, core = None, None
    if lay is not None:
        spine = SpineLayer(
            lay.spines * len(lay.pods), max(lay.per_leaf), sum(lay.per_leaf[j] for j in lay.pods[0])
        )
    if lay is not None and len(lay.pods) > 1:
        core = CoreLayer(
            len(lay.pods),
            lay.spines,
            lay.cores_per_group,
            max(lay.core_pair),
            max(sum(lay.per_leaf[j] for j in pod) for pod in lay.pods),
            shape.sradix // 2,
            lay.spine_up,
        )
    return LeafSpineParams(
        radix=shape.radix,
        tiers=3 if core is not None else 2,
        ratio=shape.ratio,
        down=shape.down,
        up=shape.up,
        first_up=shape.first_up,
        leaves=n,
        leaves_final=max(n, int(n * shape.growth + 0.999)) if lay is not None else n,
        spine=spine,
        core=core,
        uplink_speed_gbps=uplink_speed_gbps,
        leaf_unit=leaves.leaf_unit,
    )


def leaf_spine(
    units: Sequence[tuple[str, Sequence[Sequence[Terminal]]]],
    *,
    radix: int,
    ratio: tuple[float, float] = (1.0, 1.0),
    uplink_ports: int = 0,
    uplink_speed_gbps: float | None = None,
    node_speed_gbps: float | None = None,
    spine_radix: int | None = None,
    ports_per_cage: int = 1,
    spine_ports_per_cage: int = 1,
    growth: float = 1.0,
    prefix: str = "s",
    small_units: Sequence[str] = (),
) -> BuiltFabric:
    """``units``: (label, nodes) in a fixed order; each node is its list of ports on this fabric.
    ``small_units``: labels of pools that may share leaves with their neighbours in ``units``."""
    if not any(t for _, nodes in units for t in nodes):
        raise TopologyError("no node has a port on this fabric")
    shape = _shape(radix, ratio, uplink_ports, uplink_speed_gbps, node_speed_gbps, spine_radix, growth)
    leaves = _leaves(_share_small_units(units, shape.down, set(small_units)), shape, prefix)
    loads = leaves.loads
    switches = [
        SwitchSpec(ld.name, "leaf", radix, ports_per_cage, index=j + 1, uplink_ports=uplink_ports)
        for j, ld in enumerate(loads)
    ]
    if len(loads) == 1:
        return BuiltFabric(
            "leaf-spine", switches, leaves.links, _params(shape, leaves, None, uplink_speed_gbps)
        )
    lay = _current(_layout(_final_loads(loads, set(small_units), growth), shape), len(loads))
    above = _spine_links(loads, lay, shape, prefix, uplink_speed_gbps, spine_ports_per_cage)
    if len(lay.pods) > 1:  # pods: leaves carry their pod number (hop counts, Slurm switches)
        pod_of = {loads[j].name: p + 1 for p, pod in enumerate(lay.pods) for j in pod}
        switches = [replace(s, pod=pod_of[s.name]) for s in switches]
    params = _params(shape, leaves, lay, uplink_speed_gbps)
    return BuiltFabric("leaf-spine", switches + above.switches, leaves.links + above.links, params)
