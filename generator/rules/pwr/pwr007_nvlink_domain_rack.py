from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext

if TYPE_CHECKING:
    from generator.plan.model import Plan
    from generator.resolve.model import ResolvedPool


class NvlinkDomainRack(Rule):
    """A multi-node NVLink domain split across racks.

    Where NVLink leaves the server, the domain is the rack: a GB200 NVL72 rack joins its 18 compute trays
    (72 GPUs) through the rack's NVLink switch trays and spine (catalogue servers.yaml ``gb200-nvl72-tray``,
    18 trays per NVL72 rack). Such a pool is racked one domain a rack by default; a ``nodes_per_rack`` of
    another count places trays of one domain in different racks, which their NVLink cannot reach, and the
    Slurm blocks (``topology/block``) that name the domains no longer match the racks. The rack's power
    must take the whole domain (PWR001 says by how much it does not).
    """

    id = "PWR007"
    severity = Severity.ERROR
    title = "NVLink domain split across racks"
    rationale = "A rack-scale NVLink domain exists only inside its rack: trays racked elsewhere are cut off."
    fix = "leave placement.nodes_per_rack out (one NVLink domain a rack) or set it to the domain's node count"
    tags = ("rack", "nvlink")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        if cluster.is_cloud:
            return
        declared = {p.name: p.placement.nodes_per_rack for p in cluster.blueprint.pools}
        split: list[ResolvedPool] = []
        for pool in cluster.pools:
            per_domain = pool.server.nodes_per_nvlink_domain
            if per_domain <= 1 or pool.cloud is not None:
                continue
            npr = declared.get(pool.name)
            if npr is None or npr == per_domain:
                split.append(pool)
                continue
            why = "domains would be split across racks" if npr % per_domain else "a rack holds one domain"
            yield self.finding(
                f"pool `{pool.name}`: {npr} × {pool.server_id} per rack, but one NVLink domain of "
                f"{pool.server.nvlink_domain_gpus} GPUs is {per_domain} of them in one rack: {why}",
                (*pool.source_path, "placement", "nodes_per_rack"),
                f"nodes_per_rack: {per_domain}, or leave it out",
            )
        plan = ctx.plan if split else None
        if plan is None:  # nothing to hold, or no plan (PLN001 says why)
            return
        for pool in split:
            yield from self._racked_apart(pool, plan)

    def _racked_apart(self, pool: ResolvedPool, plan: Plan) -> Iterator[Finding]:
        """The first domain whose nodes the plan puts in more than one rack (a scalable unit that is no
        whole number of domains starts a new rack part-way through one)."""
        by_name = plan.device_by_name
        for hosts in pool.nvlink_domains:
            racks = sorted({by_name[h].rack or "" for h in hosts if h in by_name})
            if len(racks) > 1:
                yield self.finding(
                    f"pool `{pool.name}`: the NVLink domain of {hosts[0]}..{hosts[-1]} ({len(hosts)} nodes) "
                    f"is racked in {len(racks)} racks ({', '.join(racks[:4])})",
                    pool.source_path,
                    f"make the compute fabric's scalable_unit a multiple of {len(hosts)} nodes, so no unit "
                    "ends inside a domain",
                )
                return
