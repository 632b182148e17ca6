from __future__ import annotations

from collections.abc import Iterator

from blueprints.models.topology import FatTree, LeafSpine
from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.sizing import (
    capacity_formula,
    clos_capacity,
    endpoints,
    growth_endpoints,
    leaf_down,
    leaf_split,
    ports_per_node,
    radix,
)


class FatTreeCapacity(Rule):
    """More endpoints than the fat-tree's tiers of its switch can carry.

    A non-blocking folded Clos of radix k (each leaf k/2 down, k/2 up) carries k²/2 endpoints in 2 tiers
    and k³/4 in 3 tiers (Al-Fares et al., SIGCOMM 2008; the standard folded-Clos counts): QM8700
    (k = 40) 800 / 16,000, QM9700 (k = 64) 2,048 / 65,536, Q3400 (k = 144) 10,368 / 746,496. k is the
    switch's logical port count at the fabric speed (a QM9700 split to NDR200 has k = 128). In general 2
    tiers hold at most k leaves and 3 tiers at most k pods of k/2 leaves, so the capacity is k × down or
    k × k/2 × down, where down is the node ports per leaf: k·d/(d+u) at oversubscription d:u, or the
    scalable-unit size on a rail-optimised fabric (a rail-optimised pod holds whole SUs). ``growth_nodes``
    sizes for the future node count. Leaf-spine fabrics are checked as 2 tiers (a spine port per leaf).
    """

    id = "TOP001"
    severity = Severity.ERROR
    title = "fat-tree too small for its endpoints"
    rationale = (
        "Each tier multiplies the reachable endpoints by the switch radix; past that the "
        "fabric cannot be built."
    )
    fix = "add a tier (tiers: 3), use a larger-radix switch, or reduce the nodes"
    tags = ("fat-tree", "radix")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        for fab in cluster.fabrics.values():
            topo = fab.spec.topology
            k = radix(fab)
            if k == 0 or not isinstance(topo, FatTree | LeafSpine):
                continue
            if isinstance(topo, LeafSpine):
                yield from self._leaf_spine(ctx, fab, topo, k)
                continue
            rails = ports_per_node(cluster, fab.name) if topo.rail_optimized else None
            down = leaf_down(k, topo.oversubscription, topo.rail_optimized, topo.scalable_unit)
            need = growth_endpoints(cluster, fab.name, topo.growth_nodes)
            capacity = clos_capacity(k, topo.tiers, down, rails)
            if need <= capacity:
                continue
            now = endpoints(cluster, fab.name)
            what = f"{need:,} endpoints" + (
                f" (growth to {topo.growth_nodes:,} nodes; {now:,} today)" if need != now else ""
            )
            msg = (
                f"{fab.name} fabric: {what} exceed what {topo.tiers} tiers of `{fab.switch_id}` (radix "
                f"k = {k} at "
                f"{fab.speed_gbps:g} Gb/s, {down} node ports per leaf) carry: "
                f"{capacity_formula(k, topo.tiers, down, rails)}"
            )
            if topo.tiers == 2:
                three = clos_capacity(k, 3, down, rails)
                msg += f"; 3 tiers carry {capacity_formula(k, 3, down, rails)}"
                hint = "set tiers: 3" if need <= three else "use a larger-radix switch"
            else:
                hint = "use a larger-radix switch or split the cluster"
            yield self.finding(msg, (*fab.source_path, "topology", "tiers"), hint)

    def _leaf_spine(self, ctx: RuleContext, fab, topo: LeafSpine, k: int) -> Iterator[Finding]:  # type: ignore[no-untyped-def]
        leaf = fab.switch
        spine = fab.spine_switch or leaf
        if leaf.uplinks:
            down, up_speed = k, leaf.uplinks.speed_gbps
        else:
            down, up_speed = leaf_split(k, topo.oversubscription)[0], fab.speed_gbps
        ks = spine.ports_at(up_speed)
        if ks == 0:
            return  # NET013 reports the spine
        need = endpoints(ctx.cluster, fab.name)
        # the builder adds a core layer when one spine layer is full: pods of ks/2 leaves, up to ks pods
        if need > ks * (ks // 2) * down:
            yield self.finding(
                f"{fab.name} leaf-spine: {need:,} endpoints exceed 3 tiers of {ks}-port spines: {ks} pods × "
                f"{ks // 2} leaves × {down} leaf down ports = {ks * (ks // 2) * down:,}",
                (*fab.source_path, "topology", "switch"),
                "use a larger spine switch or split the fabric",
            )
