"""A plain leaf/spine for storage and management networks, built per placement unit.

Every unit (a scalable unit of GPU nodes, or a pool of storage/login/management nodes) gets its own
leaves, which sit in that unit's network rack: adding a unit appends leaves and cables and moves nothing.
Cable ids are numbered per unit (``S-NL-su3-0001``) so growing one unit renumbers no other.
Inside a unit a node with w ports on this fabric uses w different leaves (a leaf set), so one leaf
failure does not cut a dual-homed node off. Leaves with dedicated uplink ports (SN2201: 48 x 1G down,
4 x 100G up) use those for the spines. Spines are sized for ``growth`` times the leaves built now.
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


def leaf_spine(
    units: Sequence[tuple[str, Sequence[Sequence[Terminal]]]],
    *,
    radix: int,
    ratio: tuple[float, float] = (1.0, 1.0),
    uplink_ports: int = 0,
    uplink_speed_gbps: float | None = None,
    spine_radix: int | None = None,
    ports_per_cage: int = 1,
    growth: float = 1.0,
    prefix: str = "s",
) -> BuiltFabric:
    """``units``: (label, nodes) in a fixed order; each node is its list of ports on this fabric."""
    if not any(t for _, nodes in units for t in nodes):
        raise TopologyError("no node has a port on this fabric")
    d, u = ratio
    if uplink_ports:
        down, up = radix, uplink_ports
    else:
        down = int(radix * d // (d + u))
        up = radix - down
    switches: list[SwitchSpec] = []
    links: list[RawLink] = []
    leaf_names: list[str] = []
    leaf_unit: dict[str, str] = {}
    for label, nodes in units:
        nodes = [t for t in nodes if t]
        if not nodes:
            continue
        width = max(len(t) for t in nodes)
        sets = ceil_div(len(nodes), down)
        names = [f"{prefix}-leaf-{label}-{k + 1:02d}" for k in range(sets * width)]
        for n, terms in enumerate(nodes):
            s, pos = divmod(n, down)
            for i, term in enumerate(terms):
                links.append(
                    RawLink(
                        PortRef(term.host, term),
                        PortRef(names[s * width + i], pos + 1),
                        "node_leaf",
                        term.rail,
                        group=label,
                    )
                )
        for name in names:
            leaf_names.append(name)
            leaf_unit[name] = label
    for j, name in enumerate(leaf_names):
        switches.append(
            SwitchSpec(name, "leaf", radix, ports_per_cage, index=j + 1, uplink_ports=uplink_ports)
        )
    n_leaves = len(leaf_names)
    params: dict[str, object] = {
        "radix": radix,
        "down": down,
        "up": up,
        "leaves": n_leaves,
        "ratio": ratio,
        "leaves_final": n_leaves,
        "tiers": 2,
        "rails": 0,
        "rail_optimized": False,
        "leaf_unit": leaf_unit,
    }
    if n_leaves == 1:
        params.update(spines=0, single_switch=True)
        return BuiltFabric("leaf-spine", switches, links, params)
    sradix = spine_radix or radix
    leaves_final = max(n_leaves, int(n_leaves * growth + 0.999))
    if n_leaves > sradix:
        raise TopologyError(f"{n_leaves} leaves exceed one {sradix}-port spine layer")
    spines = smallest_divisor_at_least(up, ceil_div(min(leaves_final, sradix) * up, sradix))
    if spines is None:
        raise TopologyError(f"cannot spread {up} uplinks per leaf over {sradix}-port spines")
    per_pair = up // spines
    first_up = radix + 1 if uplink_ports else down + 1
    spine_names = [f"{prefix}-spine-{s + 1:03d}" for s in range(spines)]
    for s, name in enumerate(spine_names):
        switches.append(SwitchSpec(name, "spine", sradix, 1, index=s + 1))
    for j, leaf in enumerate(leaf_names):
        for s, spine in enumerate(spine_names):
            for t in range(per_pair):
                links.append(
                    RawLink(
                        PortRef(leaf, first_up + s * per_pair + t),
                        PortRef(spine, j * per_pair + t + 1),
                        "leaf_spine",
                        None,
                        uplink_speed_gbps,
                        group=leaf_unit[leaf],
                    )
                )
    params.update(
        spines=spines, per_pair=per_pair, uplink_speed_gbps=uplink_speed_gbps, leaves_final=leaves_final
    )
    return BuiltFabric("leaf-spine", switches, links, params)
