"""topology.yaml quotes by the one YAML rule of every generated file (issue 29): a switch or block named
`123`, `1e3` or `y` reads back as that string, and a Slurm hostlist stays as written."""

from __future__ import annotations

import yaml

from generator.emit.slurm.render import topology_yaml
from generator.emit.slurm.topology import Block, SlurmTopology, TreeSwitch

NAMES = ("123", "1e3", "y", "0x1f", "on")


def test_number_and_bool_like_names_stay_strings() -> None:
    tree = tuple(TreeSwitch(n, nodes=("gpu001", "gpu002")) for n in NAMES)
    topo = SlurmTopology(
        cluster="c",
        fabric="fat-tree",
        tree=(*tree, TreeSwitch("top", switches=NAMES)),
        flat_reason="",
        tree_notes=(),
        blocks=(Block("1e3", ("gpu001", "gpu002")),),
        block_sizes=(2,),
        block_basis="scalable unit",
        left_out=(),
        block_notes=(),
        plugin="topology/tree",
        dragonfly=False,
        node_groups=(),
    )
    doc = yaml.safe_load(topology_yaml(topo))
    text = str(doc)
    for name in NAMES:
        assert repr(name) in text, (name, text)
    assert "'gpu[001-002]'" in text  # the hostlist, read back as the same string
