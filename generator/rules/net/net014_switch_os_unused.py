from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.resolve import ResolvedCluster, ResolvedFabric
from generator.rules.base import Rule, RuleContext


class SwitchOsUnused(Rule):
    """``switch_os`` declared on a fabric whose switches get no generated configuration.

    ``fabrics.<f>.switch_os`` chooses the one file per switch that ``blueprint generate`` writes in
    build/switches/ (``startup.yaml`` for Cumulus Linux, ``frr.conf`` for FRR; docs/switches.md). Only
    Ethernet/RoCE compute and storage fabrics and the Ethernet management fabric (on Cumulus Linux) with
    switches get one. On an InfiniBand fabric, the management fabric on another OS, a fabric without a
    topology, a direct-attached torus or hypercube (the nodes are the routers) or a cloud fabric the
    setting changes nothing, so a declared value was most likely meant for another fabric.
    """

    id = "NET014"
    severity = Severity.WARNING
    title = "switch_os on a fabric without generated switch configuration"
    rationale = "A setting that changes no output hides the fabric it was meant for."
    fix = (
        "move `switch_os` to the Ethernet/RoCE compute or storage fabric whose switches run that OS, "
        "or remove it"
    )
    tags = ("ethernet", "switches")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        declared = [f for f in ctx.cluster.fabrics.values() if "switch_os" in f.spec.model_fields_set]
        if not declared:  # nothing to check: the switch-OS and VLAN modules stay unimported (issue 32)
            return
        routed = set(ctx.cluster.routed_fabrics)
        # the management fabric's leaves and spines get NVUE files (build/switches/management/), Cumulus only
        mgmt = ctx.cluster.fabrics.get("management")
        if mgmt is not None:
            from blueprints.catalog.switch_os import os_kind
            from generator.deploy.mgmt_vlans import management_fabrics

            if os_kind(mgmt.spec.switch_os) == "cumulus":
                routed |= set(management_fabrics(ctx.cluster))
        for fab in declared:
            if fab.name in routed:
                continue
            yield self.finding(
                f"{fab.name} fabric declares `switch_os: {fab.spec.switch_os}` but {_why(ctx.cluster, fab)}: "
                f"build/switches/ configures 0 of its switches ({len(routed)} routed fabric(s) in this "
                "blueprint)",
                (*fab.source_path, "switch_os"),
            )


def _why(cluster: ResolvedCluster, fab: ResolvedFabric) -> str:
    if cluster.is_cloud:
        return f"the cloud provider ({cluster.target}) runs its switches"
    if fab.kind not in ("ethernet", "roce"):
        return f"it is {fab.technology}, not Ethernet/RoCE"
    if fab.name == "management" and fab.kind in ("ethernet", "roce") and fab.spec.topology is not None:
        return "the management fabric's configuration is written for Cumulus Linux (NVUE) only"
    if fab.spec.topology is None:
        return "it has no topology"
    return f"its {fab.topology_kind} is direct-attached (the nodes are the routers)"
