"""slurm.conf lines for the IMEX channels of multi-node NVLink domains (GB200 NVL72).

CUDA shares memory across the trays of a domain only through an IMEX channel both processes can open
(NVIDIA IMEX guide, "IMEX Channels"). With ``SwitchType=switch/nvidia_imex`` slurmctld gives each job the
first free channel and keeps channel 0 for none, and each step sees only its own channel
(SchedMD/slurm src/plugins/switch/nvidia_imex); the release and sources are catalog:software.imex
.slurm_switch's. Which mode applies is generator/resolve/imex_channels.channel_mode.
"""

from __future__ import annotations

from generator.resolve import ResolvedCluster
from generator.resolve.imex_channels import channel_mode, slurm_switch


def switch_lines(cluster: ResolvedCluster) -> list[str]:
    """SwitchType for Slurm's IMEX plugin, or a comment saying jobs share channel 0; nothing without IMEX."""
    mode = channel_mode(cluster)
    switch = slurm_switch(cluster)
    if mode is None:
        return []
    if mode == "slurm" and switch is not None:
        return [
            f"# IMEX: one channel per job, Slurm {cluster.software.slurm} >= {switch.since} "
            "[catalog:software.imex.slurm_switch];",
            # both SwitchParameters keys keep their defaults: imex_channel_count=2048 is the driver's own
            # channel count (nv-reg.h NVreg_ImexChannelCount), and without imex_dev_major each slurmd reads
            # its node's major from /proc/devices, which "can differ between nodes" (IMEX guide)
            "# SwitchParameters imex_channel_count (2048) and imex_dev_major (from /proc/devices) keep "
            "their defaults.",
            f"SwitchType={switch.switch_type}",
        ]
    if mode == "asked":
        return ["# IMEX: every job shares channel 0 (software.imex_channels: shared); no switch plugin."]
    since = f"Slurm {switch.switch_type} from {switch.since}" if switch is not None else "no known plugin"
    release = f"Slurm {cluster.software.slurm}" if cluster.software.slurm else "software.slurm unset"
    return [f"# IMEX: every job shares channel 0 ({release}; {since}; validate: SLM001)."]
