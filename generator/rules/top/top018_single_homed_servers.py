from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class SingleHomedServers(Rule):
    """Critical servers whose every port on a fabric lands on one leaf.

    Storage servers, management/head nodes and the servers named by a shared file system (a Lustre MGS,
    an NFS server) serve the whole cluster: when the one leaf they hang on fails or reboots, every job
    stalls. Servers with two ports on the fabric are spread over a leaf set by the builder; a server with
    one port cannot be. The management (out-of-band) network is left out: single-homing is its norm.
    """

    id = "TOP018"
    severity = Severity.WARNING
    title = "critical servers hang on one leaf"
    rationale = "the leaf is a single point of failure for every node that needs the server"
    fix = "give the servers a second port on the fabric (a dual-port NIC or a second NIC)"
    tags = ("redundancy", "storage")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        plan = ctx.plan
        if plan is None:
            return
        named = {s.server for s in ctx.cluster.blueprint.storage if getattr(s, "server", None)}
        for fabric in ("storage", "compute"):
            if fabric not in ctx.cluster.fabrics:
                continue
            leaves: dict[str, set[str]] = {}
            for link in plan.links_of(fabric):
                if link.layer == "node_leaf":
                    leaves.setdefault(link.a.device, set()).add(link.b.device)
            for pool in ctx.cluster.pools:
                critical = pool.role in ("storage", "management") or any(h in named for h in pool.hostnames)
                if not critical:
                    continue
                hosts = [h for h in pool.hostnames if len(leaves.get(h, ())) == 1]
                if hosts and len(leaves) > 1:
                    leaf = next(iter(leaves[hosts[0]]))
                    yield self.finding(
                        f"{len(hosts)} of {pool.count} `{pool.name}` ({pool.role}) servers have all their "
                        f"{fabric} "
                        f"ports on one leaf (e.g. `{hosts[0]}` on `{leaf}`)",
                        (*pool.source_path, "server"),
                    )
