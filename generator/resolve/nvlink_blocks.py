"""Multi-node NVLink domains as Slurm blocks: which domains there are and which the block topology keeps.

One place for the Slurm emitter (generator/emit/slurm/topology.py, which writes the blocks and picks the
topology plugin), the IMEX group_vars (each domain's node list, under the block's name) and rule SFT008
(which warns when that plugin cannot be topology/block).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Generic, NamedTuple, TypeVar

from generator.resolve.model import ResolvedCluster, ResolvedPool

T = TypeVar("T")


def multi_node_domains(pools: Iterable[ResolvedPool]) -> Iterator[tuple[ResolvedPool, tuple[str, ...]]]:
    """(pool, its nodes) for each NVLink domain that spans nodes (GB200 NVL72: 18 trays of 4 GPUs)."""
    for pool in pools:
        s = pool.server
        if 0 < s.gpus < s.nvlink_domain_gpus:
            for chunk in pool.nvlink_domains:
                yield pool, chunk


def named_domains(pools: Iterable[ResolvedPool]) -> list[tuple[str, ResolvedPool, tuple[str, ...]]]:
    """(name, pool, its nodes) of each multi-node NVLink domain of the Slurm (``gpu`` role) pools, named
    ``nvl01``, ``nvl02``, ... in pool order: the names of Slurm's blocks and of the IMEX domains."""
    found = list(multi_node_domains(p for p in pools if p.role == "gpu"))
    width = max(2, len(str(len(found))))
    return [(f"nvl{i:0{width}d}", pool, chunk) for i, (pool, chunk) in enumerate(found, start=1)]


def base_block_size(sizes: Iterable[int]) -> int:
    """Slurm's base block size for blocks of these sizes: the most common one, the design's unit; ties go to
    the larger (a whole unit beats a partial one). Smaller blocks are left out (Slurm rejects them)."""
    counts = Counter(sizes)
    return max(counts, key=lambda n: (counts[n], n))


class BaseSplit(NamedTuple, Generic[T]):
    base: int  # Slurm's base block size
    keep: list[T]  # the blocks of at least that size, which the block topology writes
    drop: list[T]  # the smaller ones, which Slurm rejects


def split_by_base(blocks: Sequence[T], size: Callable[[T], int]) -> BaseSplit[T]:
    """The blocks the block topology keeps and those it leaves out, by ``base_block_size``: one decision for
    the Slurm files (generator/emit/slurm/topology.py) and rule SFT008 (``nodes_outside_nvlink_blocks``)."""
    base = base_block_size(size(b) for b in blocks)
    return BaseSplit(base, [b for b in blocks if size(b) >= base], [b for b in blocks if size(b) < base])


def nodes_outside_nvlink_blocks(cluster: ResolvedCluster) -> dict[str, tuple[str, ...]]:
    """Slurm (``gpu`` role) pool → its nodes in no NVLink-domain block the block topology keeps, on a cluster
    with multi-node NVLink domains; empty without such domains or when every Slurm node is in a kept block."""
    pools = [p for p in cluster.pools if p.role == "gpu"]
    domains = [d for _, d in multi_node_domains(pools)]
    if not domains:
        return {}
    kept = {h for d in split_by_base(domains, len).keep for h in d}
    outside = {p.name: tuple(h for h in p.hostnames if h not in kept) for p in pools}
    return {name: hosts for name, hosts in outside.items() if hosts}
