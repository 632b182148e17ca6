"""One call for the command and for tests: read what was discovered, compare it with the plan."""

from __future__ import annotations

from pathlib import Path

from generator.foreign import ByteBudget
from generator.gcpause import gc_paused
from generator.plan.model import Plan
from generator.safetext import inline
from generator.verify.diff import CableResult, Verification, collapse_absent, compare, expected_cables
from generator.verify.identify import (
    PlanIndex,
    ib_found_links,
    lldp_found_links,
    name_map_warnings,
    read_node_name_map,
)
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
        if name_map is not None:
            warnings = warnings + name_map_warnings(disc, index, name_map, ib.identity)
        del disc  # its links are read into ib.links: not kept through the comparison (300k at 100k GPUs)
        # its ends are sheet-labelled; an InfiniBand port has one peer
        result = compare(expected, ib.links, fabric=fabric, source=str(path), single_peer=True)
        switches = {d.name for d in plan.switches(fabric)}
        result = collapse_absent(result, {n.device for n in ib.identity.values()}, switches)
        result.unidentified = ib.unidentified
        result.excluded = excluded
        result.warnings = warnings + sorted(index.notes.values())
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
    result.lldp = True
    return second_agents(result)


def second_agents(result: Verification) -> Verification:
    """An unidentified LLDP neighbour on a port whose planned cable matched, as a warning: a port has one
    cable, so it is a second LLDP agent on that cable (a NIC's firmware sends its own LLDPDUs, with its
    chassis MAC and no system name, beside the host's lldpd), not a cable the plan lacks."""
    matched = {
        (e.device, e.port): r for r in result.results if r.status in ("ok", "rate") for e in (r.a, r.b)
    }
    keep: list[CableResult] = []
    agents: list[str] = []
    moved: set[str] = set()
    for r in result.results:
        near, far = (r.a, r.b) if r.a.known else (r.b, r.a)
        cab = matched.get((near.device, near.port)) if r.status == "unexpected" and not far.known else None
        if cab is None or not near.known:
            keep.append(r)
            continue
        moved.add(far.device)
        agents.append(
            f"{near.text()}: a second LLDP neighbour, {far.device} port {far.port}, beside its planned cable "
            f"{cab.cable} (matched): a second LLDP agent on that cable, most often the NIC's firmware; not "
            "compared (turn the NIC's own LLDP agent off if it is not wanted)"
        )
    if not agents:
        return result
    still = {e.device for r in keep for e in (r.a, r.b) if not e.known}
    result.results = keep
    result.unidentified = [u for u in result.unidentified if u not in moved or u in still]
    result.warnings = sorted(result.warnings + [inline(a) for a in agents])
    return result
