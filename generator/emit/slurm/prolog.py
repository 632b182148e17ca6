"""The job prolog / epilog a platform's vendor runs under Slurm (catalog:platforms.<id>.plugin.job_script),
e.g. slurm-gcp's receive-data-path-manager-mega, which GCP A3 Mega needs per multi-node job for TCPXO.

slurm.conf's Prolog= and Epilog= run on every node of every job; the vendor's Slurm cluster (Google's
Cluster Toolkit) limits the script to its A3 Mega partition through slurm-gcp's own multiplexer. Here the
nccl role installs the script on the platform's nodes only, so the settings are written when every Slurm
node is of that platform; a cluster that mixes it with other nodes gets a comment saying why not.
"""

from __future__ import annotations

from dataclasses import dataclass

from blueprints.catalog.schema import JobScript
from generator.emit.slurm.topology import slurm_pools
from generator.platform.ports import platform_of
from generator.resolve import ResolvedCluster


@dataclass(frozen=True)
class PoolJobScript:
    pool: str
    platform: str  # catalogue platform id (the pool's server)
    script: JobScript


def pool_job_scripts(cluster: ResolvedCluster) -> tuple[PoolJobScript, ...]:
    """The Slurm pools whose platform publishes a job prolog/epilog, in blueprint order."""
    found = []
    for pool in slurm_pools(cluster):
        platform = platform_of(cluster.catalog, pool.server_id)
        plugin = platform.plugin if platform is not None else None
        if plugin is not None and plugin.job_script is not None:
            found.append(PoolJobScript(pool.name, pool.server_id, plugin.job_script))
    return tuple(found)


def job_script_lines(cluster: ResolvedCluster) -> list[str]:
    """slurm.conf lines (settings with their comments) for the platform's job prolog/epilog, or []."""
    scripts = pool_job_scripts(cluster)
    if not scripts:
        return []
    pools = slurm_pools(cluster)
    first = scripts[0]
    if len(scripts) < len(pools) or any(s.script != first.script for s in scripts):
        return _not_set(scripts, [p.name for p in pools])
    js = first.script
    lines = [
        f"# {first.platform} job prolog and epilog (every Slurm node is one): the vendor's script, from",
        f"# {js.url}",
        f"# installed at {js.path} by the nccl role; slurmd sets SLURM_SCRIPT_CONTEXT (prolog_slurmd /",
        "# epilog_slurmd), which the script reads. The settings after it are the vendor's for a long prolog",
        f"# (catalog platforms.{first.platform}.plugin.job_script: {js.source}).",
        f"Prolog={js.path}",
        f"Epilog={js.path}",
    ]
    lines.extend(f"{s.name}={s.value}" for s in js.slurm_conf)
    return lines


def _not_set(scripts: tuple[PoolJobScript, ...], pools: list[str]) -> list[str]:
    need = ", ".join(f"{s.pool} ({s.platform})" for s in scripts)
    paths = ", ".join(sorted({s.script.path for s in scripts}))
    others = ", ".join(p for p in pools if p not in {s.pool for s in scripts})
    lacking = f"the other pools ({others}) lack it" if others else "those pools' scripts differ"
    return [
        f"# No Prolog=/Epilog=: pool(s) {need} need their vendor's job prolog/epilog",
        f"# ({paths}), but slurm.conf runs Prolog= on every node and {lacking}.",
        "# Run it from a wrapper that calls it only for those nodes' partition (as slurm-gcp's slurm_mux",
        "# does), or give those pools a Slurm cluster of their own.",
    ]
