"""The size of a design, computed from its parameters before anything is built, and the limits it must fit.

A blueprint of a few lines can ask for a torus of 1024^3 switches or a hypercube of 2^20: building that
takes minutes and gigabytes before any rule can say it is wrong. These closed forms bound what a fabric
would hold (an upper bound where the exact count needs the build), so the planner refuses in
microseconds with a located error instead. The limits live in generator/limits.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from blueprints.models.topology import Dragonfly, Hypercube, Torus
from generator.findings import Path
from generator.limits import MAX_LINKS, MAX_NODES, MAX_SWITCHES

if TYPE_CHECKING:
    from generator.resolve import ResolvedCluster, ResolvedFabric


@dataclass(frozen=True)
class FabricSize:
    """How many switches and cables a fabric would have, counted before it is built."""

    fabric: str
    switches: int
    links: int
    path: Path


@dataclass(frozen=True)
class TooLarge:
    """A design refused before it is built, with the blueprint path to change."""

    message: str
    path: Path


def endpoint_ports(cluster: ResolvedCluster, fabric: str) -> int:
    return sum(pool.count * len(pool.ports_for(fabric)) for pool in cluster.pools)


def fabric_size(cluster: ResolvedCluster, fab: ResolvedFabric) -> FabricSize | None:
    """Switches and links the fabric would have (upper bounds), or None without a topology."""
    topo = fab.spec.topology
    if topo is None:
        return None
    ports = endpoint_ports(cluster, fab.name)
    path = (*fab.source_path, "topology")
    if isinstance(topo, Torus | Hypercube):
        dims = topo.vertex_dims
        vertices = math.prod(dims)
        degree = sum(1 if d == 2 else 2 for d in dims)  # a ring of 2 is one link, not two
        switches = vertices if topo.attach == "switch" else 0
        return FabricSize(fab.name, switches, vertices * degree // 2 + ports, path)
    if isinstance(topo, Dragonfly):
        routers = topo.groups * topo.a
        links = routers * ((topo.a - 1) // 2 + topo.h) + ports
        return FabricSize(fab.name, routers, links, path)
    # fat-tree / leaf-spine: a leaf takes at least half its radix in node ports (more when oversubscribed),
    # so each tier has at most ports / (k/2) switches; one link per node port per tier
    # a declared growth_nodes is built for too (spines and cores sized for the grown fabric), so the bound
    # counts the grown node ports: 2 nodes growing to 8,000 build ~1,000 switches, not 3
    tiers = getattr(topo, "tiers", 2) or 2
    radix = fab.switch.ports_at(fab.speed_gbps) if fab.switch is not None else 0
    per_leaf = max(1, radix // 2)
    nodes = sum(p.count for p in cluster.pools_on(fab.name))
    growth = getattr(topo, "growth_nodes", None) or 0
    target = max(ports, -(-growth * ports // nodes)) if nodes else ports
    return FabricSize(fab.name, tiers * -(-target // per_leaf), target * tiers, path)


def too_large(cluster: ResolvedCluster) -> list[TooLarge]:
    """Every limit the design exceeds, each with the blueprint path that sets the size."""
    out: list[TooLarge] = []
    nodes = cluster.node_count  # resolve refuses first; kept for callers that build a cluster by hand
    if nodes > MAX_NODES:
        biggest = max(cluster.pools, key=lambda p: p.count)
        out.append(
            TooLarge(f"{nodes:,} nodes exceed the limit of {MAX_NODES:,}", (*biggest.source_path, "count"))
        )
    sizes = [s for s in (fabric_size(cluster, fab) for fab in cluster.fabrics.values()) if s is not None]
    for size in sizes:
        if size.switches > MAX_SWITCHES:
            out.append(
                TooLarge(
                    f"the {size.fabric} fabric would have {size.switches:,} switches; the limit is "
                    f"{MAX_SWITCHES:,}",
                    size.path,
                )
            )
    links = sum(s.links for s in sizes)
    if not out and links > MAX_LINKS:
        heaviest = max(sizes, key=lambda s: s.links)
        out.append(
            TooLarge(
                f"the fabrics would have about {links:,} links ({heaviest.fabric}: {heaviest.links:,}); "
                f"the limit is {MAX_LINKS:,}",
                heaviest.path,
            )
        )
    return out
