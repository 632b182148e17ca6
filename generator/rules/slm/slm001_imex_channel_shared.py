from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.resolve.imex_channels import channel_mode, imex_pools, slurm_switch
from generator.rules.base import Rule, RuleContext


class ImexChannelShared(Rule):
    """Every Slurm job shares IMEX channel 0 of its multi-node NVLink domain.

    CUDA processes share GPU memory across the trays of an NVLink domain (GB200 NVL72) only through an IMEX
    channel both can open; channels are how the driver isolates users ("IMEX Channels", NVIDIA IMEX guide).
    Slurm's ``SwitchType=switch/nvidia_imex`` gives each job its own channel, and from Slurm 24.05.2 on
    (24.05.2 fixes its channel access, CVE-2024-42511; SchedMD/slurm NEWS) the build configures it. For an
    older or unknown Slurm release (``software.slurm``) the nvidia_imex role keeps the driver's channel 0
    (``NVreg_CreateImexChannel0``), which NVIDIA's nv-reg.h advises "only in trusted environments where it
    is acceptable for applications to share the same IMEX channel": any job can then import the memory
    another job exports. A single-tenant site says so with ``software.imex_channels: shared``.
    """

    id = "SLM001"
    severity = Severity.WARNING
    title = "Slurm jobs share IMEX channel 0"
    rationale = "Without Slurm's IMEX plugin every job can import the GPU memory other jobs export."
    fix = (
        "set software.slurm to the cluster's Slurm release (24.05.2 or newer configures a channel per job), "
        "or software.imex_channels: shared for a trusted single-tenant cluster"
    )
    tags = ("software", "slurm", "imex", "nvlink", "security")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        if channel_mode(cluster) != "unconfigured":
            return
        pools = imex_pools(cluster)
        switch = slurm_switch(cluster)
        release = cluster.software.slurm
        if switch is None:
            why = "the catalogue records no Slurm plugin for IMEX channels"
        elif release is None:
            why = f"software.slurm is not set, and Slurm's {switch.switch_type} needs {switch.since} or newer"
        else:
            why = (
                f"Slurm {release} is older than {switch.since}, the first release whose "
                f"{switch.switch_type} isolates jobs"
            )
        yield self.finding(
            f"{'pool' if len(pools) == 1 else 'pools'} {', '.join(f'`{p.name}`' for p in pools)}: NVLink "
            "domains span nodes and every job gets "
            f"IMEX channel 0, so any job can import another job's exported GPU memory: {why}",
            ("software", "slurm") if release is not None else pools[0].source_path,
        )
