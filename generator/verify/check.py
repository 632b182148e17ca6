"""One call for the command and for tests: read what was discovered, compare it with the plan."""

from __future__ import annotations

from pathlib import Path

from generator.foreign import ByteBudget
from generator.gcpause import gc_paused
from generator.plan.model import Plan
from generator.verify.diff import Verification, collapse_absent, compare, expected_cables
from generator.verify.identify import PlanIndex, ib_found_links, lldp_found_links, read_node_name_map
from generator.verify.model import DiscoveryError, FoundLink


def verify(
    plan: Plan,
    fabric: str,
    discovered: str | Path,
    *,
    node_name_map: str | Path | None = None,
    sim_speed: str | None = None,
    budget: ByteBudget | None = None,
    accept: str | Path | None = None,
) -> Verification:
    """Raises DiscoveryError when ``discovered`` cannot be read or does not fit the fabric, ForeignInputError
    (located) for a bad ``accept`` file. ``budget``: the bytes the whole command may read (the dump, the
    node-name map, the accept file and LLDP files together)."""
    from generator.verify.accept import apply_accepted, read_accept

    accepted = read_accept(accept, plan, fabric, budget) if accept is not None else None
    with gc_paused():
        result = _verify(plan, fabric, Path(discovered), node_name_map, sim_speed, budget)
    return apply_accepted(result, accepted) if accepted is not None else result


def _verify(
    plan: Plan,
    fabric: str,
    path: Path,
    node_name_map: str | Path | None,
    sim_speed: str | None,
    budget: ByteBudget | None,
) -> Verification:
    rf = plan.cluster.fabrics[fabric]
    index = PlanIndex(plan, fabric)
    expected = expected_cables(plan, fabric, sim_speed=sim_speed, end_of=index.end)  # ends sheet-labelled
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
        ib = ib_found_links(disc, index, name_map.names if name_map else {})
        warnings, excluded = disc.warnings, disc.excluded
        del disc  # its links are read into ib.links: not kept through the comparison (300k at 100k GPUs)
        # its ends are sheet-labelled; an InfiniBand port has one peer
        result = compare(expected, ib.links, fabric=fabric, source=str(path), single_peer=True)
        switches = {d.name for d in plan.switches(fabric)}
        result = collapse_absent(result, {n.device for n in ib.identity.values()}, switches)
        result.unidentified = ib.unidentified
        result.excluded = excluded
        result.warnings = warnings + (name_map.warnings if name_map else []) + sorted(index.notes.values())
        return result
    if sim_speed:
        raise DiscoveryError(f"--sim-speed applies to InfiniBand fabrics; {fabric} is {rf.technology}")
    from generator.verify.lldp import read_lldp

    neighbors = read_lldp(path, budget)
    found, unidentified = lldp_found_links(neighbors, index)
    label = index.sheet_label
    found = [FoundLink(label(f.a), label(f.b), f.rate, f.where) for f in found]
    result = compare(expected, found, fabric=fabric, source=str(path))
    # a switch no file comes from and no neighbour names: one finding with its cable count
    seen = {e.device for f in found for e in (f.a, f.b) if e.known}
    result = collapse_absent(result, seen, {d.name for d in plan.switches(fabric)})
    result.unidentified = unidentified
    result.warnings = sorted(index.notes.values())  # interfaces left out, host ports read from the switch
    return result
