from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from generator.findings import Finding, Path, Severity
from generator.resolve import ResolvedCluster, ResolvedFabric
from generator.rules.base import Rule, RuleContext

if TYPE_CHECKING:
    from generator.plan.model import Plan


class SmOnGpuNode(Rule):
    """The subnet manager, or SHARP's Aggregation Manager, on a GPU compute node.

    NVIDIA: "Aggregation Manager is a central entity running on a dedicated server with a master Subnet
    Manager. This dedicated server cannot serve as a compute node" (SHARP documentation, *Setting up NVIDIA
    SHARP Environment*); the AM runs where the master SM runs (*Running NVIDIA SHARP Aggregation Manager
    (AM) Daemons*: "executed on a dedicated server along with the Subnet Manager"). So with ``sharp: true``
    an SM host (``subnet_manager.hosts``, or the hosts ``generate`` picks: management pools first) in a
    ``role: gpu`` pool is an error. Without SHARP it is a warning: the SM then competes with training jobs
    for the host's CPU and is restarted with it, and its port is a full member of the Default partition.
    """

    id = "NET023"
    severity = Severity.ERROR
    title = "subnet manager or SHARP Aggregation Manager on a GPU compute node"
    rationale = "NVIDIA runs the SM and the SHARP AM on a dedicated server that is not a compute node."
    fix = (
        "add a management pool (role: management) with a port on the fabric and list its hosts in "
        "subnet_manager.hosts, or use kind: ufm on a UFM appliance"
    )
    tags = ("infiniband", "subnet-manager", "sharp")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        for fab in cluster.fabrics.values():
            sm = fab.spec.subnet_manager
            if fab.kind != "infiniband" or sm is None or cluster.is_cloud:
                continue
            yield from self._fabric(cluster, fab, ctx.plan)

    def _fabric(self, cluster: ResolvedCluster, fab: ResolvedFabric, built: Plan | None) -> Iterator[Finding]:
        from generator.plan.subnet_manager import sm_plan

        plan = sm_plan(cluster, fab.name, built)
        if plan.location != "head-node":
            return
        gpu_hosts = {h for p in cluster.pools if p.role == "gpu" for h in p.hostnames}
        on_gpu = [m.name for m in plan.members if m.name in gpu_hosts]
        if not on_gpu:
            return
        base: Path = (*fab.source_path, "subnet_manager")
        where: Path = (*base, "hosts") if plan.sm.hosts else base
        hosts = ", ".join(on_gpu)
        if plan.sm.sharp:
            yield self.finding(
                f"{fab.name} sharp: true with the subnet manager and SHARP Aggregation Manager on GPU "
                f"compute node(s) {hosts}: NVIDIA runs them on a dedicated server that is not a compute node",
                where,
            )
        else:
            yield self.finding(
                f"{fab.name} subnet manager runs on GPU compute node(s) {hosts}",
                where,
                hint="a dedicated management host keeps the SM off the training jobs' CPUs and reboots",
                severity=Severity.WARNING,
            )
