"""Subnet-manager settings `validate` passed while `generate` or the opensm role could not honour them (NET020,
NET021, NET022): UFM on head nodes, SHARP with a routing engine its Aggregation Manager does not work with,
a NET020 hint that led into a NET020 error, and a second SM host that ha: false dropped without a word."""

from __future__ import annotations

from pathlib import Path

import pytest

from blueprints.catalog import subnet_managers
from generator.findings import Finding, Severity
from generator.pipeline import check

HEAD = """apiVersion: cluster-blueprint/v1
name: sm-rules
site: {rows: 1, racks_per_row: 8}
pools:
  - {name: gpu, role: gpu, count: 4, server: dgx-h100, placement: {nodes_per_rack: 2}}
  - {name: store, role: storage, count: 2, server: dgx-h100, placement: {nodes_per_rack: 2}}
fabrics:
  compute:
    technology: infiniband-ndr
"""
FAT_TREE = (
    "    topology: {kind: fat-tree, tiers: 2, switch: qm9700, rail_optimized: true, scalable_unit: 4}\n"
)
HYPERCUBE = (
    "    topology: {kind: hypercube, dimension: 2, attach: switch, switch: qm9700, nodes_per_switch: 2}\n"
)
TORUS = (
    "    topology: {kind: torus, dimensions: [2, 2], attach: switch, switch: qm9700, nodes_per_switch: 2}\n"
)


def _findings(tmp_path: Path, topology: str, sm: str, rule: str) -> list[Finding]:
    path = tmp_path / "bp.yaml"
    path.write_text(HEAD + topology + "    subnet_manager:\n" + sm)
    return [f for f in check(path).findings if f.rule == rule]


def _line(tmp_path: Path, f: Finding) -> str:
    assert f.location is not None
    return (tmp_path / "bp.yaml").read_text().splitlines()[f.location.line - 1]


PARTITIONS = (
    "      kind: opensm\n      ha: true\n      partitions:\n"
    "        - {name: gpu, pkey: 0x10, pools: [gpu], ipoib: true}\n"
)


def test_net020_limited_partition_hint_leads_to_what_can_be_written(tmp_path: Path) -> None:
    """The hint said to make the serving pools "full members in their own entry": a second entry with the
    same P_Key is NET020's merge error, and per-pool membership in one P_Key cannot be written."""
    limited = PARTITIONS + "        - {name: shared, pkey: 0x30, pools: [gpu], membership: limited}\n"
    found = [
        f for f in _findings(tmp_path, FAT_TREE, limited, "NET020") if "every member is limited" in f.message
    ]
    assert len(found) == 1 and found[0].hint is not None, found
    hint = found[0].hint
    assert "own entry" not in hint and "merged" in hint and "0x0030" in hint
    assert "name that pool in no partition" in hint and "membership: full" in hint
    # following it: the entry dropped, `store` named in no partition (a full member of Default)
    assert not [
        f for f in _findings(tmp_path, FAT_TREE, PARTITIONS, "NET020") if f.severity == Severity.ERROR
    ]


def test_net021_warns_of_the_host_ha_false_drops(tmp_path: Path) -> None:
    sm = "      kind: opensm\n      ha: false\n      hosts: [store002, store001]\n"
    found = [f for f in _findings(tmp_path, FAT_TREE, sm, "NET021") if "ignored" in f.message]
    assert len(found) == 1 and found[0].severity == Severity.WARNING, found
    assert "`store001` is ignored" in found[0].message and "`store002`" in found[0].message
    assert found[0].path[-2:] == ("hosts", 1)
    assert found[0].hint is not None and "ha: true" in found[0].hint
    for ok in (
        "      kind: opensm\n      ha: true\n      hosts: [store002, store001]\n",
        "      kind: opensm\n      hosts: [store001]\n",
    ):
        assert not [f for f in _findings(tmp_path, FAT_TREE, ok, "NET021") if "ignored" in f.message]


def test_net021_warns_of_hosts_where_the_sm_does_not_run_on_hosts(tmp_path: Path) -> None:
    sm = "      kind: ufm\n      hosts: [store001]\n"
    found = [f for f in _findings(tmp_path, FAT_TREE, sm, "NET021") if "ignored" in f.message]
    assert len(found) == 1 and "ufm-appliance" in found[0].message and found[0].path[-2:] == ("hosts", 0)


def test_ufm_on_head_nodes_is_refused_at_the_location(tmp_path: Path) -> None:
    """kind: ufm with location: head-node put the hosts in subnet_manager/inventory.yml, where the opensm role
    installed Debian's opensm (not UFM) and enabled no SHARP, while NCCL_COLLNET_ENABLE=1 was written."""
    sm = "      kind: ufm\n      location: head-node\n      ha: true\n      sharp: true\n"
    found = [f for f in _findings(tmp_path, FAT_TREE, sm, "NET022") if "location: head-node" in f.message]
    assert len(found) == 1 and found[0].severity == Severity.ERROR, found
    assert found[0].path[-1] == "location" and "location: head-node" in _line(tmp_path, found[0])
    assert found[0].hint is not None and "location: ufm-appliance" in found[0].hint
    # UFM where it runs (its default location) and OpenSM on head nodes are not this error
    assert not [
        f for f in _findings(tmp_path, FAT_TREE, "      kind: ufm\n", "NET022") if "head" in f.message
    ]
    opensm = "      kind: opensm\n      location: head-node\n"
    assert not _findings(tmp_path, FAT_TREE, opensm, "NET022")


@pytest.mark.parametrize("engine", ["dfsssp", "minhop", "nue", "sssp"])
def test_sharp_with_an_engine_sharp_does_not_work_with_is_refused(tmp_path: Path, engine: str) -> None:
    sm = f"      kind: opensm\n      flavour: opensm-nvidia\n      sharp: true\n      routing_engine: {engine}\n"
    found = _findings(tmp_path, FAT_TREE, sm, "NET022")
    assert len(found) == 1 and found[0].severity == Severity.ERROR, found
    assert (
        f"routing_engine `{engine}`" in found[0].message
        and "updn, ar_updn, ftree, ar_ftree" in found[0].message
    )
    assert found[0].path[-1] == "routing_engine" and engine in _line(tmp_path, found[0])
    assert found[0].hint is not None and "routing_engine: updn, ar_updn or ftree" in found[0].hint


@pytest.mark.parametrize("engine", ["updn", "ar_updn", "ftree"])
def test_sharp_with_a_tree_engine_on_a_tree_passes(tmp_path: Path, engine: str) -> None:
    sm = f"      kind: opensm\n      flavour: opensm-nvidia\n      sharp: true\n      routing_engine: {engine}\n"
    assert not _findings(tmp_path, FAT_TREE, sm, "NET022")
    # without SHARP any engine the flavour has passes
    assert not _findings(tmp_path, FAT_TREE, sm.replace("true", "false").replace(engine, "dfsssp"), "NET022")


def test_sharp_with_the_default_engine_is_judged_too(tmp_path: Path) -> None:
    """The default engine of a hypercube is minhop: SHARP is documented there only with dor and
    dor_hyper_cube_mode, which the generated opensm.conf cannot set; on a torus for no engine at all."""
    sm = "      kind: opensm\n      flavour: opensm-nvidia\n      sharp: true\n"
    found = _findings(tmp_path, HYPERCUBE, sm, "NET022")
    assert len(found) == 1, found
    assert (
        "the default routing engine `minhop`" in found[0].message
        and "dor_hyper_cube_mode" in found[0].message
    )
    assert found[0].path[-1] == "sharp" and found[0].hint is not None and "sharp: false" in found[0].hint
    torus = _findings(tmp_path, TORUS, sm, "NET022")
    assert len(torus) == 1 and "on a torus" in torus[0].message and torus[0].path[-1] == "sharp", torus
    bare = _findings(tmp_path, "", sm, "NET022")  # no topology: generate writes minhop
    assert len(bare) == 1 and "the default routing engine `minhop`" in bare[0].message, bare
    ufm = _findings(tmp_path, TORUS, "      kind: ufm\n      sharp: true\n", "NET022")
    assert [f for f in ufm if "on a torus" in f.message], ufm


def test_the_sharp_engines_are_the_catalogues_with_their_requirement() -> None:
    tree = subnet_managers.sharp_routing("fat-tree")
    assert tree is not None and tree.routing_engines == ("updn", "ar_updn", "ftree", "ar_ftree")
    assert subnet_managers.sharp_routing("leaf-spine") == tree and not tree.requires
    cube = subnet_managers.sharp_routing("hypercube")
    assert cube is not None and cube.routing_engines == ("dor",) and cube.requires == ("dor_hyper_cube_mode",)
    assert (
        subnet_managers.sharp_routing("torus") is None and subnet_managers.sharp_routing("dragonfly") is None
    )
    assert [f.routing_engines for f in subnet_managers.sharp_routing_families()][1] == ("dfp",)
