from __future__ import annotations

from collections.abc import Iterator

from blueprints.models import parse_ratio
from blueprints.models.topology import FatTree, LeafSpine
from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class Oversubscription(Rule):
    """An oversubscribed compute fabric for training.

    Data-parallel AllReduce and pipeline traffic of a training job cross leaves all at once and at
    line rate; at d:u oversubscription each leaf's uplinks carry only u/d of what its nodes inject, so
    cross-leaf collectives run at that fraction of line rate. NVIDIA's SuperPOD compute fabrics are
    1:1; production RoCE designs oversubscribe only above the zone that holds a job (Meta: 7:1 at
    T1-T2, across AI zones). Inference-only clusters (``workload.mode: inference``) are not flagged.
    """

    id = "TOP005"
    severity = Severity.WARNING
    title = "oversubscribed compute fabric for training"
    rationale = "Training collectives saturate every uplink at once; oversubscription slows them by d:u."
    fix = 'use oversubscription: "1:1" on the compute fabric, or keep each job within one leaf'
    tags = ("fat-tree", "bandwidth")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        fab = cluster.fabrics.get("compute")
        wl = cluster.blueprint.workload
        if fab is None or not isinstance(fab.spec.topology, FatTree | LeafSpine):
            return
        if wl is not None and wl.mode == "inference":
            return
        ratio = fab.spec.topology.oversubscription
        d, u = parse_ratio(ratio)
        if d / u <= 1.0:
            return
        purpose = f"{wl.mode} workload" if wl is not None else "training (no workload given)"
        yield self.finding(
            f"compute fabric is oversubscribed {ratio}{'' if u == 1 else f' ({d / u:g}:1)'} for {purpose}: "
            f"cross-leaf collectives get "
            f"{u / d:.0%} of line rate ({fab.speed_gbps * u / d:g} of {fab.speed_gbps:g} Gb/s per port)",
            (*fab.source_path, "topology", "oversubscription"),
        )
