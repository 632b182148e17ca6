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
