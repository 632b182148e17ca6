"""Appliances a reviewer's fuzz found mishandled: on a spine (ftree), named like keywords or like a switch in
another case, on ports growth needs, and links naming a switch in another case."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli

BASE = """apiVersion: cluster-blueprint/v1
name: fuzz
site: {name: dc1, rows: 1, racks_per_row: 8, rack: {units: 48, power_kw: 44}}
pools:
  - {name: dgx, role: gpu, count: 4, server: dgx-h100, placement: {nodes_per_rack: 2}}
  - {name: mgmt, role: management, count: 2, server: cpu-1u}
fabrics:
  compute:
    technology: infiniband-ndr
    topology: {kind: fat-tree, tiers: 2, switch: qm9700, rail_optimized: true, scalable_unit: 4}
    subnet_manager: {kind: opensm, ha: true}
appliances:
  - {name: spare01, links: [{switch: c-leaf-su1-r0, port: 40}], rack_units: 1, power_w: 300}
"""


def _blueprint(tmp_path: Path, *edits: tuple[str, str]) -> Path:
    text = BASE
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    out = tmp_path / "fuzz.yaml"
    out.write_text(text)
    return out


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), start=1) if needle in ln)


ON_SPINE = ("{switch: c-leaf-su1-r0, port: 40}", "{switch: c-spine-001, port: 40}")
EXPLICIT_FTREE = ("{kind: opensm, ha: true}", "{kind: opensm, ha: true, routing_engine: ftree}")


def test_an_appliance_on_a_spine_makes_the_default_engine_minhop(tmp_path: Path) -> None:
    """OpenSM's ftree takes hosts on leaves only (real OpenSM: tests/realtools/test_opensm_ftree.py)."""
    for edits, engine in (((), "ftree"), ((ON_SPINE,), "minhop")):
        out = tmp_path / engine
        code, _o, err = run_cli("generate", str(_blueprint(tmp_path, *edits)), "-o", str(out), "-q")
        assert code == 0, err
        confs = list((out / "subnet_manager" / "compute").glob("*/opensm.conf"))
        assert len(confs) == 2  # the HA pair
        for conf in confs:
            assert f"\nrouting_engine {engine}\n" in conf.read_text()


def test_an_explicit_ftree_with_an_appliance_on_a_spine_is_net028(tmp_path: Path) -> None:
    code, out, err = run_cli("validate", str(_blueprint(tmp_path, EXPLICIT_FTREE)))
    assert code == 0 and "NET028" not in out, out + err
    bp = _blueprint(tmp_path, EXPLICIT_FTREE, ON_SPINE)
    code, out, err = run_cli("validate", str(bp))
    errors = [ln for ln in out.splitlines() if " error NET028 " in ln]
    assert code == 1 and errors, out + err
    assert errors[0].startswith(f"{bp}:{_line_of(bp, 'routing_engine')}:")
    assert "appliance spare01 is cabled to spine c-spine-001" in errors[0] and "ERR AB2B" in errors[0]


def test_appliance_names_are_checked_as_host_names(tmp_path: Path) -> None:
    """`all` is Ansible's every-host group and `localhost` the operator's machine: appliances.yml hosts."""
    bp = _blueprint(
        tmp_path,
        ("  - {name: spare01,", "  - {name: localhost,"),
        ("power_w: 300}\n", "power_w: 300}\n  - {name: all, ports: 1, rack_units: 1, power_w: 300}\n"),
    )
    code, out, err = run_cli("validate", str(bp))
    errors = [ln for ln in out.splitlines() if " error PLN002 " in ln]
    assert code == 1 and len(errors) == 2, out + err
    assert errors[0].startswith(f"{bp}:{_line_of(bp, 'localhost')}:") and "appliance `localhost`" in errors[0]
    assert (
        errors[1].startswith(f"{bp}:{_line_of(bp, 'name: all')}:")
        and "appliance `all`: reserved" in errors[1]
    )


def test_an_appliance_named_like_a_switch_in_another_case_is_refused(tmp_path: Path) -> None:
    """DNS, LLDP and OpenSM compare names without case: switch `SPARE01` and appliance `spare01` are one name
    (the schema keeps host and appliance names lower case; a switch's site name may not be)."""
    bp = _blueprint(tmp_path, ("scalable_unit: 4}", "scalable_unit: 4, names: {spine: {names: [SPARE01]}}}"))
    code, out, err = run_cli("validate", str(bp))
    errors = [ln for ln in out.splitlines() if " error PLN001 " in ln]
    assert code == 1 and errors, out + err
    assert "the name is also a switch of the compute fabric (`SPARE01`) (names are compared" in errors[0]
    assert errors[0].startswith(f"{bp}:{_line_of(bp, 'name: spare01')}:"), errors


def _appliance_cables(bp: Path) -> list[tuple[str, str]]:
    from generator.pipeline import load_and_resolve
    from generator.plan.build import build_plan

    plan = build_plan(load_and_resolve(bp)[1])
    return [(ln.a.device, ln.a.port) for ln in plan.links if ln.layer == "appliance_switch"]


def _node_ports(bp: Path) -> set[tuple[str, str]]:
    from generator.pipeline import load_and_resolve
    from generator.plan.build import build_plan

    plan = build_plan(load_and_resolve(bp)[1])
    return {(ln.b.device, ln.b.port) for ln in plan.links if ln.layer == "node_leaf"}


@pytest.mark.parametrize(
    "topology",
    [
        "{kind: fat-tree, tiers: 2, switch: qm9700, rail_optimized: true, scalable_unit: 4, growth_nodes: 4}",
        "{kind: fat-tree, tiers: 2, switch: qm9700, rail_optimized: false, growth_nodes: 4}",
        "{kind: fat-tree, tiers: 2, switch: qm9700, rail_optimized: true, scalable_unit: 4, growth_nodes: 4, "
        "port_layout: {down: '4,3,2,1', up: 5-8}}",
    ],
    ids=["rail-optimised", "flat", "port-layout"],
)
def test_growing_within_growth_nodes_keeps_the_appliance_cable(tmp_path: Path, topology: str) -> None:
    """A `ports: 1` appliance is cabled to a port no node takes as the fabric grows to its growth_nodes: the
    4th DGX went to the port the appliance had with 3 and moved its cable."""
    edits = (
        ("{kind: fat-tree, tiers: 2, switch: qm9700, rail_optimized: true, scalable_unit: 4}", topology),
        ("links: [{switch: c-leaf-su1-r0, port: 40}]", "ports: 1"),
    )
    cables = {}
    for count in (3, 4):
        bp = _blueprint(tmp_path, ("count: 4, server: dgx-h100", f"count: {count}, server: dgx-h100"), *edits)
        cables[count] = _appliance_cables(bp)
        assert not set(cables[count]) & _node_ports(bp)
    assert len(cables[3]) == 1 and cables[3] == cables[4]


def test_a_link_and_rack_in_another_case_name_the_plans_switch_and_rack(tmp_path: Path) -> None:
    """`ib-su1-r1` is the site's `IB-SU1-R1` (switch names are one name in any case): it was "no switch"."""
    bp = _blueprint(
        tmp_path,
        ("scalable_unit: 4}", "scalable_unit: 4, names: {leaf: {template: 'IB-SU{su}-R{rail}'}}}"),
        ("rack: {units: 48", "rack_names: {template: 'R{row:02}-{position:02}'}, rack: {units: 48"),
        ("{switch: c-leaf-su1-r0, port: 40}]", "{switch: ib-su1-r1, port: 40}], rack: r01-08"),
    )
    code, out, err = run_cli("validate", str(bp))
    assert code == 0, out + err
    from generator.pipeline import load_and_resolve
    from generator.plan.build import build_plan

    plan = build_plan(load_and_resolve(bp)[1])
    cables = [(ln.a.device, ln.a.port) for ln in plan.links if ln.layer == "appliance_switch"]
    assert cables == [("IB-SU1-R1", "40")] and plan.device_by_name["spare01"].rack == "R01-08"
