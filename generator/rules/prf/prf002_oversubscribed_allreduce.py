from __future__ import annotations

from collections.abc import Iterator

from blueprints.models.topology import FatTree, LeafSpine
from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.prf._model import system_of


class OversubscribedAllreduce(Rule):
    """The fabric cuts all_reduce bus bandwidth below the nodes' own NIC bandwidth.

    Rings and trees in rank order keep almost all traffic inside a leaf (or scalable unit), so a
    topology-aware scheduler hides oversubscription. Ranks spread over the fabric — a scheduler without
    topology, several jobs sharing it, or a job larger than a leaf group — send most of their traffic
    through the leaf uplinks and the bisection. The model predicts an all_reduce of the advisor's probe size
    (perf.yaml advisor.probe_size_bytes, 1 GiB) over every node of the GPU pool both ways; when the spread
    placement loses more than the policy share (10 %) against the node's NIC bandwidth, this finding gives
    both figures and the limit. On a torus, hypercube or dragonfly the cables cut rings in topology order as
    well (the next node is reached over one cable, on a dragonfly the one local link between two routers, not
    all the node's NICs), which it reports too. IB SHARP reduces inside the switches and is not cut this
    way.
    """

    id = "PRF002"
    severity = Severity.WARNING
    title = "oversubscription cuts all_reduce below NIC bandwidth"
    rationale = "Collectives spread over an oversubscribed fabric run at the uplinks' share of line rate."
    fix = (
        "build the compute fabric 1:1, enable IB SHARP, or place jobs in topology order (Slurm "
        "topology plugin)"
    )
    tags = ("performance", "nccl", "fabric")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        from blueprints.catalog.perf import perf_data
        from generator.perf.predict import predict_on
        from generator.perf.system import ROUTED_LIMIT, PerfError

        system = system_of(ctx)
        fab = ctx.cluster.fabrics.get("compute")
        if system is None or fab is None or system.net is None or system.fabric is None:
            return
        if system.pool_nodes <= system.unit_nodes:
            return
        size = int(perf_data().advisor.probe_size_bytes.value)  # a bandwidth-bound all_reduce (1 GiB)
        try:
            packed = predict_on(system, "all_reduce", size)
            spread = predict_on(system, "all_reduce", size, placement="scattered")
        except PerfError:
            return
        shortfall = perf_data().policy.busbw_shortfall.value
        nic = system.net.gbytes * system.unit_nodes
        if spread.busbw_gbytes >= nic * (1 - shortfall):
            return
        # placement recovers what spreading loses, unless a routed fabric's cables cut rings in rank order too
        cut_packed = packed.bottleneck == ROUTED_LIMIT and packed.busbw_gbytes < nic * (1 - shortfall)
        if spread.busbw_gbytes >= packed.busbw_gbytes * (1 - shortfall) and not cut_packed:
            return
        topo = fab.spec.topology
        path = (
            (*fab.source_path, "topology", "oversubscription")
            if isinstance(topo, FatTree | LeafSpine)
            else (*fab.source_path, "topology")
        )
        yield self.finding(
            f"a {size / (1 << 30):g} GiB all_reduce over the {system.pool_nodes} nodes of pool "
            f"`{system.pool}` reaches "
            f"{spread.busbw_gbytes:.1f} GB/s busbw with ranks spread over the fabric "
            f"({spread.algorithm}, limited "
            f"by {spread.bottleneck}) against {nic:.1f} GB/s of NIC bandwidth per node and "
            f"{packed.busbw_gbytes:.1f} GB/s with ranks in topology order",
            path,
            hint=ROUTED_FIX if cut_packed else None,
        )


ROUTED_FIX = (
    "a ring or tree reaches its neighbour nodes over the cables between them, not through all of each node's "
    "NICs, wherever the ranks sit: a fat-tree gives collectives the nodes' NIC bandwidth"
)
