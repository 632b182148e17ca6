"""What Slurm should know about the fabric, read from the plan: a switch tree, blocks and node groups.

Tree (topology/tree). Slurm wants each node under one leaf and a tree with a single top, and its
topology guide advises listing leaves plus one top rather than every physical spine. So:

* rail-optimised fat-tree: the eight (``rails``) leaves of a scalable unit carry the same nodes, one
  NIC each, so the SU is Slurm's leaf (``su<S>``); 2 tiers: every leaf reaches every spine, so one top
  (``spines``); 3 tiers: one switch per pod (``pod<P>``, the pod's spines) under one top (``cores``);
* other fat-trees and leaf/spines: each physical leaf is a Slurm leaf (a node whose ports span leaves
  goes under the one holding most of them), spines/cores as above;
* dragonfly: routers are leaves, one switch per group (``group<G>``), one top (``global``);
* switched torus/hypercube: each vertex switch is a leaf under one top (Slurm has no notion of a torus;
  the top only says every vertex is reachable); direct torus/hypercube or no compute fabric: flat.

Blocks (topology/block): NVLink domains that span nodes (GB200 NVL72: 72 GPUs / 4 per tray = 18 nodes),
else the fabric's natural unit: scalable units, dragonfly groups, leaves. Slurm refuses a block with
fewer nodes than the base block size (block_record.c: "children count lower than bblock_node_cnt"), so
under-sized blocks (a partial last SU) are left out and named in a comment.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from generator.emit.slurm.hostlist import compress, natural_key
from generator.emit.slurm.partitions import SlurmPartition, free_partition_name, slurm_partitions
from generator.plan.model import Device, Plan
from generator.resolve import ResolvedCluster, ResolvedPool
from generator.resolve.nvlink_blocks import named_domains, split_by_base

FABRIC = "compute"
MAX_BLOCK_LEVEL = 15  # Slurm: at most 2^15 base blocks in one aggregated block (block_record.c)
UNATTACHED = "unattached"  # the pseudo-switch's name unless a site switch has it (then `_free_name`'s)


@dataclass(frozen=True)
class TreeSwitch:
    name: str
    nodes: tuple[str, ...] = ()
    switches: tuple[str, ...] = ()
    comment: str = ""
    # what the plan says the switch is, never read from its name (a site may call a leaf `unattached`):
    # "leaf" (a physical leaf, router or vertex switch), "unit" (a scalable unit of rail leaves),
    # "unattached" (nodes without a compute port), "" (a switch above the leaves)
    role: str = ""


@dataclass(frozen=True)
class Block:
    name: str
    nodes: tuple[str, ...]
    comment: str = ""


@dataclass(frozen=True)
class NodeGroup:
    """Nodes that share one slurm.conf NodeName line."""

    pool: str
    nodes: tuple[str, ...]
    gpus: int
    features: tuple[str, ...]
    vendor: str = ""  # catalogue GPU vendor (nvidia | amd), "" without GPUs


@dataclass(frozen=True)
class SlurmTopology:
    cluster: str
    fabric: str  # "fat-tree, 2 tiers, rail-optimised" ... or "none"
    tree: tuple[TreeSwitch, ...]  # leaves first, top last; empty when flat
    flat_reason: str  # why the tree is flat ("" when it is not)
    tree_notes: tuple[str, ...]
    blocks: tuple[Block, ...]
    block_sizes: tuple[int, ...]
    block_basis: str  # "scalable unit", "NVLink domain", ...
    left_out: tuple[Block, ...]  # blocks below the base size
    block_notes: tuple[str, ...]
    plugin: str  # topology/tree | topology/block | topology/flat
    dragonfly: bool
    node_groups: tuple[NodeGroup, ...]
    nodes: tuple[str, ...] = field(default=())  # every Slurm node, inventory order
    outside_blocks: tuple[str, ...] = field(default=())  # Slurm nodes in no block kept (inventory order)
    partitions: tuple[SlurmPartition, ...] = field(default=())  # suggested; see partitions.py
    partition_notes: tuple[str, ...] = field(default=())  # why there are several
    block_partition: str = "nvlink"  # the suggested Topology=block partition's name (Slurm 25.05+)

    @property
    def is_flat(self) -> bool:
        return not self.tree


def slurm_pools(cluster: ResolvedCluster) -> tuple[ResolvedPool, ...]:
    """Pools whose nodes run slurmd: the compute (``gpu`` role) pools."""
    return tuple(p for p in cluster.pools if p.role == "gpu")


def _unit_of(d: Device, kind: str) -> int | None:
    """The scalable unit whose rail leaves Slurm sees as one leaf, from the plan (``su`` and ``rail``), never
    from the switch's name: a site may call a leaf `su-a1` or `sup1`."""
    if kind in ("fat-tree", "leaf-spine") and d.su is not None and d.rail is not None:
        return d.su
    return None


def _leaf_key(d: Device, kind: str) -> str:
    su = _unit_of(d, kind)
    return d.name if su is None else f"su{su}"


def _fabric_text(plan: Plan, kind: str, switches: list[Device]) -> str:
    if kind == "none":
        return "none"
    tiers = Counter(d.role for d in switches)
    parts = [kind]
    if kind in ("fat-tree", "leaf-spine"):
        n_tiers = 1 + ("spine" in tiers) + ("core" in tiers)
        parts.append(f"{n_tiers} tier{'s' if n_tiers > 1 else ''}")
        if any(d.rail is not None for d in switches):
            parts.append("rail-optimised")
    plural = {"leaf": "leaves", "switch": "switches"}
    parts.append(
        ", ".join(f"{n} {t if n == 1 else plural.get(t, t + 's')}" for t, n in sorted(tiers.items()))
        or "no switches"
    )
    return ", ".join(parts)


def _ranges(names: list[str]) -> str:
    """A hostlist for a comment; names that differ mid-name (c-core-g1-01 …) are abbreviated."""
    if not names:
        return "-"
    text = compress(names)
    return text if len(text) <= 90 else f"{len(names)} switches {names[0]} … {names[-1]}"


def _plural(n: int, what: str) -> str:
    if n == 1:
        return f"1 {what}"
    return f"{n} " + (what[:-2] + "ches" if what.endswith("ch") else what + "s")


class _LeafPorts(NamedTuple):
    """Which Slurm leaves each compute node has compute-fabric ports on."""

    ports: dict[str, Counter[str]]  # node → Slurm leaf → ports
    members: dict[str, list[str]]  # Slurm leaf → its physical switches
    units: set[str]  # the Slurm leaves that are scalable units of rail leaves (from the plan)


class _LeafAssignment(NamedTuple):
    """Each compute node under one Slurm leaf. Nodes without a compute port are kept apart from the leaves,
    not under a leaf key: a site leaf named `unattached` merged with them into one switch."""

    leaf_of: dict[str, str]  # node → Slurm leaf (nodes with a port)
    nodes_under: dict[str, list[str]]  # Slurm leaf → nodes, inventory order
    leaves: list[str]  # Slurm leaves in natural order
    split: list[str]  # nodes with ports on several leaves
    unattached: list[str]  # nodes with no compute-fabric port, inventory order


@dataclass(frozen=True)
class _Tree:
    switches: list[TreeSwitch]  # leaves first, top last; empty when flat
    flat_reason: str
    notes: list[str]
    leaf_of: dict[str, str]  # node → Slurm leaf


def _leaf_ports(plan: Plan, kind: str, slurm_nodes: list[str]) -> _LeafPorts:
    devices = plan.device_by_name
    wanted = set(slurm_nodes)
    ports: dict[str, Counter[str]] = defaultdict(Counter)
    members: dict[str, list[str]] = defaultdict(list)
    units: set[str] = set()
    for link in plan.links_of(FABRIC):
        for here, there in ((link.a, link.b), (link.b, link.a)):
            if here.device in wanted:
                sw = devices[there.device]
                if sw.kind == "switch":
                    key = _leaf_key(sw, kind)
                    ports[here.device][key] += 1
                    if sw.name not in members[key]:
                        members[key].append(sw.name)
                    if _unit_of(sw, kind) is not None:
                        units.add(key)
    return _LeafPorts(ports, members, units)


def _flat_reason(kind: str) -> str:
    if kind in ("torus", "hypercube"):
        return "the compute fabric is a directly cabled " + kind
    return "the cluster has no switched compute fabric in the plan"


def _assign_leaves(ports: dict[str, Counter[str]], slurm_nodes: list[str]) -> _LeafAssignment:
    order = {n: i for i, n in enumerate(slurm_nodes)}
    leaf_of: dict[str, str] = {}
    for node, c in ports.items():
        best = max(c.values())
        # ties: the leaf that comes first in natural order (stable, independent of link order)
        leaf_of[node] = min((k for k, v in c.items() if v == best), key=natural_key)
    split = sorted((n for n, c in ports.items() if len(c) > 1), key=order.__getitem__)
    nodes_under: dict[str, list[str]] = defaultdict(list)
    unattached: list[str] = []
    for node in slurm_nodes:
        leaf = leaf_of.get(node)
        (unattached if leaf is None else nodes_under[leaf]).append(node)
    leaves = sorted(nodes_under, key=natural_key)
    return _LeafAssignment(leaf_of, nodes_under, leaves, split, unattached)


def _leaf_switches(a: _LeafAssignment, ports: _LeafPorts, unattached: str) -> list[TreeSwitch]:
    """The Slurm leaves (an SU of rail leaves gets a comment naming them), then the unattached nodes under
    the pseudo-switch ``unattached`` (its name)."""
    out: list[TreeSwitch] = []
    for key in a.leaves:
        if key in ports.units:
            comment = f"{key} = rail leaves {compress(ports.members[key])}"
            out.append(TreeSwitch(key, tuple(a.nodes_under[key]), comment=comment, role="unit"))
        else:
            out.append(TreeSwitch(key, tuple(a.nodes_under[key]), role="leaf"))
    if a.unattached:
        out.append(
            TreeSwitch(
                unattached,
                tuple(a.unattached),
                comment="compute nodes without a port on the compute fabric (Slurm needs every node "
                "under a switch)",
                role="unattached",
            )
        )
    return out


def _tree_notes(a: _LeafAssignment) -> list[str]:
    notes: list[str] = []
    if a.split:
        notes.append(
            f"{len(a.split)} node(s) have ports on several leaves and are listed under the leaf holding "
            f"most of them: {compress(a.split)}"
        )
    if a.unattached:
        notes.append(f"{len(a.unattached)} compute node(s) have no compute-fabric port")
    return notes


def _pod_switches(
    plan: Plan,
    a: _LeafAssignment,
    members: dict[str, list[str]],
    by_tier: dict[str, list[str]],
    free: Callable[[str], str],
    extra: list[str],
) -> list[TreeSwitch]:
    """3-tier fat-tree: one switch per pod (its spines) over the pod's leaves, all under ``cores`` (with
    ``extra``: the unattached pseudo-switch, if any)."""
    devices = plan.device_by_name
    pod_of_leaf: dict[str, int] = {}
    for key in a.leaves:
        pods = [pod for m in members[key] if (pod := devices[m].pod) is not None]
        pod_of_leaf[key] = min(pods) if pods else 0
    out: list[TreeSwitch] = []
    for p in sorted(set(pod_of_leaf.values())):
        spines = [n for n in by_tier.get("spine", []) if devices[n].pod == p]
        pod_name = free(f"pod{p}")
        out.append(
            TreeSwitch(
                pod_name,
                switches=tuple(k for k in a.leaves if pod_of_leaf[k] == p),
                comment=f"{pod_name} = pod spines {_ranges(spines)}",
            )
        )
    children = [s.name for s in out] + extra
    cores = free("cores")
    top = TreeSwitch(
        cores,
        switches=tuple(children),
        comment=f"{cores} = {_ranges(by_tier['core'])} (spine j of every pod joins core group j)",
    )
    return [*out, top]


def _dragonfly_groups(
    plan: Plan, a: _LeafAssignment, free: Callable[[str], str], extra: list[str]
) -> list[TreeSwitch]:
    """Dragonfly: one switch per group over its routers, all under ``global`` (with ``extra``)."""
    devices = plan.device_by_name
    groups: dict[int, list[str]] = defaultdict(list)
    for key in a.leaves:
        groups[devices[key].su or 0].append(key)
    out = [
        TreeSwitch(
            free(f"group{g}"),
            switches=tuple(groups[g]),
            comment=f"dragonfly group {g}: routers linked all-to-all",
        )
        for g in sorted(groups)
    ]
    children = [s.name for s in out] + extra
    return [
        *out,
        TreeSwitch(free("global"), switches=tuple(children), comment="global links join every group"),
    ]


def _upper_switches(
    plan: Plan,
    kind: str,
    a: _LeafAssignment,
    members: dict[str, list[str]],
    tops: list[TreeSwitch],
    free: Callable[[str], str],
) -> list[TreeSwitch]:
    """The switches above the Slurm leaves (``tops``: the leaves and the unattached group), by fabric kind."""
    by_tier: dict[str, list[str]] = defaultdict(list)
    for d in plan.switches(FABRIC):
        by_tier[d.role].append(d.name)
    extra = [s.name for s in tops if s.role == "unattached"]
    names = [s.name for s in tops]
    tiered = kind in ("fat-tree", "leaf-spine")
    if tiered and by_tier.get("core"):
        return _pod_switches(plan, a, members, by_tier, free, extra)
    if tiered and by_tier.get("spine"):
        spines = free("spines")
        comment = f"{spines} = {_ranges(by_tier['spine'])} (every leaf links to every spine)"
        return [TreeSwitch(spines, switches=tuple(names), comment=comment)]
    if kind == "dragonfly":
        return _dragonfly_groups(plan, a, free, extra)
    if len(names) > 1 and kind in ("torus", "hypercube"):
        comment = (
            f"the {kind} links every vertex switch; Slurm's tree cannot express the "
            "rings, so one top stands for the whole fabric"
        )
        return [TreeSwitch(free(kind), switches=tuple(names), comment=comment)]
    if len(names) > 1:
        return [TreeSwitch(free("top"), switches=tuple(names), comment="joins the leaves into one tree")]
    return []


def _tree(plan: Plan, kind: str, slurm_nodes: list[str]) -> _Tree:
    leaf_ports = _leaf_ports(plan, kind, slurm_nodes)
    if not leaf_ports.ports:
        return _Tree([], _flat_reason(kind), [], {})
    assignment = _assign_leaves(leaf_ports.ports, slurm_nodes)
    free = _free_name(set(plan.device_by_name) | set(assignment.leaves))
    leaves = _leaf_switches(assignment, leaf_ports, free(UNATTACHED))
    upper = _upper_switches(plan, kind, assignment, leaf_ports.members, leaves, free)
    return _Tree([*leaves, *upper], "", _tree_notes(assignment), assignment.leaf_of)


def _free_name(taken: set[str]) -> Callable[[str], str]:
    """Names for the switches above the leaves that topology.conf makes up (``spines``, ``cores``,
    ``pod1``, ``global``, ...), away from every plan device and Slurm leaf: a site's leaf named ``spines``
    gave two SwitchName=spines records, and slurmctld stopped ("Switch (spines) has already been
    defined")."""

    def free(name: str) -> str:
        while name in taken:
            name = f"slurm-{name}"
        return name

    return free


def _nvlink_domains(pools: tuple[ResolvedPool, ...]) -> list[Block]:
    return [
        Block(
            name,
            chunk,
            f"NVLink domain of {s.nvlink_domain_gpus} GPUs ({s.nodes_per_nvlink_domain} x "
            f"{s.gpus}-GPU {pool.server_id} nodes of pool {pool.name})",
        )
        for name, pool, chunk in named_domains(pools)
        for s in (pool.server,)
    ]


def block_sizes(base: int, blocks: int) -> tuple[int, ...]:
    """Base size, then base x 2^k while 2^k base blocks exist (Slurm stops at the first level that holds
    every block and accepts at most 2^15 blocks per level)."""
    out = [base]
    k = 1
    while (1 << k) <= blocks and k <= MAX_BLOCK_LEVEL:
        out.append(base << k)
        k += 1
    return tuple(out)


class _RawBlocks(NamedTuple):
    blocks: list[Block]
    basis: str  # "scalable unit", "NVLink domain", ... ("" when there are no blocks)


@dataclass(frozen=True)
class _Blocks:
    blocks: list[Block]  # at least the base size
    left_out: list[Block]  # below the base size
    sizes: tuple[int, ...]
    basis: str
    notes: list[str]


def _fabric_blocks(plan: Plan, kind: str, tree: list[TreeSwitch]) -> _RawBlocks:
    leaves = [s for s in tree if s.role in ("leaf", "unit")]
    if kind == "dragonfly":
        devices = plan.device_by_name
        groups: dict[int, list[str]] = defaultdict(list)
        for s in leaves:
            groups[devices[s.name].su or 0].extend(s.nodes)
        return _RawBlocks(
            [Block(f"group{g}", tuple(n), f"dragonfly group {g}") for g, n in sorted(groups.items())],
            "dragonfly group",
        )
    if leaves and all(s.role == "unit" for s in leaves):
        return _RawBlocks([Block(s.name, s.nodes, s.comment) for s in leaves], "scalable unit")
    basis = "vertex switch" if kind in ("torus", "hypercube") else "leaf switch"
    return _RawBlocks([Block(s.name, s.nodes, "") for s in leaves], basis)


def _raw_blocks(plan: Plan, kind: str, pools: tuple[ResolvedPool, ...], tree: list[TreeSwitch]) -> _RawBlocks:
    """NVLink domains that span nodes if there are any, else the fabric's natural unit."""
    nvl = _nvlink_domains(pools)
    if nvl:
        return _RawBlocks(nvl, "NVLink domain")
    if tree:
        return _fabric_blocks(plan, kind, tree)
    return _RawBlocks([], "")


def _blocks(raw: _RawBlocks, nodes: list[str]) -> _Blocks:
    if not raw.blocks:
        return _Blocks([], [], (), raw.basis, [])
    split = split_by_base(raw.blocks, lambda b: len(b.nodes))
    notes: list[str] = []
    if split.drop:
        notes.append(
            f"{sum(len(b.nodes) for b in split.drop)} node(s) in {_plural(len(split.drop), raw.basis)} "
            "smaller than the base "
            f"block size {split.base} are outside the block topology (Slurm rejects smaller blocks): "
            + compress([n for b in split.drop for n in b.nodes])
        )
    in_blocks = {n for b in raw.blocks for n in b.nodes}
    missing = [n for n in nodes if n not in in_blocks]
    if missing:
        notes.append(f"{len(missing)} compute node(s) belong to no {raw.basis}: {compress(missing)}")
    sizes = block_sizes(split.base, len(split.keep))
    return _Blocks(split.keep, split.drop, sizes, raw.basis, notes)


def _node_groups(
    plan: Plan, kind: str, pools: tuple[ResolvedPool, ...], leaf_of: dict[str, str], blocks: _Blocks
) -> tuple[NodeGroup, ...]:
    """Nodes with the same pool, features (pool, Slurm leaf or dragonfly group, NVLink block) and GPUs."""
    block_of = {n: b.name for b in blocks.blocks for n in b.nodes}
    groups: dict[tuple[str, tuple[str, ...], int], list[str]] = defaultdict(list)
    devices = plan.device_by_name
    for pool in pools:
        for h in pool.hostnames:
            feats = [pool.name]
            leaf = leaf_of.get(h)
            if leaf is not None:
                feats.append(f"group{devices[leaf].su}" if kind == "dragonfly" and devices[leaf].su else leaf)
            if blocks.basis == "NVLink domain" and h in block_of:
                feats.append(block_of[h])
            groups[(pool.name, tuple(dict.fromkeys(feats)), pool.server.gpus)].append(h)
    vendor = {p.name: p.gpu.vendor if p.gpu is not None and p.server.gpus > 0 else "" for p in pools}
    return tuple(NodeGroup(p, tuple(hs), g, f, vendor[p]) for (p, f, g), hs in groups.items())


def _plugin(tree: _Tree, blocks: _Blocks, outside: list[str]) -> str:
    """topology/block only when every Slurm node is in a block it keeps: the block plugin places jobs on
    block nodes alone (eval_nodes_block.c: "requires nodes which are not in blocks") and only warns of the
    rest at start ("blocks lack access to %d nodes", block_record.c; SchedMD/slurm
    src/plugins/topology/block), so a node outside every block would never run a job."""
    whole = bool(blocks.blocks) and not outside
    if tree.switches:
        return "topology/block" if blocks.basis == "NVLink domain" and whole else "topology/tree"
    return "topology/block" if whole else "topology/flat"


def slurm_topology(cluster: ResolvedCluster, plan: Plan) -> SlurmTopology:
    pools = slurm_pools(cluster)
    nodes = [h for p in pools for h in p.hostnames]
    metrics = plan.metrics.get(FABRIC)
    kind = metrics.topology if metrics else "none"
    tree = _tree(plan, kind, nodes) if nodes else _Tree([], "no compute nodes", [], {})
    blocks = _blocks(_raw_blocks(plan, kind, pools, tree.switches), nodes)
    in_blocks = {n for b in blocks.blocks for n in b.nodes}
    outside = [n for n in nodes if n not in in_blocks] if blocks.blocks else []
    parts = slurm_partitions(cluster, pools)
    return SlurmTopology(
        cluster=cluster.name,
        fabric=_fabric_text(plan, kind, list(plan.switches(FABRIC))),
        tree=tuple(tree.switches),
        flat_reason=tree.flat_reason,
        tree_notes=tuple(tree.notes),
        blocks=tuple(blocks.blocks),
        block_sizes=blocks.sizes,
        block_basis=blocks.basis,
        left_out=tuple(blocks.left_out),
        block_notes=tuple(blocks.notes),
        plugin=_plugin(tree, blocks, outside),
        dragonfly=kind == "dragonfly",
        node_groups=_node_groups(plan, kind, pools, tree.leaf_of, blocks),
        nodes=tuple(nodes),
        outside_blocks=tuple(outside),
        partitions=parts.partitions,
        partition_notes=parts.notes,
        block_partition=free_partition_name("nvlink", parts.partitions),
    )
