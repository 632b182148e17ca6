from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.resolve.nvlink_blocks import nodes_outside_nvlink_blocks
from generator.rules.base import Rule, RuleContext


class SlurmNvlinkBlocksOff(Rule):
    """Slurm's NVLink-domain block scheduling is off: some Slurm nodes are in no whole NVLink domain.

    Multi-node NVLink domains (GB200 NVL72: 18 trays of 4 GPUs) are Slurm blocks (build/slurm/
    topology-block.conf), and ``TopologyPlugin=topology/block`` keeps a job inside one. But the block plugin
    places jobs on block nodes alone (eval_nodes_block.c: "requires nodes which are not in blocks") and only
    warns of the other nodes at start ("blocks lack access to %d nodes", block_record.c; SchedMD/slurm
    src/plugins/topology/block). A GPU pool beside the NVLink pool, or a partial domain (fewer trays than
    a domain holds, below the base block size Slurm accepts), would never run a job. So build/slurm keeps
    topology/tree for the cluster, and NVLink domains are not scheduled as blocks. With Slurm 25.05 or
    newer, topology.yaml can give the domains a partition of their own with ``Topology=block`` (the line is
    in slurm.conf.fragment as a comment).
    """

    id = "SFT008"
    severity = Severity.WARNING
    title = "Slurm NVLink-domain block scheduling is off"
    rationale = "topology/block never schedules a node outside its blocks, so the Slurm files keep the tree."
    fix = (
        "give NVLink-domain pools whole domains and other GPU pools their own Slurm cluster, or run Slurm "
        "25.05+ with topology.yaml and a partition of the domains on Topology=block"
    )
    tags = ("software", "slurm", "nvlink")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        outside = nodes_outside_nvlink_blocks(cluster)
        total = sum(len(hosts) for hosts in outside.values())
        for pool in cluster.pools:
            hosts = outside.get(pool.name)
            if not hosts:
                continue
            per = pool.server.nodes_per_nvlink_domain
            if per > 1:
                why = (
                    f"{len(hosts)} of its {pool.count} {pool.server_id} nodes fill no whole NVLink domain "
                    f"of {per} nodes"
                )
                path = (*pool.source_path, "count")
            else:
                why = f"its {len(hosts)} node(s) have no NVLink domain that spans nodes"
                path = pool.source_path
            yield self.finding(
                f"pool `{pool.name}`: {why}; with them {total} Slurm node(s) are in no block, which "
                "topology/block never schedules, so build/slurm selects topology/tree and NVLink-domain "
                "block scheduling is off",
                path,
            )
