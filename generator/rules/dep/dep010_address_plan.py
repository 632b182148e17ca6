"""DEP010: the deployment's networks hold every node and interface."""

from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class AddressPlanFits(Rule):
    """The program carves its subnets from the blueprint's CIDRs: on MAAS one subnet per compute rail
    (`compute_cidr`), one for storage, and the management network; on AWS a private subnet holding one
    address per instance (or one per EFA interface with `efa_only_cards: false`) and a small public subnet
    for the NAT gateway; on GCP one subnet per host NIC and per GPU NIC network; on Azure and OCI a cluster
    subnet. Each must hold its nodes plus the addresses the provider reserves."""

    id = "DEP010"
    severity = Severity.ERROR
    title = "address plan does not fit the nodes"
    rationale = "instances fail to launch (or MAAS cannot assign addresses) when a subnet is full"
    fix = "use a larger CIDR, or ranges that do not overlap"
    tags = ("deployment", "network")
    # generate stops on what it says: suppressed, validate would pass what generate refuses
    suppressible = False

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        from generator.deploy.addresses import onprem_problems
        from generator.deploy.targets import onprem

        cluster = ctx.cluster
        # on-prem: the problems without the addresses (the plan's only problems come from these checks)
        if onprem(cluster.target):
            problems = onprem_problems(cluster)
        else:
            from generator.deploy.address_plan import address_plan  # the cloud subnets (~2 ms to import)

            problems = address_plan(cluster).problems
        for path, message in problems:
            yield self.finding(message, path)
