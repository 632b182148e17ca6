"""NET029: an OpenSM routing engine that uses service levels of its own, with the blueprint's service_level.

dfsssp (and lash) hand each path an SL, one virtual lane each, that the generated qos_sl2vl (the NCCL SL
alone on VL1, every other SL on VL0) merges again, and NCCL never asks for; torus-2QoS writes the SL2VL maps
itself and ignores qos_sl2vl (torus-2QoS(8)). `validate` said nothing of either."""

from __future__ import annotations

from pathlib import Path

import pytest

from blueprints.catalog import subnet_managers
from generator.findings import Finding, Severity
from generator.pipeline import check

HEAD = """apiVersion: cluster-blueprint/v1
name: sl-routing
site: {rows: 2, racks_per_row: 8}
pools:
  - {name: gpu, role: gpu, count: 8, server: dgx-h100, placement: {nodes_per_rack: 2}}
fabrics:
  compute:
    technology: infiniband-ndr
"""
TOPOLOGY = {
    "hypercube": "    topology: {kind: hypercube, dimension: 2, attach: switch, switch: qm9700, nodes_per_switch: 2}\n",
    "torus": "    topology: {kind: torus, dimensions: [2, 2], attach: switch, switch: qm9700, nodes_per_switch: 2}\n",
    "fat-tree": "    topology: {kind: fat-tree, tiers: 2, switch: qm9700, rail_optimized: true, scalable_unit: 4}\n",
}


def _net029(tmp_path: Path, topology: str, sm: str) -> tuple[list[Finding], list[str]]:
    path = tmp_path / "bp.yaml"
    path.write_text(HEAD + TOPOLOGY[topology] + f"    subnet_manager: {{kind: opensm, {sm}}}\n")
    lines = path.read_text().splitlines()
    found = [f for f in check(path).findings if f.rule == "NET029"]
    return found, [lines[f.location.line - 1] for f in found if f.location is not None]


@pytest.mark.parametrize("engine", ["dfsssp"])
def test_an_engine_with_path_sls_and_a_service_level_warns_at_the_service_level(
    tmp_path: Path, engine: str
) -> None:
    found, lines = _net029(tmp_path, "hypercube", f"routing_engine: {engine}, service_level: 3")
    assert [f.severity for f in found] == [Severity.WARNING]
    assert found[0].path[-1] == "service_level" and "service_level: 3" in lines[0]
    assert "NCCL_IB_SL=3" in found[0].message and "VL0" in found[0].message


def test_torus_2qos_ignores_the_generated_sl2vl_so_it_is_an_error(tmp_path: Path) -> None:
    found, _ = _net029(tmp_path, "torus", "routing_engine: torus-2QoS, service_level: 1")
    assert [f.severity for f in found] == [Severity.ERROR]
    assert "ignores the generated qos_sl2vl" in found[0].message


@pytest.mark.parametrize(
    ("topology", "sm"),
    [
        ("fat-tree", "routing_engine: dfsssp"),  # a tree's shortest paths need one lane: SL 0 is enough
        ("fat-tree", "routing_engine: dfsssp, service_level: 0"),
        ("hypercube", "routing_engine: nue"),  # the example's and init's engine: one VL, deadlock-free
        ("hypercube", "routing_engine: nue, service_level: 3"),  # nue_max_num_vls stays 1: no SL of its own
        ("hypercube", "routing_engine: sssp, service_level: 3"),  # sssp skips dfsssp's lane assignment
        ("fat-tree", "routing_engine: ftree, service_level: 3"),
        ("fat-tree", "service_level: 3"),  # the default engine (ftree) uses no SL
    ],
)
def test_engines_without_sls_of_their_own_or_no_service_level_pass(
    tmp_path: Path, topology: str, sm: str
) -> None:
    assert _net029(tmp_path, topology, sm)[0] == []


def test_the_catalogue_engines_are_opensm_engines_and_only_torus_2qos_writes_sl2vl() -> None:
    upstream = subnet_managers._document().flavours["opensm-upstream"].routing_engines
    engines = subnet_managers._document().sl_routing
    assert set(engines) <= set(upstream)
    assert [e for e, how in engines.items() if how.writes_sl2vl] == ["torus-2QoS"]
    assert subnet_managers.sl_routing("ftree") is None


@pytest.mark.parametrize("topology", ["hypercube", "torus"])
@pytest.mark.parametrize("sm", ["routing_engine: dfsssp", "routing_engine: dfsssp, service_level: 0"])
def test_dfsssp_on_a_topology_with_cycles_warns_even_at_service_level_0(
    tmp_path: Path, topology: str, sm: str
) -> None:
    """NCCL stays on SL 0 and asks for no path SL, while dfsssp spreads a hypercube's paths over several
    lanes (measured in OpenSM 3.3.23 on ibsim: "Virtual Lanes needed: 4"): the hypercube example used it."""
    found, lines = _net029(tmp_path, topology, sm)
    assert [f.severity for f in found] == [Severity.WARNING]
    assert found[0].path[-1] == "subnet_manager" and "subnet_manager" in lines[0]
    assert "NCCL_IB_SL=0" in found[0].message and "topology with cycles" in found[0].message


def test_the_hypercube_example_and_init_starters_route_with_an_engine_nccl_keeps_deadlock_free() -> None:
    from blueprints.catalog.load import default_catalog
    from generator.perf.starter import fabric_section

    example = Path(__file__).resolve().parents[2] / "examples" / "hypercube-research.yaml"
    assert [f.rule for f in check(example).findings if f.rule == "NET029"] == []
    for kind in ("dragonfly", "hypercube", "torus"):  # init's InfiniBand starters off a tree
        section = fabric_section(default_catalog(), "infiniband-ndr", {"kind": kind, "switch": "qm9700"})
        assert section["subnet_manager"]["routing_engine"] == "nue", kind
