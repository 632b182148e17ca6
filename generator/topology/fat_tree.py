"""Folded-Clos fat-trees of 2 or 3 tiers, rail-optimised or not, with growth headroom.

Rail-optimised (NVIDIA DGX SuperPOD): a scalable unit (SU) of S nodes has one leaf per rail; NIC *r* of
every node in the SU lands on the SU's rail-*r* leaf. Leaf ports 1..S face nodes, the next U face spines
(U = ceil(S·u/d) for a d:u oversubscription). Not rail-optimised: terminals fill leaves in order.

2 tiers: every leaf connects to every spine with U/spines parallel links; the spine count is the smallest
divisor of U that gives enough spine ports for the (growth) leaf count. 3 tiers: pods of ``radix/2``
leaves fully meshed with U pod spines; spine *j* of every pod joins core group *j*.
"""

from __future__ import annotations

from collections.abc import Sequence

from generator.topology.base import (
    BuiltFabric,
    PortRef,
    RawLink,
    SwitchSpec,
    Terminal,
    TopologyError,
    ceil_div,
    smallest_divisor_at_least,
)


def _leaf_shape(
    radix: int, ratio: tuple[float, float], su_size: int | None, rail_optimized: bool
) -> tuple[int, int]:
    """(down ports, up ports) per leaf."""
    d, u = ratio
    down = su_size if (rail_optimized and su_size) else int(radix * d // (d + u))
    if down < 1:
        raise TopologyError(f"a {radix}-port leaf at {d:g}:{u:g} leaves no port for nodes")
    up = ceil_div(int(down * u * 1000), int(d * 1000))
    if down + up > radix:
        raise TopologyError(
            f"a leaf needs {down} down + {up} up = {down + up} ports at {d:g}:{u:g}, the switch has {radix}; "
            f"use at most {int(radix * d // (d + u))} nodes per scalable unit"
        )
    return down, up


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
    if tiers not in (2, 3):
        raise TopologyError(f"a fat-tree has 2 or 3 tiers, not {tiers}")
    if radix < 2:
        raise TopologyError(f"switch radix {radix} is too small")
    if not nodes:
        raise TopologyError("no node has a port on this fabric")
    rails = max(len(t) for t in nodes)
    if rail_optimized and any(len(t) != rails for t in nodes):
        raise TopologyError("rail-optimised fabrics need the same number of ports on every node")
    down, up = _leaf_shape(radix, ratio, su_size, rail_optimized)
    n_nodes = len(nodes)
    target_nodes = max(growth_nodes or n_nodes, n_nodes)

    switches: list[SwitchSpec] = []
    links: list[RawLink] = []
    leaf_names: list[str] = []
    leaf_meta: list[tuple[int | None, int | None]] = []  # (su, rail)

    if rail_optimized:
        su_nodes = down
        n_su = ceil_div(n_nodes, su_nodes)
        leaves_final = ceil_div(target_nodes, su_nodes) * rails
        for su in range(1, n_su + 1):
            for r in range(rails):
                leaf_names.append(f"{prefix}-leaf-su{su}-r{r}")
                leaf_meta.append((su, r))
        # node-leaf cables: by SU, node, rail — appending an SU appends cables (stable ids on growth)
        for i, terms in enumerate(nodes):
            su = i // su_nodes
            for r, term in enumerate(terms):
                leaf = leaf_names[su * rails + r]
                links.append(
                    RawLink(PortRef(term.host, term), PortRef(leaf, i % su_nodes + 1), "node_leaf", r)
                )
    else:
        flat = [t for terms in nodes for t in terms]
        n_leaves = ceil_div(len(flat), down)
        per_node = max(1, rails)
        leaves_final = ceil_div(target_nodes * per_node, down)
        su_nodes = down // per_node if per_node <= down else 1
        for j in range(n_leaves):
            leaf_names.append(f"{prefix}-leaf-{j + 1:03d}")
            leaf_meta.append((None, None))
        for idx, term in enumerate(flat):
            links.append(
                RawLink(
                    PortRef(term.host, term),
                    PortRef(leaf_names[idx // down], idx % down + 1),
                    "node_leaf",
                    term.rail,
                )
            )
    n_leaves = len(leaf_names)
    spine_down = radix // 2
    spine_up = radix - spine_down
    leaves_per_pod = spine_down  # 3 tiers: one link from each pod leaf to each pod spine
    if tiers == 3 and rail_optimized:
        sus_per_pod = leaves_per_pod // rails
        if sus_per_pod < 1:
            raise TopologyError(
                f"{rails} rails do not fit a pod of {leaves_per_pod} leaves ({radix}-port spines)"
            )
        leaves_per_pod = sus_per_pod * rails
    for j, name in enumerate(leaf_names):
        su, rail = leaf_meta[j]
        pod = (j // leaves_per_pod) + 1 if tiers == 3 else None
        switches.append(
            SwitchSpec(name, "leaf", radix, ports_per_cage, su=su, pod=pod, rail=rail, index=j + 1)
        )

    params: dict[str, object] = {
        "radix": radix,
        "tiers": tiers,
        "down": down,
        "up": up,
        "rails": rails,
        "rail_optimized": rail_optimized,
        "leaves": n_leaves,
        "leaves_final": leaves_final,
        "su_nodes": su_nodes,
        "ratio": ratio,
    }
    if n_leaves == 1 and leaves_final == 1:
        params.update(spines=0, cores=0, single_switch=True)
        return BuiltFabric("fat-tree", switches, links, params)

    if tiers == 2:
        if leaves_final > radix:
            raise TopologyError(
                f"{leaves_final} leaves need more than 2 tiers: a 2-tier fat-tree of {radix}-port "
                "switches has at "
                f"most {radix} leaves ({radix * down} node ports at this leaf shape); set tiers: 3"
            )
        spines = smallest_divisor_at_least(up, ceil_div(leaves_final * up, radix))
        if spines is None:  # cannot happen when leaves_final <= radix; kept as a guard with numbers
            raise TopologyError(f"cannot spread {up} uplinks per leaf evenly over spines of {radix} ports")
        per_pair = up // spines
        spine_names = [f"{prefix}-spine-{s + 1:03d}" for s in range(spines)]
        for s, name in enumerate(spine_names):
            switches.append(SwitchSpec(name, "spine", radix, ports_per_cage, index=s + 1))
        for j, leaf in enumerate(leaf_names):
            for s, spine in enumerate(spine_names):
                for t in range(per_pair):
                    links.append(
                        RawLink(
                            PortRef(leaf, down + s * per_pair + t + 1),
                            PortRef(spine, j * per_pair + t + 1),
                            "leaf_spine",
                        )
                    )
        params.update(spines=spines, per_pair=per_pair, cores=0)
        return BuiltFabric("fat-tree", switches, links, params)

    # ---- 3 tiers -------------------------------------------------------------------------------
    pods = ceil_div(n_leaves, leaves_per_pod)
    pods_final = ceil_div(leaves_final, leaves_per_pod)
    spines_per_pod = up
    if pods_final > radix:  # a core has one port per pod at least
        raise TopologyError(f"{pods_final} pods exceed what {radix}-port cores can join (at most {radix})")
    cores_per_group = smallest_divisor_at_least(spine_up, ceil_div(pods_final * spine_up, radix))
    if cores_per_group is None:
        raise TopologyError(f"cannot spread {spine_up} spine uplinks evenly over {radix}-port cores")
    core_pair = spine_up // cores_per_group
    spine_names: list[list[str]] = []
    idx = 0
    for p in range(pods):
        row = []
        for s in range(spines_per_pod):
            idx += 1
            name = f"{prefix}-spine-p{p + 1}-{s + 1:02d}"
            row.append(name)
            switches.append(SwitchSpec(name, "spine", radix, ports_per_cage, pod=p + 1, index=idx))
        spine_names.append(row)
    core_names = [
        [f"{prefix}-core-g{g + 1}-{c + 1:02d}" for c in range(cores_per_group)] for g in range(spines_per_pod)
    ]
    idx = 0
    for g in range(spines_per_pod):
        for name in core_names[g]:
            idx += 1
            switches.append(SwitchSpec(name, "core", radix, ports_per_cage, index=idx))
    for j, leaf in enumerate(leaf_names):
        p, pos = divmod(j, leaves_per_pod)
        for s, spine in enumerate(spine_names[p]):
            links.append(RawLink(PortRef(leaf, down + s + 1), PortRef(spine, pos + 1), "leaf_spine"))
    for p in range(pods):
        for s, spine in enumerate(spine_names[p]):
            for c, core in enumerate(core_names[s]):
                for t in range(core_pair):
                    links.append(
                        RawLink(
                            PortRef(spine, spine_down + c * core_pair + t + 1),
                            PortRef(core, p * core_pair + t + 1),
                            "spine_core",
                        )
                    )
    params.update(
        spines=pods * spines_per_pod,
        spines_per_pod=spines_per_pod,
        cores=spines_per_pod * cores_per_group,
        cores_per_group=cores_per_group,
        core_pair=core_pair,
        pods=pods,
        pods_final=pods_final,
        leaves_per_pod=leaves_per_pod,
        spine_down=spine_down,
        spine_up=spine_up,
    )
    return BuiltFabric("fat-tree", switches, links, params)
