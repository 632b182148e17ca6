from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class NvlinkDomainRack(Rule):
    """A multi-node NVLink domain split across racks.

    Where NVLink leaves the server, the domain is the rack: a GB200 NVL72 rack joins its 18 compute trays
    (72 GPUs) through the rack's NVLink switch trays and spine (catalogue servers.yaml ``gb200-nvl72-tray``,
    18 trays per NVL72 rack). Such a pool is racked one domain a rack by default; a ``nodes_per_rack`` of
    another count places trays of one domain in different racks, which their NVLink cannot reach, and the
    Slurm blocks (``topology/block``) that name the domains no longer match the racks. The rack's power
    must take the whole domain (PWR001 says by how much it does not); PWR008 warns where the plan's scalable
    units rack a domain apart.
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
        for pool in cluster.pools:
            per_domain = pool.server.nodes_per_nvlink_domain
            npr = declared.get(pool.name)
            if per_domain <= 1 or pool.cloud is not None or npr is None or npr == per_domain:
                continue
            why = "domains would be split across racks" if npr % per_domain else "a rack holds one domain"
            yield self.finding(
                f"pool `{pool.name}`: {npr} × {pool.server_id} per rack, but one NVLink domain of "
                f"{pool.server.nvlink_domain_gpus} GPUs is {per_domain} of them in one rack: {why}",
                (*pool.source_path, "placement", "nodes_per_rack"),
                f"nodes_per_rack: {per_domain}, or leave it out",
            )
