"""One call for the command and for tests: read what was discovered, compare it with the plan."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from generator.foreign import ByteBudget
from generator.plan.model import Plan
from generator.verify.diff import Verification, compare, expected_cables
from generator.verify.identify import PlanIndex, ib_found_links, lldp_found_links, read_node_name_map
from generator.verify.model import DiscoveryError


def verify(
    plan: Plan,
    fabric: str,
    discovered: str | Path,
    *,
    node_name_map: str | Path | None = None,
    sim_speed: str | None = None,
    budget: ByteBudget | None = None,
) -> Verification:
    """Raises DiscoveryError when ``discovered`` cannot be read or does not fit the fabric. ``budget``: the
    bytes the whole command may read (the dump, the node-name map and LLDP files together)."""
    path = Path(discovered)
    rf = plan.cluster.fabrics[fabric]
    index = PlanIndex(plan, fabric)
    expected = [
        replace(c, a=index.sheet_label(c.a), b=index.sheet_label(c.b))
        for c in expected_cables(plan, fabric, sim_speed=sim_speed)
    ]
    if rf.kind == "infiniband":
        if path.is_dir():
            raise DiscoveryError(
                f"{path} is a directory; the {fabric} fabric is InfiniBand: give one "
                "`ibnetdiscover` output file"
            )
        from generator.verify.ibnetdiscover import read_ibnetdiscover

        disc = read_ibnetdiscover(path, budget)
        if not disc.links:
            raise DiscoveryError(
                f"{path}: {len(disc.nodes)} node(s) but no links: nothing to compare (was ibnetdiscover run "
                "on a cabled port with the subnet up?)"
            )
        name_map = read_node_name_map(node_name_map, budget) if node_name_map else None
        found, unidentified = ib_found_links(disc, index, name_map.names if name_map else {})
        found = [replace(f, a=index.sheet_label(f.a), b=index.sheet_label(f.b)) for f in found]
        result = compare(expected, found, fabric=fabric, source=str(path))
        result.unidentified = unidentified
        result.excluded = disc.excluded
        result.warnings = (
            disc.warnings + (name_map.warnings if name_map else []) + sorted(index.notes.values())
        )
        return result
    if sim_speed:
        raise DiscoveryError(f"--sim-speed applies to InfiniBand fabrics; {fabric} is {rf.technology}")
    from generator.verify.lldp import read_lldp

    neighbors = read_lldp(path, budget)
    found, unidentified = lldp_found_links(neighbors, index)
    found = [replace(f, a=index.sheet_label(f.a), b=index.sheet_label(f.b)) for f in found]
    result = compare(expected, found, fabric=fabric, source=str(path))
    result.unidentified = unidentified
    return result
