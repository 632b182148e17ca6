from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.sizing import endpoints


class IbSubnetManager(Rule):
    """An InfiniBand fabric without a subnet manager.

    An InfiniBand subnet does not pass traffic until a subnet manager (OpenSM, UFM, or a managed switch's
    embedded SM) has discovered it, assigned LIDs and programmed the forwarding tables: every port stays
    in INIT. The blueprint's ``subnet_manager`` says which one runs (and its routing engine, HA and
    SHARP). Cloud InfiniBand (Azure HPC, OCI) is managed by the provider and is not checked.
    """

    id = "NET005"
    severity = Severity.ERROR
    title = "InfiniBand fabric without a subnet manager"
    rationale = "InfiniBand ports stay in INIT and pass no traffic until a subnet manager configures them."
    fix = (
        "add `subnet_manager: {kind: opensm, ha: true}` (or kind: ufm / switch) to the fabric; `blueprint "
        "generate` then writes build/subnet_manager/<fabric>/<host>/opensm.conf and partitions.conf, "
        "installed by build/ansible/opensm.yml"
    )
    tags = ("infiniband", "subnet-manager")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        if cluster.is_cloud:
            return
        for fab in cluster.fabrics.values():
            if fab.kind != "infiniband" or fab.spec.subnet_manager is not None:
                continue
            yield self.finding(
                f"{fab.name} fabric is {fab.technology} with {endpoints(cluster, fab.name):,} ports and no "
                "subnet manager: its ports stay in INIT",
                (*fab.source_path, "technology"),
            )
