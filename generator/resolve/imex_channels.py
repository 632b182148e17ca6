"""Who hands out the IMEX channels of multi-node NVLink domains: Slurm, one channel per job, or the driver's
channel 0 shared by every job.

One answer for the Slurm fragment (generator/emit/slurm/imex.py: SwitchType), the nvidia_imex role's
variables (generator/emit/ansible/group_vars.py: nvidia_imex_create_channel0) and rule SLM001 (which warns
when jobs share channel 0 without the blueprint asking for it). The facts are catalog:software.imex
.slurm_switch's (the plugin and the first Slurm release whose plugin isolates jobs, with their sources).
"""

from __future__ import annotations

from typing import Literal

from blueprints.catalog.schema import SlurmImexSwitch
from generator.resolve.model import ResolvedCluster, ResolvedPool
from generator.resolve.nvlink_blocks import named_domains
from generator.resolve.software import version_key

# slurm: Slurm gives each job its own channel; asked: channel 0 for all, as software.imex_channels says;
# unconfigured: channel 0 for all because Slurm's release is unknown, older than the plugin, or the
# catalogue records no plugin (SLM001)
ChannelMode = Literal["slurm", "asked", "unconfigured"]


def imex_pools(cluster: ResolvedCluster) -> list[ResolvedPool]:
    """The Slurm pools whose NVLink domain spans nodes, in pool order: where the nvidia_imex role runs."""
    seen: dict[str, ResolvedPool] = {}
    for _, pool, _ in named_domains(cluster.pools):
        seen.setdefault(pool.name, pool)
    return list(seen.values())


def slurm_switch(cluster: ResolvedCluster) -> SlurmImexSwitch | None:
    compat = cluster.catalog.software
    return compat.imex.slurm_switch if compat is not None and compat.imex is not None else None


def channel_mode(cluster: ResolvedCluster) -> ChannelMode | None:
    """How this cluster's jobs get IMEX channels; None where no NVLink domain spans nodes (no IMEX)."""
    if not imex_pools(cluster):
        return None
    sw = cluster.software
    if sw.imex_channels == "shared":
        return "asked"
    switch = slurm_switch(cluster)
    if switch is None or sw.slurm is None or version_key(sw.slurm) < version_key(switch.since):
        return "unconfigured"
    return "slurm"
