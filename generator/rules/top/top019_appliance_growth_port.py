from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from blueprints.models.topology import FatTree
from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext

if TYPE_CHECKING:
    from generator.plan.model import Plan
    from generator.resolve import ResolvedCluster


class ApplianceGrowthPort(Rule):
    """An appliance's declared link on a leaf port that the fabric's declared growth cables a node to.

    ``growth_nodes`` is a promise that the fabric grows to that many nodes by appending: the fat-tree numbers
    a future node's leaf ports as it numbers today's (generator/topology/fat_tree.py), and the storage and
    management leaf-spines give the compute unit it joins the next ports of that unit's leaves
    (generator/topology/leaf_spine.py). A port that is free today but reserved so is not free for an
    appliance: when the node is installed its cable and the appliance's land on one port, and one of them
    has to move (a UFM appliance's running subnet manager with it). ``ports: N`` never chooses such a port;
    an explicit ``links:`` entry is checked here, located at the entry's port, naming the node that will
    take it.
    """

    id = "TOP019"
    severity = Severity.ERROR
    title = "appliance linked to a leaf port reserved for growth"
    rationale = "The appliance's cable and a planned node's cable would share one switch port."
    fix = (
        "link the appliance to a port the growth leaves free (or give `ports: N` to let the plan choose one)"
    )
    tags = ("growth", "appliance")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        appliances = ctx.cluster.blueprint.appliances
        plan = ctx.plan
        if not appliances or plan is None or not plan.growth_ports:
            return
        cabled = _switch_ends(plan)
        for i, a in enumerate(appliances):
            reserved = plan.growth_ports.get(a.fabric, {})
            for j, _link in enumerate(a.links or ()):
                end = cabled.get((a.name, j + 1))
                node = reserved.get(end) if end is not None else None
                if end is None or node is None:
                    continue
                yield self.finding(
                    f"appliance `{a.name}`: port {end[1]} of {end[0]} is reserved for growth: "
                    f"{_growth(ctx.cluster, a.fabric)} cables its node {node:,} there, and that node's cable "
                    "and the appliance's would share the port",
                    ("appliances", i, "links", j, "port"),
                )


def _switch_ends(plan: Plan) -> dict[tuple[str, int], tuple[str, int]]:
    """(appliance, its k-th cable) -> (switch as the plan spells it, switch port)."""
    from generator.plan.attached import LAYER

    return {
        (ln.b.device, ln.b.port_number): (ln.a.device, ln.a.port_number)
        for ln in plan.links
        if ln.layer == LAYER
    }


def _growth(cluster: ResolvedCluster, fabric: str) -> str:
    """Whose growth_nodes reserves the fabric's ports: its own fat-tree's, else the compute fabric's (the
    fabric's leaves serve the compute fabric's units)."""
    for name in (fabric, "compute"):
        rf = cluster.fabrics.get(name)
        topo = rf.spec.topology if rf is not None else None
        if isinstance(topo, FatTree) and topo.growth_nodes:
            return f"the {name} fabric's growth_nodes {topo.growth_nodes:,}"
    return "the declared growth"  # pragma: no cover - plan.growth_ports has no fabric without growth_nodes
