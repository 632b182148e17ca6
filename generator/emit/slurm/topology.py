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
from dataclasses import dataclass, field

from generator.emit.slurm.hostlist import compress, natural_key
from generator.plan.model import Device, Plan
from generator.resolve import ResolvedCluster, ResolvedPool

FABRIC = "compute"
MAX_BLOCK_LEVEL = 15  # Slurm: at most 2^15 base blocks in one aggregated block (block_record.c)
UNATTACHED = "unattached"


@dataclass(frozen=True)
class TreeSwitch:
    name: str
    nodes: tuple[str, ...] = ()
    switches: tuple[str, ...] = ()
    comment: str = ""


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

    @property
    def is_flat(self) -> bool:
        return not self.tree


def slurm_pools(cluster: ResolvedCluster) -> tuple[ResolvedPool, ...]:
    """Pools whose nodes run slurmd: the compute (``gpu`` role) pools."""
    return tuple(p for p in cluster.pools if p.role == "gpu")


def _leaf_key(d: Device, kind: str) -> str:
    if kind in ("fat-tree", "leaf-spine") and d.su is not None and d.rail is not None:
        return f"su{d.su}"
    return d.name


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


def _tree(
    plan: Plan, kind: str, slurm_nodes: list[str]
) -> tuple[list[TreeSwitch], str, list[str], dict[str, str]]:
    """(switches, flat reason, notes, node → Slurm leaf)."""
    devices = plan.device_by_name
    wanted = set(slurm_nodes)
    ports: dict[str, Counter[str]] = defaultdict(Counter)
    members: dict[str, list[str]] = defaultdict(list)  # Slurm leaf → physical switches
    for link in plan.links_of(FABRIC):
        for here, there in ((link.a, link.b), (link.b, link.a)):
            if here.device in wanted:
                sw = devices[there.device]
                if sw.kind == "switch":
                    key = _leaf_key(sw, kind)
                    ports[here.device][key] += 1
                    if sw.name not in members[key]:
                        members[key].append(sw.name)
    switches = [d for d in plan.switches(FABRIC)]
    if not ports:
        reason = (
            ("the compute fabric is a directly cabled " + kind)
            if kind in ("torus", "hypercube")
            else "the cluster has no switched compute fabric in the plan"
        )
        return [], reason, [], {}
    order = {n: i for i, n in enumerate(slurm_nodes)}
    leaf_of: dict[str, str] = {}
    for node, c in ports.items():
        best = max(c.values())
        # ties: the leaf that comes first in natural order (stable, independent of link order)
        leaf_of[node] = min((k for k, v in c.items() if v == best), key=natural_key)
    split = sorted((n for n, c in ports.items() if len(c) > 1), key=order.__getitem__)
    leaf_nodes: dict[str, list[str]] = defaultdict(list)
    for node in slurm_nodes:
        leaf_nodes[leaf_of.get(node, UNATTACHED)].append(node)
    notes: list[str] = []
    if split:
        notes.append(
            f"{len(split)} node(s) have ports on several leaves and are listed under the leaf holding "
            f"most of them: {compress(split)}"
        )
    leaves = sorted((k for k in leaf_nodes if k != UNATTACHED), key=natural_key)
    out: list[TreeSwitch] = []
    for key in leaves:
        phys = members[key]
        comment = (
            f"{key} = rail leaves {compress(phys)}" if key.startswith("su") and key not in devices else ""
        )
        out.append(TreeSwitch(key, tuple(leaf_nodes[key]), comment=comment))
    if UNATTACHED in leaf_nodes:
        out.append(
            TreeSwitch(
                UNATTACHED,
                tuple(leaf_nodes[UNATTACHED]),
                comment="compute nodes without a port on the compute fabric (Slurm needs every node "
                "under a switch)",
            )
        )
        notes.append(f"{len(leaf_nodes[UNATTACHED])} compute node(s) have no compute-fabric port")
    tops: list[str] = [s.name for s in out]
    by_tier: dict[str, list[str]] = defaultdict(list)
    for d in switches:
        by_tier[d.role].append(d.name)
    if kind in ("fat-tree", "leaf-spine") and by_tier.get("core"):
        pod_of_leaf: dict[str, int] = {}
        for key in leaves:
            pods = [pod for m in members[key] if (pod := devices[m].pod) is not None]
            pod_of_leaf[key] = min(pods) if pods else 0
        pods_in_order = sorted(set(pod_of_leaf.values()))
        pod_switches: list[str] = []
        for p in pods_in_order:
            spines = [n for n in by_tier.get("spine", []) if devices[n].pod == p]
            name = f"pod{p}"
            pod_switches.append(name)
            out.append(
                TreeSwitch(
                    name,
                    switches=tuple(k for k in leaves if pod_of_leaf[k] == p),
                    comment=f"{name} = pod spines {_ranges(spines)}",
                )
            )
        children = pod_switches + ([UNATTACHED] if UNATTACHED in leaf_nodes else [])
        out.append(
            TreeSwitch(
                "cores",
                switches=tuple(children),
                comment=f"cores = {_ranges(by_tier['core'])} (spine j of every pod joins core group j)",
            )
        )
    elif kind in ("fat-tree", "leaf-spine") and by_tier.get("spine"):
        out.append(
            TreeSwitch(
                "spines",
                switches=tuple(tops),
                comment=f"spines = {_ranges(by_tier['spine'])} (every leaf links to every spine)",
            )
        )
    elif kind == "dragonfly":
        groups: dict[int, list[str]] = defaultdict(list)
        for key in leaves:
            groups[devices[key].su or 0].append(key)
        names = []
        for g in sorted(groups):
            names.append(f"group{g}")
            out.append(
                TreeSwitch(
                    f"group{g}",
                    switches=tuple(groups[g]),
                    comment=f"dragonfly group {g}: routers linked all-to-all",
                )
            )
        if UNATTACHED in leaf_nodes:
            names.append(UNATTACHED)
        out.append(TreeSwitch("global", switches=tuple(names), comment="global links join every group"))
    elif len(tops) > 1 and kind in ("torus", "hypercube"):
        out.append(
            TreeSwitch(
                kind,
                switches=tuple(tops),
                comment=f"the {kind} links every vertex switch; Slurm's tree cannot express the "
                "rings, so one top stands for the whole fabric",
            )
        )
    elif len(tops) > 1:
        out.append(TreeSwitch("top", switches=tuple(tops), comment="joins the leaves into one tree"))
    return out, "", notes, leaf_of


def _nvlink_domains(pools: tuple[ResolvedPool, ...]) -> list[Block]:
    blocks: list[Block] = []
    for pool in pools:
        s = pool.server
        if s.gpus <= 0 or s.nvlink_domain_gpus <= s.gpus:
            continue
        per = max(1, s.nvlink_domain_gpus // s.gpus)
        hosts = list(pool.hostnames)
        for i in range(0, len(hosts), per):
            chunk = tuple(hosts[i : i + per])
            blocks.append(
                Block(
                    "",
                    chunk,
                    f"NVLink domain of {s.nvlink_domain_gpus} GPUs "
                    f"({per} x {s.gpus}-GPU {pool.server_id} nodes of pool {pool.name})",
                )
            )
    width = max(2, len(str(len(blocks))))
    return [Block(f"nvl{i:0{width}d}", b.nodes, b.comment) for i, b in enumerate(blocks, start=1)]


def block_sizes(base: int, blocks: int) -> tuple[int, ...]:
    """Base size, then base x 2^k while 2^k base blocks exist (Slurm stops at the first level that holds
    every block and accepts at most 2^15 blocks per level)."""
    out = [base]
    k = 1
    while (1 << k) <= blocks and k <= MAX_BLOCK_LEVEL:
        out.append(base << k)
        k += 1
    return tuple(out)


def _fabric_blocks(plan: Plan, kind: str, tree: list[TreeSwitch]) -> tuple[list[Block], str]:
    leaves = [s for s in tree if s.nodes and s.name != UNATTACHED]
    if kind == "dragonfly":
        devices = plan.device_by_name
        groups: dict[int, list[str]] = defaultdict(list)
        for s in leaves:
            groups[devices[s.name].su or 0].extend(s.nodes)
        return [
            Block(f"group{g}", tuple(n), f"dragonfly group {g}") for g, n in sorted(groups.items())
        ], "dragonfly group"
    if leaves and all(s.name.startswith("su") for s in leaves):
        return [Block(s.name, s.nodes, s.comment) for s in leaves], "scalable unit"
    basis = "vertex switch" if kind in ("torus", "hypercube") else "leaf switch"
    return [Block(s.name, s.nodes, "") for s in leaves], basis


def _split_by_base(blocks: list[Block]) -> tuple[int, list[Block], list[Block]]:
    sizes = Counter(len(b.nodes) for b in blocks)
    # the common size is the design's unit; ties go to the larger (a whole SU beats a partial one)
    base = max(sizes, key=lambda s: (sizes[s], s))
    keep = [b for b in blocks if len(b.nodes) >= base]
    drop = [b for b in blocks if len(b.nodes) < base]
    return base, keep, drop


def slurm_topology(cluster: ResolvedCluster, plan: Plan) -> SlurmTopology:
    pools = slurm_pools(cluster)
    nodes = [h for p in pools for h in p.hostnames]
    metrics = plan.metrics.get(FABRIC)
    kind = metrics.topology if metrics else "none"
    switches = list(plan.switches(FABRIC))
    tree, flat_reason, tree_notes, leaf_of = (
        _tree(plan, kind, nodes) if nodes else ([], "no compute nodes", [], {})
    )
    nvl = _nvlink_domains(pools)
    if nvl:
        raw_blocks, basis = nvl, "NVLink domain"
    elif tree:
        raw_blocks, basis = _fabric_blocks(plan, kind, tree)
    else:
        raw_blocks, basis = [], ""
    blocks: list[Block] = []
    left_out: list[Block] = []
    sizes: tuple[int, ...] = ()
    block_notes: list[str] = []
    if raw_blocks:
        base, blocks, left_out = _split_by_base(raw_blocks)
        sizes = block_sizes(base, len(blocks))
        if left_out:
            block_notes.append(
                f"{sum(len(b.nodes) for b in left_out)} node(s) in {_plural(len(left_out), basis)} "
                "smaller than the base "
                f"block size {base} are outside the block topology (Slurm rejects smaller blocks): "
                + compress([n for b in left_out for n in b.nodes])
            )
        in_blocks = {n for b in blocks for n in b.nodes} | {n for b in left_out for n in b.nodes}
        missing = [n for n in nodes if n not in in_blocks]
        if missing:
            block_notes.append(f"{len(missing)} compute node(s) belong to no {basis}: {compress(missing)}")
    block_of = {n: b.name for b in blocks for n in b.nodes}
    groups: dict[tuple[str, tuple[str, ...], int], list[str]] = defaultdict(list)
    devices = plan.device_by_name
    for pool in pools:
        for h in pool.hostnames:
            feats = [pool.name]
            leaf = leaf_of.get(h)
            if leaf is not None:
                feats.append(f"group{devices[leaf].su}" if kind == "dragonfly" and devices[leaf].su else leaf)
            if basis == "NVLink domain" and h in block_of:
                feats.append(block_of[h])
            groups[(pool.name, tuple(dict.fromkeys(feats)), pool.server.gpus)].append(h)
    node_groups = tuple(NodeGroup(p, tuple(hs), g, f) for (p, f, g), hs in groups.items())
    if tree:
        plugin = "topology/block" if basis == "NVLink domain" and blocks else "topology/tree"
    else:
        plugin = "topology/block" if blocks else "topology/flat"
    return SlurmTopology(
        cluster=cluster.name,
        fabric=_fabric_text(plan, kind, switches),
        tree=tuple(tree),
        flat_reason=flat_reason,
        tree_notes=tuple(tree_notes),
        blocks=tuple(blocks),
        block_sizes=sizes,
        block_basis=basis,
        left_out=tuple(left_out),
        block_notes=tuple(block_notes),
        plugin=plugin,
        dragonfly=kind == "dragonfly",
        node_groups=node_groups,
        nodes=tuple(nodes),
    )
