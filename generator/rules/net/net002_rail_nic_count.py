from __future__ import annotations

from collections.abc import Iterator

from blueprints.models.topology import FatTree
from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.sizing import server_path


class RailNicCount(Rule):
    """A rail-optimised fabric wants one compute NIC port per GPU.

    In a rail-optimised fat-tree (DGX SuperPOD style) GPU *i* of every node uses NIC *i*, and NIC *i* of
    every node in a scalable unit goes to the same leaf (rail *i*). With fewer ports than GPUs, several
    GPUs share a NIC through PCIe switches and the rails carry unequal load; with more ports than GPUs
    the extra rails carry no GPU traffic. DGX H100: 8 GPUs, 8 ConnectX-7 NDR ports.
    """

    id = "NET002"
    severity = Severity.WARNING
    title = "compute NIC ports do not match GPUs in a rail-optimised design"
    rationale = "Rail optimisation pairs each GPU with its own NIC and rail; a mismatch breaks the pairing."
    fix = "use a server with one compute NIC port per GPU, or set rail_optimized: false"
    tags = ("nic", "rail", "fat-tree")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        fab = cluster.fabrics.get("compute")
        if fab is None or not isinstance(fab.spec.topology, FatTree) or not fab.spec.topology.rail_optimized:
            return
        for pool in cluster.gpu_pools:
            ports = len(pool.ports_for("compute"))
            gpus = pool.server.gpus
            if ports == 0 or ports == gpus:
                continue
            per = (
                f"{gpus / ports:g} GPUs share each port"
                if ports < gpus
                else f"{ports - gpus} ports carry no GPU's traffic"
            )
            yield self.finding(
                f"pool `{pool.name}`: {gpus} GPUs but {ports} compute NIC ports per node on a "
                "rail-optimised fabric "
                f"({per})",
                server_path(cluster, pool, "nics"),
            )
