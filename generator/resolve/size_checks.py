"""Size limits checked before anything is built: the node count of a blueprint and the switch count its
fabrics would need (generator/limits.py)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import NamedTuple

from blueprints.models import Blueprint
from blueprints.models.topology import Dragonfly, Hypercube, Torus
from generator.findings import BlueprintError, Finding, Severity
from generator.limits import IDLE_FACTOR, IDLE_FLOOR, MAX_NODES, MAX_SWITCHES
from generator.load import LoadedBlueprint
from generator.resolve.model import ResolvedFabric, ResolvedPool


def refuse_too_many_nodes(bp: Blueprint, loaded: LoadedBlueprint | Blueprint) -> None:
    """Before any per-node work (host names, ports): the node count is within the documented limit."""
    total = sum(p.count for p in bp.pools)
    if total <= MAX_NODES:
        return
    biggest = max(range(len(bp.pools)), key=lambda i: bp.pools[i].count)
    finding = Finding(
        "PLN001",
        Severity.ERROR,
        f"{total:,} nodes exceed the limit of {MAX_NODES:,} (see docs/architecture.md)",
        ("pools", biggest, "count"),
        "split the design into several blueprints",
    )
    raise BlueprintError([loaded.locate(finding) if isinstance(loaded, LoadedBlueprint) else finding])


class _Budget(NamedTuple):
    what: str  # "routers" or "vertices"
    built: int  # what the topology parameters build (closed form)
    need: int  # what the fabric's nodes need
    key: str  # the topology key that sets the size


def _budget(fab: ResolvedFabric, nodes: int, ports: int) -> _Budget | None:
    """The size a fabric's parameters ask for against what its nodes need, in closed form, per kind."""
    t = fab.spec.topology
    if isinstance(t, Dragonfly):  # g·a routers; each takes p node ports
        return _Budget("routers", t.groups * t.a, -(-ports // t.p), "groups")
    if isinstance(t, Torus | Hypercube):  # ∏k or 2^n vertices: nodes, or switches of nodes_per_switch
        vertices = math.prod(t.vertex_dims)
        per = t.nodes_per_switch if t.attach == "switch" else 1
        return _Budget(
            "vertices", vertices, -(-nodes // per), "dimensions" if isinstance(t, Torus) else "dimension"
        )
    return None


def size_budget_errors(fabrics: Mapping[str, ResolvedFabric], pools: list[ResolvedPool]) -> list[Finding]:
    """Before anything is built: no fabric builds far more than its nodes need (generator/limits.py)."""
    out: list[Finding] = []
    for fab in fabrics.values():
        on = [p for p in pools if p.ports_for(fab.name)]
        nodes = sum(p.count for p in on)
        b = _budget(fab, nodes, sum(p.count * len(p.ports_for(fab.name)) for p in on))
        # above MAX_SWITCHES the planner's absolute limits refuse it (generator/plan/size.py)
        if b is None or b.built <= max(IDLE_FLOOR, IDLE_FACTOR * b.need) or b.built > MAX_SWITCHES:
            continue
        out.append(
            Finding(
                "PLN001",
                Severity.ERROR,
                f"the {fab.name} {fab.topology_kind} would build {b.built:,} {b.what} for {nodes:,} nodes "
                f"that need {b.need:,}; at most max({IDLE_FLOOR:,}, {IDLE_FACTOR} × {b.need:,}) are built "
                "(docs/architecture.md, Limits)",
                (*fab.source_path, "topology", b.key),
                "size the topology for the nodes the blueprint declares",
            )
        )
    return out
