"""A plain leaf/spine for storage and management networks: node ports fill leaves in order.

Leaves with dedicated uplink ports (SN2201: 48 x 1G down, 4 x 100G up) use those for the spines.
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
    nodes: Sequence[Sequence[Terminal]],
    *,
    radix: int,
    ratio: tuple[float, float] = (1.0, 1.0),
    uplink_ports: int = 0,
    uplink_speed_gbps: float | None = None,
    spine_radix: int | None = None,
    ports_per_cage: int = 1,
    prefix: str = "s",
) -> BuiltFabric:
    # A node's ports go to different leaves where it has several (port 0 of every node first, then
    # port 1 ...), so one leaf failure does not cut a dual-homed storage client off.
    width = max((len(t) for t in nodes), default=0)
    flat = [terms[i] for i in range(width) for terms in nodes if i < len(terms)]
    if not flat:
        raise TopologyError("no node has a port on this fabric")
    d, u = ratio
    if uplink_ports:
        down, up = radix, uplink_ports
    else:
        down = int(radix * d // (d + u))
        up = radix - down
    n_leaves = ceil_div(len(flat), down)
    switches: list[SwitchSpec] = []
    links: list[RawLink] = []
    if n_leaves == 1:
        down = radix if not uplink_ports else down
    leaf_names = [f"{prefix}-leaf-{j + 1:03d}" for j in range(n_leaves)]
    for j, name in enumerate(leaf_names):
        switches.append(SwitchSpec(name, "leaf", radix, ports_per_cage, index=j + 1, uplink_ports=uplink_ports))
    for idx, term in enumerate(flat):
        links.append(RawLink(PortRef(term.host, term), PortRef(leaf_names[idx // down], idx % down + 1), "node_leaf",
                             term.rail))
    params: dict[str, object] = {"radix": radix, "down": down, "up": up, "leaves": n_leaves, "ratio": ratio,
                                 "leaves_final": n_leaves, "tiers": 2, "rails": 0, "rail_optimized": False}
    if n_leaves == 1:
        params.update(spines=0, single_switch=True)
        return BuiltFabric("leaf-spine", switches, links, params)
    sradix = spine_radix or radix
    if n_leaves > sradix:
        raise TopologyError(f"{n_leaves} leaves exceed one {sradix}-port spine layer")
    spines = smallest_divisor_at_least(up, ceil_div(n_leaves * up, sradix))
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
                links.append(RawLink(PortRef(leaf, first_up + s * per_pair + t), PortRef(spine, j * per_pair + t + 1),
                                     "leaf_spine", None, uplink_speed_gbps))
    params.update(spines=spines, per_pair=per_pair, uplink_speed_gbps=uplink_speed_gbps)
    return BuiltFabric("leaf-spine", switches, links, params)
