"""An appliance's declared link on a leaf port the fabric's growth reserves is rule TOP019's located error."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli

BASE = """apiVersion: cluster-blueprint/v1
name: growth
site: {name: dc1, rows: 1, racks_per_row: 8, rack: {units: 48, power_kw: 44}}
pools:
  - {name: dgx, role: gpu, count: 3, server: dgx-h100, placement: {nodes_per_rack: 2}}
  - {name: mgmt, role: management, count: 2, server: cpu-1u}
fabrics:
  compute:
    technology: infiniband-ndr
    topology: TOPOLOGY
    subnet_manager: {kind: opensm, ha: true}
appliances:
  - name: spare01
    links: [{switch: LEAF, port: 40}, {switch: LEAF, port: PORT}]
    rack_units: 1
    power_w: 300
"""
RAIL = "{kind: fat-tree, switch: qm9700, rail_optimized: true, scalable_unit: 4, growth_nodes: 4"

# (topology, the leaf and site port the 4th DGX's first cable takes once growth_nodes 4 is installed)
CASES = {
    "rail-optimised": (RAIL + "}", "c-leaf-su1-r0", 4),
    "rail-optimised-last-rail": (RAIL + "}", "c-leaf-su1-r7", 4),
    # the site's layout puts builder port 4 on site port 1
    "port-layout": (RAIL + ", port_layout: {down: '4,3,2,1', up: 5-8}}", "c-leaf-su1-r0", 1),
    # 3 DGX fill terminals 1-24 of the flat leaf; the 4th DGX takes 25-32
    "flat": ("{kind: fat-tree, switch: qm9700, rail_optimized: false, growth_nodes: 4}", "c-leaf-001", 25),
}


def _blueprint(tmp_path: Path, topology: str, leaf: str, port: int) -> Path:
    out = tmp_path / "growth.yaml"
    out.write_text(BASE.replace("TOPOLOGY", topology).replace("LEAF", leaf).replace("PORT", str(port)))
    return out


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), start=1) if needle in ln)


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_link_on_a_growth_port_is_a_located_error(tmp_path: Path, case: str) -> None:
    topology, leaf, port = CASES[case]
    bp = _blueprint(tmp_path, topology, leaf, port)
    code, out, err = run_cli("validate", str(bp))
    errors = [ln for ln in out.splitlines() if " error TOP019 " in ln]
    assert code == 1 and len(errors) == 1, out + err
    assert errors[0].startswith(f"{bp}:{_line_of(bp, 'links:')}:"), errors
    assert (
        f"appliance `spare01`: port {port} of {leaf} is reserved for growth: the compute fabric's "
        "growth_nodes 4 cables its node 4 there" in errors[0]
    ), errors
    code, out, err = run_cli("generate", str(bp), "-o", str(tmp_path / "out"), "-q")
    assert code == 1 and not (tmp_path / "out").exists(), out + err


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_link_on_a_port_growth_leaves_free_passes(tmp_path: Path, case: str) -> None:
    topology, leaf, _port = CASES[case]
    bp = _blueprint(tmp_path, topology, leaf, 41)
    code, out, err = run_cli("validate", str(bp))
    assert code == 0 and "TOP019" not in out, out + err


def test_without_growth_nodes_the_port_is_the_appliances(tmp_path: Path) -> None:
    """The same port with no growth declared: nothing reserves it."""
    bp = _blueprint(tmp_path, RAIL.replace(", growth_nodes: 4", "") + "}", "c-leaf-su1-r0", 4)
    code, out, err = run_cli("validate", str(bp))
    assert code == 0 and "TOP019" not in out, out + err


# --- the storage and management leaf-spines grow with the compute fabric's units ---------------------------

FABRICS = """  storage:
    technology: infiniband-ndr200
    topology: {kind: leaf-spine, switch: qm9700}
    subnet_manager: {kind: opensm, ha: true}
  management:
    technology: ethernet-1
    topology: {kind: leaf-spine, switch: sn2201, spine_switch: sn4600c}
appliances:
"""
FLAT = "{kind: fat-tree, switch: qm9700, rail_optimized: false, growth_nodes: GROW}"


def _grown(tmp_path: Path, count: int, compute: str, appliance: str) -> Path:
    text = (
        BASE.replace("count: 3, server: dgx-h100", f"count: {count}, server: dgx-h100")
        .replace("TOPOLOGY", compute)
        .replace("appliances:\n", FABRICS)
    )
    text = text[: text.index("  - name: spare01")] + appliance + "\n"
    out = tmp_path / f"grown{count}.yaml"
    out.write_text(text)
    return out


def _plan(bp: Path):  # type: ignore[no-untyped-def]
    from generator.pipeline import load_and_resolve
    from generator.plan.build import build_plan

    return build_plan(load_and_resolve(bp)[1])


@pytest.mark.parametrize("fabric", ["storage", "management"])
@pytest.mark.parametrize(
    "compute",
    [RAIL.replace("growth_nodes: 4", "growth_nodes: GROW") + "}", FLAT],
    ids=["rail-optimised", "flat"],
)
def test_ports_n_on_a_leaf_spine_keeps_its_port_as_the_compute_fabric_grows(
    tmp_path: Path, fabric: str, compute: str
) -> None:
    """3 DGX of growth_nodes 8: the 4th joins the first unit and takes the next port of that unit's storage
    and management leaves, where `ports: 1` had put the appliance (it moved when the 4th DGX came)."""
    appliance = f"  - {{name: spare01, fabric: {fabric}, ports: 1, rack_units: 1, power_w: 300}}"
    cables = {}
    for count in (3, 4):
        plan = _plan(_grown(tmp_path, count, compute.replace("GROW", "8"), appliance))
        cables[count] = [(ln.a.device, ln.a.port) for ln in plan.links if ln.layer == "appliance_switch"]
        nodes = {(ln.b.device, ln.b.port) for ln in plan.links if ln.layer == "node_leaf"}
        assert len(cables[count]) == 1 and not set(cables[count]) & nodes
    assert cables[3] == cables[4], cables


def test_a_link_on_a_storage_leaf_port_the_next_node_takes_is_top019(tmp_path: Path) -> None:
    appliance = "  - {name: spare01, fabric: storage, links: [{switch: s-leaf-su1-04, port: PORT}]}"
    compute = RAIL.replace("growth_nodes: 4", "growth_nodes: 8") + "}"
    four = _plan(_grown(tmp_path, 4, compute, appliance.replace("PORT", "40")))
    taken = {ln.b.port for ln in four.links if ln.layer == "node_leaf" and ln.b.device == "s-leaf-su1-04"}
    assert taken == {"1", "2", "3", "4"}  # the 4th DGX's storage cable, once it is installed
    bp = _grown(tmp_path, 3, compute, appliance.replace("PORT", "4"))
    code, out, err = run_cli("validate", str(bp))
    errors = [ln for ln in out.splitlines() if " error TOP019 " in ln]
    assert code == 1 and len(errors) == 1, out + err
    assert errors[0].startswith(f"{bp}:{_line_of(bp, 's-leaf-su1-04')}:"), errors
    assert (
        "appliance `spare01`: port 4 of s-leaf-su1-04 is reserved for growth: the compute fabric's "
        "growth_nodes 8 cables its node 4 there" in errors[0]
    ), errors
    code, out, err = run_cli("validate", str(_grown(tmp_path, 3, compute, appliance.replace("PORT", "5"))))
    assert "TOP019" not in out, out + err
