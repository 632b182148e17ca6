"""The Slurm partitions suggested in slurm.conf.fragment: one per group of compute pools that can run one job.

One partition over every node let a job span pools that cannot run it together:

* InfiniBand tenants: a pool that the subnet manager's partitions name is pinned to its home partition's
  P_Key and is a limited member of Default, and limited members cannot talk to each other (IBA vol. 1,
  10.9.1; ``subnet_manager._default_partition``), so NCCL on two tenants' nodes has no P_Key both can use
  (``nccl.tenant_partition``);
* GPU vendors: NVIDIA's NCCL and AMD's RCCL are separate libraries, so one job's collectives cannot span
  both; GPU models: a data-parallel step runs at the pace of its slowest GPU.

So the pools are grouped by (home partition, catalogue GPU model), and a partition is written per group;
a single ``batch`` partition stays when every pool is in one group.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from generator.plan.subnet_manager import home_partition
from generator.resolve import ResolvedCluster, ResolvedPool

FABRIC = "compute"
SINGLE = "batch"
# slurm.conf(5), PartitionName: "If the PartitionName is "DEFAULT", the values specified with that record
# will apply to subsequent partition specifications"; a tenant so named must not become that record
RESERVED = frozenset({"default"})


@dataclass(frozen=True)
class SlurmPartition:
    name: str
    nodes: tuple[str, ...]  # inventory order
    comment: str = ""


@dataclass(frozen=True)
class _Group:
    key: str  # which tenant: the home partition (or the pool, a limited member everywhere); "" for none
    tenant: str  # the home partition's name ("" for pools that stay full members of Default)
    gpu: str  # catalogue GPU id ("" without one)
    pools: tuple[ResolvedPool, ...]


def _tenant(cluster: ResolvedCluster, pool: ResolvedPool) -> tuple[str, str]:
    """(key, name) of the InfiniBand partition the pool's compute traffic is pinned to; ("", "") for a
    pool that no pool partition names (a full member of Default, where all such pools meet)."""
    fabric = cluster.fabrics.get(FABRIC)
    if fabric is None or fabric.kind != "infiniband" or cluster.is_cloud:
        return "", ""
    sm = fabric.spec.subnet_manager
    if sm is None or not any(pool.name in part.pools for part in sm.partitions):
        return "", ""
    home = home_partition(sm, pool.name)
    if home is None:  # a limited member everywhere (NET020 warns): it meets no other pool
        return f"pool:{pool.name}", pool.name
    return f"partition:{home[0]}", home[1].name


def _groups(cluster: ResolvedCluster, pools: tuple[ResolvedPool, ...]) -> list[_Group]:
    keyed: dict[tuple[str, str], list[ResolvedPool]] = {}
    names: dict[tuple[str, str], str] = {}
    for pool in pools:
        key, name = _tenant(cluster, pool)
        group = (key, pool.gpu_id or "")
        keyed.setdefault(group, []).append(pool)
        names[group] = name
    return [_Group(k[0], names[k], k[1], tuple(v)) for k, v in keyed.items()]


def _free(taken: set[str]) -> Callable[[str], str]:
    def free(name: str) -> str:
        while name.lower() in taken or name.lower() in RESERVED:
            name = f"slurm-{name}"
        taken.add(name.lower())
        return name

    return free


def _comment(g: _Group, by_tenant: bool) -> str:
    names = ", ".join(p.name for p in g.pools)
    gpu = g.pools[0].gpu
    text = f"pool{'s' if len(g.pools) > 1 else ''} {names}: "
    text += f"{gpu.vendor.upper()} {g.gpu}" if gpu is not None else "no GPU model"
    if by_tenant:
        text += f", InfiniBand partition `{g.tenant}`" if g.tenant else ", no tenant partition"
    return text


def free_partition_name(name: str, partitions: tuple[SlurmPartition, ...]) -> str:
    """``name``, or ``slurm-<name>`` ... where a partition above (or Slurm's DEFAULT record) has it."""
    return _free({p.name.lower() for p in partitions})(name)


class Partitions(NamedTuple):
    partitions: tuple[SlurmPartition, ...]
    notes: tuple[str, ...]  # why the pools are in several partitions (comment lines)


def _notes(groups: list[_Group]) -> tuple[str, ...]:
    vendors = {p.gpu.vendor for g in groups for p in g.pools if p.gpu is not None}
    lines = ["One partition per group of pools that can run one job (no Default=YES: a job names its -p):"]
    if len({g.key for g in groups}) > 1:
        lines.append(
            "- InfiniBand tenants are pinned to their own P_Key and are limited members of Default, where "
            "limited members cannot reach each other;"
        )
    if len(vendors) > 1:
        lines.append("- NCCL (NVIDIA) and RCCL (AMD) cannot join one job's collectives;")
    if len({g.gpu for g in groups}) > len(vendors):
        lines.append("- a job across GPU models runs at the pace of its slowest GPU.")
    return tuple(lines)


def slurm_partitions(cluster: ResolvedCluster, pools: tuple[ResolvedPool, ...]) -> Partitions:
    """``batch`` over every node when the pools can run one job together, else one partition per group,
    named by what sets the groups apart (tenant, GPU model or both)."""
    groups = _groups(cluster, pools)
    if len(groups) <= 1:
        nodes = tuple(h for p in pools for h in p.hostnames)
        return Partitions((SlurmPartition(SINGLE, nodes),) if nodes else (), ())
    by_tenant = len({g.key for g in groups}) > 1
    by_gpu = len({g.gpu for g in groups}) > 1
    free = _free(set())
    out: list[SlurmPartition] = []
    for g in groups:
        parts = ([g.tenant or "shared"] if by_tenant else []) + ([g.gpu or "nogpu"] if by_gpu else [])
        nodes = tuple(h for p in g.pools for h in p.hostnames)
        out.append(SlurmPartition(free("-".join(parts)), nodes, _comment(g, by_tenant)))
    return Partitions(tuple(out), _notes(groups))
