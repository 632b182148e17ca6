"""Folded-Clos fat-trees of 2 or 3 tiers, rail-optimised or not, with growth headroom.

Rail-optimised (NVIDIA DGX SuperPOD): a scalable unit (SU) of S nodes has one leaf per rail; NIC *r* of
every node in the SU lands on the SU's rail-*r* leaf. Leaf ports 1..S face nodes, the next U face spines.
Not rail-optimised: terminals fill leaves in order.

Right-sizing: U = ceil(D·u/d) for a d:u oversubscription, where D is the number of leaf down ports that
can ever carry a node: a declared SU size (kept whole, as NVIDIA's RA does), or, without one, the leaf's
node ports or fewer when the nodes present (or the declared growth) do not fill one leaf. 16 nodes on a
64-down leaf get 16 uplinks, not 64: no uplink is bought for capacity nothing can use.

2 tiers: every leaf connects to every spine with U/spines parallel links; the spine count is the smallest
divisor of U that gives enough spine ports for the (growth) leaf count (a single spine is reported as a
single point of failure). 3 tiers: pods of ``radix/2`` leaves fully meshed with U pod
spines; spine *j* of every pod joins core group *j*.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from generator.topology.base import (
    BuiltFabric,
    CoreLayer,
    FatTreeParams,
    PortRef,
    RawLink,
    SpineLayer,
    SwitchSpec,
    Terminal,
    TopologyError,
    ceil_div,
    ratio_down_ports,
    smallest_divisor_at_least,
    uplinks_for,
)


class LeafShape(NamedTuple):
    down: int  # leaf ports that may face nodes (the SU size when rail-optimised)
    up: int  # leaf ports facing spines
    down_used: int  # down ports nodes (present or declared growth) can ever occupy


class LeafMeta(NamedTuple):
    name: str
    su: int | None
    rail: int | None


@dataclass
class LeafLayer:
    """Leaves and node-leaf cables, before any spine exists."""

    leaves: list[LeafMeta]
    links: list[RawLink]
    leaves_final: int  # leaves the declared growth will have
    su_nodes: int  # nodes per placement unit


@dataclass
class _Request:
    radix: int
    tiers: int
    ratio: tuple[float, float]
    rail_optimized: bool
    rails: int
    n_nodes: int
    target_nodes: int
    ports_per_cage: int
    prefix: str
    switches: list[SwitchSpec] = field(default_factory=list)


def _leaf_shape(
    radix: int,
    ratio: tuple[float, float],
    su_size: int | None,
    rail_optimized: bool,
    demand: int | None = None,
) -> LeafShape:
    """Ports per leaf. ``demand``: node ports one leaf can ever see (None = as many as fit)."""
    d, u = ratio
    down = su_size if (rail_optimized and su_size) else ratio_down_ports(radix, ratio)
    if down < 1:
        raise TopologyError(f"a {radix}-port leaf at {d:g}:{u:g} leaves no port for nodes")
    used = down if demand is None else max(1, min(down, demand))
    up = uplinks_for(used, ratio)
    if used + up > radix:
        raise TopologyError(
            f"a leaf needs {used} down + {up} up = {used + up} ports at {d:g}:{u:g}, the switch has {radix}; "
            f"use at most {ratio_down_ports(radix, ratio)} nodes per scalable unit"
        )
    return LeafShape(down, up, used)


def _check_request(nodes: Sequence[Sequence[Terminal]], tiers: int, radix: int, rail_optimized: bool) -> int:
    """Argument checks; the rail count."""
    if tiers not in (2, 3):
        raise TopologyError(f"a fat-tree has 2 or 3 tiers, not {tiers}")
    if radix < 2:
        raise TopologyError(f"switch radix {radix} is too small")
    if not nodes:
        raise TopologyError("no node has a port on this fabric")
    rails = max(len(t) for t in nodes)
    if rail_optimized and any(len(t) != rails for t in nodes):
        raise TopologyError("rail-optimised fabrics need the same number of ports on every node")
    return rails


def rail_node_port(node: int, rail: int, su_nodes: int, rails: int) -> tuple[int, int]:
    """(leaf index, leaf port) of the ``node``-th node's ``rail`` on a rail-optimised fat-tree: one leaf per
    rail per scalable unit of ``su_nodes`` nodes, node i on port i mod su_nodes + 1 (growth appends)."""
    return (node // su_nodes) * rails + rail, node % su_nodes + 1


def flat_terminal_port(index: int, down: int) -> tuple[int, int]:
    """(leaf index, leaf port) of the ``index``-th terminal on a fat-tree that is not rail-optimised: the
    terminals fill leaves of ``down`` node ports in order."""
    return index // down, index % down + 1


def _rail_leaves(nodes: Sequence[Sequence[Terminal]], req: _Request, shape: LeafShape) -> LeafLayer:
    """One leaf per rail per SU; node-leaf cables by SU, node, rail (growth appends cables)."""
    su_nodes = shape.down
    rails = req.rails
    n_su = ceil_div(req.n_nodes, su_nodes)
    leaves = [
        LeafMeta(f"{req.prefix}-leaf-su{su}-r{r}", su, r) for su in range(1, n_su + 1) for r in range(rails)
    ]
    links: list[RawLink] = []
    for i, terms in enumerate(nodes):
        for r, term in enumerate(terms):
            j, port = rail_node_port(i, r, su_nodes, rails)
            links.append(RawLink(PortRef(term.host, term), PortRef(leaves[j].name, port), "node_leaf", r))
    return LeafLayer(leaves, links, ceil_div(req.target_nodes, su_nodes) * rails, su_nodes)


def _flat_leaves(nodes: Sequence[Sequence[Terminal]], req: _Request, shape: LeafShape) -> LeafLayer:
    """Terminals fill leaves in order."""
    down = shape.down
    flat = [t for terms in nodes for t in terms]
    per_node = max(1, req.rails)
    leaves = [
        LeafMeta(f"{req.prefix}-leaf-{j + 1:03d}", None, None) for j in range(ceil_div(len(flat), down))
    ]
    links = [
        RawLink(PortRef(term.host, term), PortRef(leaves[j].name, port), "node_leaf", term.rail)
        for idx, term in enumerate(flat)
        for j, port in (flat_terminal_port(idx, down),)
    ]
    su_nodes = down // per_node if per_node <= down else 1
    return LeafLayer(leaves, links, ceil_div(req.target_nodes * per_node, down), su_nodes)


def _leaves_per_pod(req: _Request) -> int:
    """3 tiers: one link from each pod leaf to each pod spine; rail-optimised pods hold whole SUs."""
    leaves_per_pod = req.radix // 2
    if req.tiers == 3 and req.rail_optimized:
        sus_per_pod = leaves_per_pod // req.rails
        if sus_per_pod < 1:
            raise TopologyError(
                f"{req.rails} rails do not fit a pod of {leaves_per_pod} leaves ({req.radix}-port spines)"
            )
        leaves_per_pod = sus_per_pod * req.rails
    return leaves_per_pod


class _Spines(NamedTuple):
    """The spine (and core) layers built above the leaves, and the leaf uplinks they use."""

    links: list[RawLink]
    up: int  # leaf ports facing spines (2 tiers may round an awkward count up)
    spine: SpineLayer
    core: CoreLayer | None


def _two_tier(req: _Request, layer: LeafLayer, shape: LeafShape) -> _Spines:
    """Spines for the growth leaf count; every leaf meets every spine with ``per_pair`` cables."""
    radix, up, down = req.radix, shape.up, shape.down
    if layer.leaves_final > radix:
        raise TopologyError(
            f"{layer.leaves_final} leaves need more than 2 tiers: a 2-tier fat-tree of {radix}-port "
            "switches has at "
            f"most {radix} leaves ({radix * down} node ports at this leaf shape); set tiers: 3"
        )
    fewest = ceil_div(layer.leaves_final * up, radix)
    spines = smallest_divisor_at_least(up, fewest)
    if spines is None:  # cannot happen when leaves_final <= radix; kept as a guard with numbers
        raise TopologyError(f"cannot spread {up} uplinks per leaf evenly over spines of {radix} ports")
    per_pair = up // spines
    # an awkward uplink count (31 = prime) would need 31 spines; a few more uplinks reach the fewest spines
    # (only when the even split needs more than twice the fewest: a spine costs more than a few cables)
    rounded = ceil_div(up, fewest)
    if (
        spines > 2 * fewest
        and shape.down_used + rounded * fewest <= radix
        and layer.leaves_final * rounded <= radix
    ):
        spines, per_pair = fewest, rounded
        up = rounded * fewest
    spine_names = [f"{req.prefix}-spine-{s + 1:03d}" for s in range(spines)]
    req.switches.extend(
        SwitchSpec(n, "spine", radix, req.ports_per_cage, index=s + 1) for s, n in enumerate(spine_names)
    )
    links = [
        RawLink(
            PortRef(leaf.name, down + s * per_pair + t + 1),
            PortRef(spine, j * per_pair + t + 1),
            "leaf_spine",
        )
        for j, leaf in enumerate(layer.leaves)
        for s, spine in enumerate(spine_names)
        for t in range(per_pair)
    ]
    return _Spines(links, up, SpineLayer(spines, per_pair, len(layer.leaves) * per_pair), None)


class _CoreShape(NamedTuple):
    pods: int
    pods_final: int
    spines_per_pod: int
    cores_per_group: int
    core_pair: int
    spine_down: int
    spine_up: int


def _core_shape(req: _Request, layer: LeafLayer, shape: LeafShape, leaves_per_pod: int) -> _CoreShape:
    radix = req.radix
    spine_down = radix // 2
    spine_up = radix - spine_down
    pods_final = ceil_div(layer.leaves_final, leaves_per_pod)
    if pods_final > radix:  # a core has one port per pod at least
        raise TopologyError(f"{pods_final} pods exceed what {radix}-port cores can join (at most {radix})")
    cores_per_group = smallest_divisor_at_least(spine_up, ceil_div(pods_final * spine_up, radix))
    if cores_per_group is None:
        raise TopologyError(f"cannot spread {spine_up} spine uplinks evenly over {radix}-port cores")
    return _CoreShape(
        ceil_div(len(layer.leaves), leaves_per_pod),
        pods_final,
        shape.up,
        cores_per_group,
        spine_up // cores_per_group,
        spine_down,
        spine_up,
    )


def _three_tier(req: _Request, layer: LeafLayer, shape: LeafShape, leaves_per_pod: int) -> _Spines:
    """Pods of leaves fully meshed with their spines; spine *s* of every pod joins core group *s*."""
    cs = _core_shape(req, layer, shape, leaves_per_pod)
    radix, ppc, prefix = req.radix, req.ports_per_cage, req.prefix
    pod_spines = [
        [f"{prefix}-spine-p{p + 1}-{s + 1:02d}" for s in range(cs.spines_per_pod)] for p in range(cs.pods)
    ]
    for p, row in enumerate(pod_spines):
        for s, name in enumerate(row):
            req.switches.append(
                SwitchSpec(name, "spine", radix, ppc, pod=p + 1, index=p * cs.spines_per_pod + s + 1)
            )
    groups = [
        [f"{prefix}-core-g{g + 1}-{c + 1:02d}" for c in range(cs.cores_per_group)]
        for g in range(cs.spines_per_pod)
    ]
    for g, names in enumerate(groups):
        for c, name in enumerate(names):
            req.switches.append(SwitchSpec(name, "core", radix, ppc, index=g * cs.cores_per_group + c + 1))
    links: list[RawLink] = []
    for j, leaf in enumerate(layer.leaves):
        p, pos = divmod(j, leaves_per_pod)
        for s, spine in enumerate(pod_spines[p]):
            links.append(
                RawLink(PortRef(leaf.name, shape.down + s + 1), PortRef(spine, pos + 1), "leaf_spine")
            )
    for p, row in enumerate(pod_spines):
        for s, spine in enumerate(row):
            for c, core in enumerate(groups[s]):
                for t in range(cs.core_pair):
                    links.append(
                        RawLink(
                            PortRef(spine, cs.spine_down + c * cs.core_pair + t + 1),
                            PortRef(core, p * cs.core_pair + t + 1),
                            "spine_core",
                        )
                    )
    core_layer = CoreLayer(
        cs.pods,
        cs.spines_per_pod,
        cs.cores_per_group,
        cs.core_pair,
        leaves_per_pod,
        cs.spine_down,
        cs.spine_up,
        cs.pods_final,
    )
    # one link from each pod leaf to each pod spine
    spine_layer = SpineLayer(cs.pods * cs.spines_per_pod, 1, min(len(layer.leaves), leaves_per_pod))
    return _Spines(links, shape.up, spine_layer, core_layer)


def fat_tree(
    nodes: Sequence[Sequence[Terminal]],
    *,
    radix: int,
    tiers: int = 2,
    ratio: tuple[float, float] = (1.0, 1.0),
    rail_optimized: bool = True,
    su_size: int | None = None,
    growth_nodes: int | None = None,
    ports_per_cage: int = 1,
    prefix: str = "c",
) -> BuiltFabric:
    """Build the fat-tree for ``nodes`` (each a list of its terminals on this fabric, in rail order)."""
    rails = _check_request(nodes, tiers, radix, rail_optimized)
    n_nodes = len(nodes)
    target = max(growth_nodes or n_nodes, n_nodes)
    req = _Request(radix, tiers, ratio, rail_optimized, rails, n_nodes, target, ports_per_cage, prefix)
    # node ports one leaf can ever carry: the terminals of the whole (grown) fabric when that is less than
    # a leaf holds. A declared scalable unit is a design unit and keeps its full shape: NVIDIA's RA builds a
    # partial SU's leaf-spine cables in full so that routing stays even (TOP016 reports what that costs).
    declared_su = rail_optimized and su_size is not None
    demand = None if declared_su else (target if rail_optimized else target * max(1, rails))
    shape = _leaf_shape(radix, ratio, su_size, rail_optimized, demand)
    layer = _rail_leaves(nodes, req, shape) if rail_optimized else _flat_leaves(nodes, req, shape)
    leaves_per_pod = _leaves_per_pod(req)
    for j, leaf in enumerate(layer.leaves):
        pod = (j // leaves_per_pod) + 1 if tiers == 3 else None
        req.switches.append(
            SwitchSpec(
                leaf.name, "leaf", radix, ports_per_cage, su=leaf.su, pod=pod, rail=leaf.rail, index=j + 1
            )
        )
    above: _Spines | None = None  # None: one leaf carries every node, now and after growth
    if not (len(layer.leaves) == 1 and layer.leaves_final == 1):
        above = _two_tier(req, layer, shape) if tiers == 2 else _three_tier(req, layer, shape, leaves_per_pod)
    links = layer.links + above.links if above is not None else layer.links
    return BuiltFabric("fat-tree", req.switches, links, _params(req, shape, layer, above))


def _params(req: _Request, shape: LeafShape, layer: LeafLayer, above: _Spines | None) -> FatTreeParams:
    return FatTreeParams(
        radix=req.radix,
        tiers=req.tiers,
        ratio=req.ratio,
        down=shape.down,
        up=above.up if above is not None else shape.up,
        first_up=shape.down + 1,
        leaves=len(layer.leaves),
        leaves_final=layer.leaves_final,
        spine=above.spine if above is not None else None,
        core=above.core if above is not None else None,
        down_used=shape.down_used,
        rails=req.rails,
        rail_optimized=req.rail_optimized,
        su_nodes=layer.su_nodes,
    )
