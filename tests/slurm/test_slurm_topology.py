"""Slurm topology files, parsed back: every compute node under exactly one leaf, one connected tree with a
single top, blocks that partition the nodes, BlockSizes that follow the man page rules."""

from __future__ import annotations

import itertools
import re
from collections import Counter
from pathlib import Path

import pytest
import yaml
from slurm_blueprints import planned

from generator.emit.slurm import emit, render
from generator.emit.slurm.hostlist import expand
from generator.rules.base import RuleContext
from generator.rules.registry import run_rules
from generator.emit.slurm.topology import block_sizes, slurm_pools

_KV = re.compile(r"(\w+)=(\S+)")


def parse_conf(text: str) -> list[dict[str, str]]:
    """topology.conf lines as key → value dicts (keys lower-cased, as Slurm treats them)."""
    out = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            out.append({k.lower(): v for k, v in _KV.findall(line)})
    return out


def tree_of(text: str) -> dict[str, tuple[str, list[str]]]:
    tree: dict[str, tuple[str, list[str]]] = {}
    for rec in parse_conf(text):
        assert "switchname" in rec, rec
        name = rec["switchname"]
        assert name not in tree, f"switch {name} defined twice"
        assert len(name) <= 64
        assert ("nodes" in rec) != ("switches" in rec), rec
        tree[name] = (
            ("nodes", expand(rec["nodes"])) if "nodes" in rec else ("switches", expand(rec["switches"]))
        )
    return tree


def check_tree(tree: dict[str, tuple[str, list[str]]], nodes: list[str]) -> str:
    """Every node under exactly one leaf, every child defined, one top, everything reachable. Returns the top."""
    under: Counter[str] = Counter()
    parents: Counter[str] = Counter()
    for kind, children in tree.values():
        if kind == "nodes":
            under.update(children)
        else:
            for c in children:
                assert c in tree, f"switch {c} is referenced but not defined"
                parents[c] += 1
    assert set(under) == set(nodes), set(under) ^ set(nodes)
    assert all(n == 1 for n in under.values()), [k for k, n in under.items() if n > 1]
    tops = [s for s in tree if parents[s] == 0]
    assert len(tops) == 1, tops
    seen: set[str] = set()
    stack = [tops[0]]
    while stack:
        s = stack.pop()
        assert s not in seen, f"cycle or shared child at {s}"
        seen.add(s)
        kind, children = tree[s]
        if kind == "switches":
            stack.extend(children)
    assert seen == set(tree)
    return tops[0]


def blocks_of(text: str) -> tuple[dict[str, list[str]], list[int]]:
    blocks: dict[str, list[str]] = {}
    sizes: list[int] = []
    for rec in parse_conf(text):
        if "blockname" in rec:
            blocks[rec["blockname"]] = expand(rec["nodes"])
        elif "blocksizes" in rec:
            sizes = [int(x) for x in rec["blocksizes"].split(",")]
        else:
            raise AssertionError(rec)
    return blocks, sizes


def check_blocks(blocks: dict[str, list[str]], sizes: list[int], nodes: list[str]) -> None:
    members = [n for b in blocks.values() for n in b]
    assert len(members) == len(set(members)), "a node is in two blocks"
    assert set(members) <= set(nodes)
    base = sizes[0]
    assert all(len(b) >= base for b in blocks.values()), "Slurm rejects blocks below the base size"
    for prev, nxt in itertools.pairwise(sizes):
        ratio = nxt // prev
        assert nxt % prev == 0 and ratio >= 2 and ratio & (ratio - 1) == 0, sizes
    assert 2 ** (len(sizes) - 1) <= len(blocks), "no BlockSizes level beyond the number of blocks"


def compute_nodes(cluster) -> list[str]:  # type: ignore[no-untyped-def]
    return [h for p in slurm_pools(cluster) for h in p.hostnames]


def yaml_topologies(text: str) -> dict[str, dict]:
    doc = yaml.safe_load(text)
    assert isinstance(doc, list)
    names = [t["topology"] for t in doc]
    assert len(names) == len(set(names))
    for t in doc:
        assert next(iter(t)) == "topology"  # must be the first attribute
        assert sum(k in t for k in ("tree", "block", "flat")) == 1
    assert sum(1 for t in doc if t["cluster_default"]) == 1
    return {t["topology"]: t for t in doc}


ALL = [
    "superpod",
    "partial",
    "tier3",
    "dragonfly",
    "torus",
    "torus-switched",
    "nvl72",
    "non-rail",
    "cloud",
    "unattached-leaf",
    "su-named-leaves",
    "nvl72-mixed",
    "nvl72-partial",
    "tenants",
    "vendors",
    "amd",
]


@pytest.mark.parametrize("name", ALL)
def test_files_parse_back_consistently(name: str) -> None:
    cluster, plan = planned(name)
    files = render(cluster, plan)
    nodes = compute_nodes(cluster)
    tree = tree_of(files["topology.conf"])
    check_tree(tree, nodes)
    topos = yaml_topologies(files["topology.yaml"])
    if "tree" in topos:
        ytree = {
            s["switch"]: ("nodes", expand(s["nodes"]))
            if "nodes" in s
            else ("switches", expand(s["children"]))
            for s in topos["tree"]["tree"]["switches"]
        }
        assert ytree == tree
    else:
        assert topos["flat"]["flat"] is True
    if "topology-block.conf" in files:
        blocks, sizes = blocks_of(files["topology-block.conf"])
        check_blocks(blocks, sizes, nodes)
        yblock = topos["block"]["block"]
        assert yblock["block_sizes"] == sizes
        assert {b["block"]: expand(b["nodes"]) for b in yblock["blocks"]} == blocks
    else:
        assert "block" not in topos
    # slurm.conf: every compute node on exactly one NodeName line, none of the other pools
    named: Counter[str] = Counter()
    for rec in parse_conf(files["slurm.conf.fragment"]):
        if "nodename" in rec:
            named.update(expand(rec["nodename"]))
    assert set(named) == set(nodes) and all(v == 1 for v in named.values())
    assert render(cluster, plan) == files  # deterministic


def test_superpod(tmp_path: Path) -> None:
    cluster, plan = planned("superpod")
    files = render(cluster, plan)
    tree = tree_of(files["topology.conf"])
    assert check_tree(tree, compute_nodes(cluster)) == "spines"
    assert tree["spines"] == ("switches", ["su1", "su2", "su3", "su4"])
    for s in range(4):  # 127 DGX as in NVIDIA's RA: the fourth SU's 32nd node slot carries the UFM appliances
        last = min(32 * s + 32, 127)
        assert tree[f"su{s + 1}"] == ("nodes", [f"dgx{i:03d}" for i in range(32 * s + 1, last + 1)])
    assert "# su1 = rail leaves c-leaf-su1-r[0-7]" in files["topology.conf"]
    assert "c-spine-[001-016]" in files["topology.conf"]
    blocks, sizes = blocks_of(files["topology-block.conf"])
    assert sizes == [32, 64]  # su4's 31 DGX are a partial unit: in the tree, not a block
    assert sorted(blocks) == ["su1", "su2", "su3"]
    # storage and management pools are not Slurm nodes
    assert "oss" not in files["slurm.conf.fragment"] and "mgmt" not in files["slurm.conf.fragment"]
    assert "NodeName=dgx[001-032] Gres=gpu:8 Features=dgx,su1 State=UNKNOWN" in files["slurm.conf.fragment"]
    assert "TopologyPlugin=topology/tree" in files["slurm.conf.fragment"]
    assert "cluster_default: true" in files["topology.yaml"].split("- topology: block")[0]
    emit(cluster, plan, tmp_path / "slurm")
    assert sorted(p.name for p in (tmp_path / "slurm").iterdir()) == sorted(files)
    assert all((tmp_path / "slurm" / n).read_text() == t for n, t in files.items())


def test_partial_scalable_unit_stays_in_the_tree_but_not_in_blocks() -> None:
    cluster, plan = planned("partial")
    files = render(cluster, plan)
    tree = tree_of(files["topology.conf"])
    assert tree["su4"] == ("nodes", ["dgx097", "dgx098", "dgx099", "dgx100"])
    blocks, sizes = blocks_of(files["topology-block.conf"])
    assert sorted(blocks) == ["su1", "su2", "su3"] and sizes == [32, 64]
    assert "dgx[097-100]" in files["topology-block.conf"].split("BlockName")[0]  # said why, in a comment


def test_three_tiers_group_scalable_units_by_pod() -> None:
    cluster, plan = planned("tier3")
    tree = tree_of(render(cluster, plan)["topology.conf"])
    assert check_tree(tree, compute_nodes(cluster)) == "cores"
    assert tree["pod1"] == ("switches", ["su1", "su2", "su3", "su4"])
    assert tree["pod2"] == ("switches", ["su5"])
    pods = {d.name: d.pod for d in plan.switches("compute") if d.role == "leaf"}
    assert {pods[f"c-leaf-su{s}-r0"] for s in (1, 2, 3, 4)} == {1} and pods["c-leaf-su5-r0"] == 2


def test_dragonfly() -> None:
    cluster, plan = planned("dragonfly")
    files = render(cluster, plan)
    tree = tree_of(files["topology.conf"])
    assert check_tree(tree, compute_nodes(cluster)) == "global"
    assert tree["global"] == ("switches", [f"group{g}" for g in range(1, 6)])
    assert tree["group1"] == ("switches", [f"c-router-g1-{r:02d}" for r in range(1, 5)])
    # a node's ports all sit on one router: the router is the node's leaf
    router_of = {}
    for link in plan.links_of("compute"):
        if link.layer == "node_router":
            router_of.setdefault(link.a.device, set()).add(link.b.device)
    for name, (kind, children) in tree.items():
        if kind == "nodes":
            assert all(router_of[n] == {name} for n in children)
    assert "TopologyParam=dragonfly" in files["slurm.conf.fragment"]
    assert "TopologyParam=dragonfly" in files["topology.conf"]  # the comment suggesting it
    blocks, sizes = blocks_of(files["topology-block.conf"])
    assert sorted(blocks) == ["group1", "group2", "group3", "group4"] and sizes == [16, 32, 64]


def test_direct_torus_is_flat() -> None:
    cluster, plan = planned("torus")
    files = render(cluster, plan)
    assert tree_of(files["topology.conf"]) == {"fabric": ("nodes", [f"dgx{i:03d}" for i in range(1, 17)])}
    assert yaml_topologies(files["topology.yaml"])["flat"]["cluster_default"] is True
    assert "topology-block.conf" not in files
    settings = [line for line in files["slurm.conf.fragment"].splitlines() if not line.startswith("#")]
    assert not [line for line in settings if line.startswith("TopologyPlugin")]


def test_switched_torus_has_one_leaf_per_vertex() -> None:
    cluster, plan = planned("torus-switched")
    tree = tree_of(render(cluster, plan)["topology.conf"])
    assert check_tree(tree, compute_nodes(cluster)) == "torus"
    assert tree["c-sw-001"] == ("nodes", ["dgx001", "dgx002"])


def test_nvl72_blocks_are_the_racks_the_plan_puts_them_in() -> None:
    """Without placement.nodes_per_rack the trays were racked by power (20 in a 140 kW rack), so the block
    nvl02 that Slurm schedules MNNVL jobs in spanned three racks its NVLink cannot join."""
    cluster, plan = planned("nvl72-default")
    blocks, _ = blocks_of(render(cluster, plan)["topology-block.conf"])
    assert len(blocks) == 2
    for name, hosts in blocks.items():
        assert len({plan.device_by_name[h].rack for h in hosts}) == 1, name
    assert not [f for f in run_rules(RuleContext(cluster)) if f.rule == "PWR007"]


def test_nvl72_blocks_are_nvlink_domains() -> None:
    cluster, plan = planned("nvl72")
    files = render(cluster, plan)
    blocks, sizes = blocks_of(files["topology-block.conf"])
    assert sizes == [18, 36, 72]
    assert blocks == {
        f"nvl{i:02d}": [f"gb{n:03d}" for n in range(18 * (i - 1) + 1, 18 * i + 1)] for i in range(1, 5)
    }
    assert "TopologyPlugin=topology/block" in files["slurm.conf.fragment"]
    topos = yaml_topologies(files["topology.yaml"])
    assert topos["block"]["cluster_default"] is True and topos["tree"]["cluster_default"] is False
    assert (
        "Gres=gpu:4" in files["slurm.conf.fragment"]
        and "Features=gb,su1,nvl01" in files["slurm.conf.fragment"]
    )


def test_nodes_split_across_leaves_go_under_the_majority_leaf() -> None:
    cluster, plan = planned("non-rail")
    files = render(cluster, plan)
    tree = tree_of(files["topology.conf"])
    ports: dict[str, Counter[str]] = {}
    for link in plan.links_of("compute"):
        if link.layer == "node_leaf":
            ports.setdefault(link.a.device, Counter())[link.b.device] += 1
    split = sorted(n for n, c in ports.items() if len(c) > 1)
    assert split == ["n006", "n011"]
    for n in split:
        leaf = next(s for s, (k, ch) in tree.items() if k == "nodes" and n in ch)
        assert ports[n][leaf] == max(ports[n].values())
    assert "n[006,011]" in files["topology.conf"]


@pytest.mark.parametrize(
    ("base", "blocks", "expected"),
    [
        (32, 4, (32, 64, 128)),
        (32, 3, (32, 64)),
        (18, 1, (18,)),
        (8, 5, (8, 16, 32)),
        (1, 1 << 20, tuple(1 << k for k in range(16))),
    ],
)
def test_block_sizes(base: int, blocks: int, expected: tuple[int, ...]) -> None:
    assert block_sizes(base, blocks) == expected


def test_made_up_switch_names_give_way_to_the_sites(tmp_path: Path) -> None:
    """A site whose leaves are named `spines` and `top` got both `SwitchName=spines Nodes=...` and the made-up
    `SwitchName=spines Switches=...` over every leaf (slurmctld: "Switch (spines) has already been
    defined"): the made-up one is renamed, the site's leaf keeps its name."""
    from generator.pipeline import load_and_resolve
    from generator.plan.build import build_plan

    path = tmp_path / "names.yaml"
    path.write_text(
        "apiVersion: cluster-blueprint/v1\nname: names\n"
        "site: {name: dc1, rows: 4, racks_per_row: 12, rack: {units: 42, power_kw: 30}}\n"
        "pools:\n  - {name: gpu, role: gpu, count: 40, server: dgx-a100, placement: {nodes_per_rack: 4}}\n"
        "fabrics:\n  compute:\n    technology: infiniband-hdr\n    topology:\n      kind: fat-tree\n"
        "      switch: qm8700\n      rail_optimized: false\n      names:\n"
        "        leaf: {names: [spines, top, " + ", ".join(f"l{i}" for i in range(3, 17)) + "]}\n"
        "    subnet_manager: {kind: opensm}\n"
    )
    cluster = load_and_resolve(path)[1]
    tree = tree_of(render(cluster, build_plan(cluster))["topology.conf"])
    assert check_tree(tree, compute_nodes(cluster)) == "slurm-spines"
    assert tree["spines"][0] == "nodes" and "spines" in tree["slurm-spines"][1]
    # three tiers whose leaves are named like the pods: `cores` must point at the renamed pod, whose
    # children are the leaves (a rename after the fact left `cores -> pod1` the leaf and the pod orphaned)
    text = path.read_text().replace("rail_optimized: false\n", "rail_optimized: false\n      tiers: 3\n")
    text = text.replace("[spines, top, ", "[pod1, pod2, ").replace(
        "switch: qm8700\n", "switch: qm8700\n      scalable_unit: 20\n"
    )
    (tmp_path / "pods.yaml").write_text(text)
    cluster = load_and_resolve(tmp_path / "pods.yaml")[1]
    tree = tree_of(render(cluster, build_plan(cluster))["topology.conf"])
    assert check_tree(tree, compute_nodes(cluster)) == "cores"
    assert tree["cores"][1] == ["slurm-pod1"] and "pod1" in tree["slurm-pod1"][1]


def test_a_site_leaf_named_unattached_keeps_its_own_nodes() -> None:
    """The site's leaf `unattached` and the tool's switch for nodes without a compute port were one key:
    both groups went under one `SwitchName=unattached`, and the leaf's block held the port-less nodes."""
    cluster, plan = planned("unattached-leaf")
    files = render(cluster, plan)
    tree = tree_of(files["topology.conf"])
    assert check_tree(tree, compute_nodes(cluster)) == "spines"
    cabled = sorted({ln.a.device for ln in plan.links_of("compute") if ln.b.device == "unattached"})
    assert cabled == [f"gpu{i:03d}" for i in range(1, 5)]
    assert tree["unattached"] == ("nodes", cabled)
    assert tree["slurm-unattached"] == ("nodes", ["lone001", "lone002"])
    assert sorted(tree["spines"][1]) == ["ib-leaf-2", "slurm-unattached", "unattached"]
    blocks, _ = blocks_of(files["topology-block.conf"])
    assert blocks == {"ib-leaf-2": [f"gpu{i:03d}" for i in range(5, 9)], "unattached": cabled}


def test_leaves_named_like_scalable_units_are_leaves() -> None:
    """Physical leaves the site calls `sup-a1`, `sup-a2` were taken for scalable units because their names
    start with "su": the blocks were described as one per scalable unit. The plan says what a leaf is."""
    cluster, plan = planned("su-named-leaves")
    assert all(d.rail is None for d in plan.switches("compute") if d.role == "leaf")
    files = render(cluster, plan)
    block_text = files["topology-block.conf"]
    assert "One block per leaf switch" in block_text and "scalable unit" not in block_text
    assert "rail leaves" not in files["topology.conf"]
    blocks, _ = blocks_of(block_text)
    assert blocks == {
        "sup-a1": [f"gpu{i:03d}" for i in range(1, 5)],
        "sup-a2": [f"gpu{i:03d}" for i in range(5, 9)],
    }
    # a rail-optimised plan still makes each scalable unit one Slurm leaf and one block
    superpod = render(*planned("superpod"))
    assert "One block per scalable unit" in superpod["topology-block.conf"]


@pytest.mark.parametrize(
    ("name", "outside"), [("nvl72-mixed", "dgx[001-004]"), ("nvl72-partial", "gb[019-020]")]
)
def test_nvlink_blocks_that_leave_nodes_out_keep_the_tree(name: str, outside: str) -> None:
    """Whole NVL72 domains beside other GPU nodes (or a partial domain) selected topology/block, whose
    blocks held only the whole domains: Slurm's block plugin never schedules a node outside its blocks.
    The tree stays the cluster's topology; the blocks are offered to a partition (Slurm 25.05+)."""
    cluster, plan = planned(name)
    files = render(cluster, plan)
    fragment = files["slurm.conf.fragment"]
    settings = [ln for ln in fragment.splitlines() if ln and not ln.startswith("#")]
    assert "TopologyPlugin=topology/tree" in settings and "TopologyPlugin=topology/block" not in fragment
    assert "NVLink-domain block scheduling is off" in fragment
    assert "# PartitionName=nvlink Nodes=gb[001-018] Topology=block MaxTime=INFINITE State=UP" in fragment
    blocks, _ = blocks_of(files["topology-block.conf"])
    assert blocks == {"nvl01": [f"gb{i:03d}" for i in range(1, 19)]}
    assert outside in files["topology-block.conf"]
    assert "Not the cluster's topology.conf" in files["topology-block.conf"]
    assert "Install as topology.conf with TopologyPlugin=topology/block" not in files["topology-block.conf"]
    topos = yaml_topologies(files["topology.yaml"])
    assert topos["tree"]["cluster_default"] is True and topos["block"]["cluster_default"] is False
    (finding,) = [f for f in run_rules(RuleContext(cluster)) if f.rule == "SFT008"]
    assert "NVLink-domain block scheduling is off" in finding.message


def test_whole_nvlink_domains_alone_still_select_blocks() -> None:
    cluster, plan = planned("nvl72")
    assert "TopologyPlugin=topology/block" in render(cluster, plan)["slurm.conf.fragment"]
    assert not [f for f in run_rules(RuleContext(cluster)) if f.rule == "SFT008"]


@pytest.mark.parametrize("name", ["nvl72", "nvl72-default", "nvl72-mixed", "nvl72-partial", "superpod"])
def test_sft008_agrees_with_the_emitted_topology(name: str) -> None:
    """The rule reckons the NVLink blocks itself (rules sit below the emitters): it must fire exactly when
    build/slurm keeps the tree because NVLink blocks leave Slurm nodes out, and name those nodes' pools."""
    from generator.emit.slurm.topology import slurm_topology

    cluster, plan = planned(name)
    topo = slurm_topology(cluster, plan)
    off = topo.block_basis == "NVLink domain" and bool(topo.outside_blocks)
    assert off == (topo.block_basis == "NVLink domain" and topo.plugin != "topology/block")
    fired = [f for f in run_rules(RuleContext(cluster)) if f.rule == "SFT008"]
    pools = {p.name: set(p.hostnames) for p in cluster.pools}
    named = {f.message.split("`")[1] for f in fired}
    assert (
        named == {p for p, hosts in pools.items() if hosts & set(topo.outside_blocks)} if off else not fired
    )


def test_one_partition_per_tenant_and_gpu_model() -> None:
    """Not one `batch` over every node: tenants' pools and GPU vendors/models cannot run one job."""

    def suggested(name: str) -> dict[str, list[str]]:
        fragment = render(*planned(name))["slurm.conf.fragment"]
        lines = [ln[2:] for ln in fragment.splitlines() if ln.startswith("# PartitionName=")]
        return {rec["partitionname"]: expand(rec["nodes"]) for rec in parse_conf("\n".join(lines))}

    tenants = suggested("tenants")
    assert tenants == {
        "a": [f"teama{i:03d}" for i in range(1, 9)],
        "b": [f"teamb{i:03d}" for i in range(1, 9)],
        "shared": [f"common{i:03d}" for i in range(1, 5)],
    }
    vendors = suggested("vendors")
    assert sorted(vendors) == ["h100-sxm", "l40s", "mi300x"]
    assert vendors["mi300x"] == ["mi001", "mi002", "mi003"]
    fragment = render(*planned("vendors"))["slurm.conf.fragment"]
    assert not [ln for ln in fragment.splitlines() if "PartitionName=" in ln and "Default=YES" in ln]
    assert "NCCL (NVIDIA) and RCCL (AMD)" in fragment
    # one tenant, one GPU model: the single default partition as before
    assert list(suggested("superpod")) == ["batch"]


def test_gres_autodetect_follows_the_gpu_vendor() -> None:
    """AMD MI300X nodes were told "gres.conf on the nodes needs AutoDetect=nvml", NVIDIA's library; AMD
    GPUs are found with AutoDetect=rsmi (gres.conf(5)), and mixed vendors need one line per vendor's nodes."""
    amd = render(*planned("amd"))["slurm.conf.fragment"]
    assert "gres.conf on the nodes needs AutoDetect=rsmi." in amd and "nvml" not in amd
    mixed = render(*planned("vendors"))["slurm.conf.fragment"]
    lines = [ln[4:] for ln in mixed.splitlines() if ln.startswith("#   NodeName=")]
    got = {rec["autodetect"]: expand(rec["nodename"]) for rec in parse_conf("\n".join(lines))}
    assert got == {
        "nvml": [f"h100{i:03d}" for i in range(1, 5)] + ["l40s001", "l40s002"],
        "rsmi": ["mi001", "mi002", "mi003"],
    }
    assert "AutoDetect=nvml." in render(*planned("superpod"))["slurm.conf.fragment"]
