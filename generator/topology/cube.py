"""k-ary n-cubes: tori (any dimensions, wrap-around links) and hypercubes (2^d vertices).

Vertices are nodes (``attach="direct"``: node ports are cabled to neighbour nodes) or switches with
``nodes_per_switch`` nodes each (``attach="switch"``). Along a dimension of size k ≥ 3 every vertex links
to its + neighbour (k links per ring); a dimension of size 2 has one link per pair. Port order on a vertex:
dimension 0 "+", dimension 0 "−", dimension 1 "+", ... (size-2 dimensions use one port).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

from generator.topology.base import (
    BuiltFabric,
    CubeParams,
    PortRef,
    RawLink,
    SwitchSpec,
    Terminal,
    TopologyError,
)


def cube_degree(dims: Sequence[int]) -> int:
    return sum(1 if k == 2 else 2 for k in dims)


def switch_ports(nodes_per_switch: int, ports_per_node: int, dims: Sequence[int]) -> int:
    """Ports one switch vertex of a switched torus / hypercube uses: every port of its nodes, then one per
    neighbour link (the builder's numbering below, and rule TOP013's check)."""
    return nodes_per_switch * ports_per_node + cube_degree(dims)


def _coords(v: int, dims: Sequence[int]) -> list[int]:
    out = []
    for k in dims:
        v, c = divmod(v, k)
        out.append(c)
    return out


def _index(coords: Sequence[int], dims: Sequence[int]) -> int:
    v, mul = 0, 1
    for c, k in zip(coords, dims, strict=True):
        v += c * mul
        mul *= k
    return v


def _port_slot(dim: int, plus: bool, dims: Sequence[int]) -> int:
    """0-based position of the (dim, direction) port among a vertex's cube ports."""
    slot = sum(1 if k == 2 else 2 for k in dims[:dim])
    return slot if (plus or dims[dim] == 2) else slot + 1


class _Vertices(NamedTuple):
    """The cube's vertices: switches and node cables (switched cubes), and where each cube port is."""

    switches: list[SwitchSpec]
    links: list[RawLink]  # node-switch cables (none when nodes are the vertices)
    end: Callable[[int, int], PortRef]  # (vertex, cube port slot) -> the port its cable plugs into


def _direct(nodes: Sequence[Sequence[Terminal]], dims: Sequence[int], kind: str) -> _Vertices:
    """Nodes are the vertices: cube port slot *s* of node *v* is the node's port *s*."""
    vertices, degree = math.prod(dims), cube_degree(dims)
    shape = "x".join(map(str, dims))
    if len(nodes) != vertices:
        raise TopologyError(
            f"a direct {kind} of dimensions {shape} has {vertices} vertices; "
            f"the fabric has {len(nodes)} nodes"
        )
    short = [i for i, t in enumerate(nodes) if len(t) < degree]
    if short:
        raise TopologyError(
            f"each node needs {degree} ports for a {kind} of dimensions {shape}; "
            f"node {nodes[short[0]][0].host if nodes[short[0]] else short[0]} has {len(nodes[short[0]])}"
        )

    def end(v: int, slot: int) -> PortRef:
        term = nodes[v][slot]
        return PortRef(term.host, term)

    return _Vertices([], [], end)


def _switched(
    nodes: Sequence[Sequence[Terminal]],
    dims: Sequence[int],
    kind: str,
    nodes_per_switch: int,
    radix: int | None,
    ports_per_cage: int,
    prefix: str,
) -> _Vertices:
    """Switches are the vertices: node ports first, then the cube ports."""
    vertices, degree = math.prod(dims), cube_degree(dims)
    if radix is None:
        raise TopologyError(f"a switched {kind} needs a switch model")
    per_node = max((len(t) for t in nodes), default=1)
    need = switch_ports(nodes_per_switch, per_node, dims)
    if need > radix:
        raise TopologyError(
            f"a {kind} switch needs {nodes_per_switch} nodes x {per_node} ports + {degree} {kind} ports = "
            f"{need}; the switch has {radix}"
        )
    if len(nodes) > vertices * nodes_per_switch:
        raise TopologyError(f"{len(nodes)} nodes exceed {vertices} switches x {nodes_per_switch} nodes")
    names = [f"{prefix}-sw-{v + 1:03d}" for v in range(vertices)]
    switches = [
        SwitchSpec(name, "switch", radix, ports_per_cage, index=v + 1) for v, name in enumerate(names)
    ]
    links: list[RawLink] = []
    for n, terms in enumerate(nodes):
        v = n // nodes_per_switch
        for k, term in enumerate(terms):
            port_no = (n % nodes_per_switch) * per_node + k + 1
            links.append(
                RawLink(PortRef(term.host, term), PortRef(names[v], port_no), "node_switch", term.rail)
            )
    base = nodes_per_switch * per_node

    def end(v: int, slot: int) -> PortRef:
        return PortRef(names[v], base + slot + 1)

    return _Vertices(switches, links, end)


def _cube_links(dims: Sequence[int], end: Callable[[int, int], PortRef], layer: str) -> list[RawLink]:
    """Every vertex to its + neighbour along each dimension (a size-2 dimension: one link per pair)."""
    links: list[RawLink] = []
    for v in range(math.prod(dims)):
        c = _coords(v, dims)
        for d, k in enumerate(dims):
            if k == 2 and c[d] == 1:
                continue  # the pair's single link is made from coordinate 0
            nc = list(c)
            nc[d] = (c[d] + 1) % k
            w = _index(nc, dims)
            links.append(
                RawLink(end(v, _port_slot(d, True, dims)), end(w, _port_slot(d, False, dims)), layer)
            )
    return links


def cube(
    nodes: Sequence[Sequence[Terminal]],
    *,
    dims: Sequence[int],
    kind: str = "torus",
    attach: str = "direct",
    nodes_per_switch: int = 1,
    radix: int | None = None,
    ports_per_cage: int = 1,
    prefix: str = "c",
) -> BuiltFabric:
    if not dims or any(k < 2 for k in dims):
        raise TopologyError(f"every {kind} dimension needs at least 2 vertices, got {list(dims)}")
    if attach == "direct":
        vx = _direct(nodes, dims, kind)
    else:
        vx = _switched(nodes, dims, kind, nodes_per_switch, radix, ports_per_cage, prefix)
    links = vx.links + _cube_links(dims, vx.end, kind)
    params = CubeParams(tuple(dims), math.prod(dims), cube_degree(dims), attach, nodes_per_switch)
    return BuiltFabric(kind, vx.switches, links, params)


def torus(nodes: Sequence[Sequence[Terminal]], *, dims: Sequence[int], **kw: object) -> BuiltFabric:
    return cube(nodes, dims=dims, kind="torus", **kw)  # type: ignore[arg-type]


def hypercube(nodes: Sequence[Sequence[Terminal]], *, dimension: int, **kw: object) -> BuiltFabric:
    if dimension < 1:
        raise TopologyError("a hypercube has dimension >= 1")
    return cube(nodes, dims=[2] * dimension, kind="hypercube", **kw)  # type: ignore[arg-type]
