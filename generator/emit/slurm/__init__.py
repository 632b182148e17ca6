"""Slurm outputs (``build/slurm/``): topology.conf (tree), topology-block.conf (block), topology.yaml
(both, Slurm >= 25.05) and a slurm.conf fragment with the NodeName lines (and the platform's job
prolog/epilog, ``prolog.py``; the IMEX switch plugin of multi-node NVLink domains, ``imex.py``).

Node names are the inventory hostnames (``ResolvedPool.hostnames``) of the compute (``gpu`` role) pools;
the switch tree and the blocks are read from the plan's compute fabric (see ``topology.py``).
"""

from __future__ import annotations

from pathlib import Path

from generator.emit._registry import BuildContext, Emitter
from generator.emit.slurm.hostlist import HostlistError, compress, expand
from generator.emit.slurm.imex import switch_lines
from generator.emit.slurm.prolog import job_script_lines
from generator.emit.slurm.render import slurm_conf_fragment, topology_block_conf, topology_conf, topology_yaml
from generator.emit.slurm.topology import SlurmTopology, slurm_pools, slurm_topology
from generator.fsutil import atomic_write_text
from generator.plan.model import Plan
from generator.resolve import ResolvedCluster

NAME = "slurm"

__all__ = [
    "NAME",
    "HostlistError",
    "SlurmTopology",
    "applies",
    "compress",
    "emit",
    "expand",
    "render",
    "slurm_topology",
]


def applies(cluster: ResolvedCluster) -> bool:
    """Slurm schedules the compute pools; a cluster without one has nothing to schedule."""
    return bool(slurm_pools(cluster))


def render(cluster: ResolvedCluster, plan: Plan) -> dict[str, str]:
    """File name → text (what ``emit`` writes)."""
    topo = slurm_topology(cluster, plan)
    files = {
        "topology.conf": topology_conf(topo),
        "topology.yaml": topology_yaml(topo),
        "slurm.conf.fragment": slurm_conf_fragment(topo, job_script_lines(cluster), switch_lines(cluster)),
    }
    if topo.blocks:
        files["topology-block.conf"] = topology_block_conf(topo)
    return dict(sorted(files.items()))


def emit(cluster: ResolvedCluster, plan: Plan, out: Path) -> None:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for name, text in render(cluster, plan).items():
        atomic_write_text(out / name, text)


class SlurmEmitter(Emitter):
    name = NAME
    order = 50

    def applies(self, cluster: ResolvedCluster) -> bool:
        return applies(cluster)

    def emit(self, ctx: BuildContext) -> None:
        emit(ctx.cluster, ctx.plan, ctx.out)
