"""Small sites share racks (issue 29): a lab's nodes and switches in one rack when units and power allow,
copper inside it, and the rack rules agree with the placement (validate passing means the plan places it).

Oracles are independent of the planner: the fixture's and the catalogue's YAML read raw, sums and run
lengths computed here with exact fractions, the medium picked here from media.yaml as written.
"""

from __future__ import annotations

import copy
import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import REPO, run_cli

from generator.pipeline import check, load_and_resolve
from generator.plan.build import build_plan
from generator.plan.model import Plan

LAB = Path(__file__).resolve().parent / "fixtures" / "lab4-2u-15kw.yaml"
CATALOG = REPO / "blueprints" / "catalog" / "data"
LAB_DATA: dict[str, Any] = yaml.safe_load(LAB.read_text(encoding="utf-8"))
SWITCHES = yaml.safe_load((CATALOG / "switches.yaml").read_text(encoding="utf-8"))
MEDIA = yaml.safe_load((CATALOG / "media.yaml").read_text(encoding="utf-8"))
SERVERS = yaml.safe_load((CATALOG / "servers.yaml").read_text(encoding="utf-8"))
NODES = ["gpu001", "gpu002", "gpu003", "gpu004"]


def _write(tmp_path: Path, data: dict[str, Any], name: str = "bp.yaml") -> Path:
    out = tmp_path / name
    out.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return out


def _variant(tmp_path: Path, **site: Any) -> Path:
    data = copy.deepcopy(LAB_DATA)
    for key, value in site.items():
        if key in ("power_kw", "units", "reserved_units"):
            data["site"]["rack"][key] = value
        else:
            data["site"][key] = value
    return _write(tmp_path, data)


def _plan(path: Path) -> Plan:
    return build_plan(load_and_resolve(path)[1])


def test_the_lab_fits_one_rack_by_the_catalogue_sums() -> None:
    rack_spec = LAB_DATA["site"]["rack"]
    server = LAB_DATA["pools"][0]["spec"]
    leaf = SWITCHES["qm8700"]
    units = 4 * server["rack_units"] + leaf["rack_units"]
    kw = 4 * Fraction(str(server["power_kw"])) + Fraction(leaf["power_w"], 1000)
    assert units <= rack_spec["units"] - rack_spec["reserved_units"] and kw <= rack_spec["power_kw"]

    p = _plan(LAB)
    (rack,) = p.racks
    assert set(rack.devices) == {*NODES, "c-leaf-001"}
    assert rack.purpose == "mixed"
    assert rack.used_units == units
    assert Fraction(str(rack.power_kw)) == kw  # 9.253 kW
    dev = p.device_by_name
    # nodes stacked from the bottom, the switch right above them
    assert sorted(dev[n].u for n in NODES) == [1, 3, 5, 7]
    assert dev["c-leaf-001"].u == 9
    assert [(b.item, b.count) for b in p.bom if b.item == "rack"] == [("rack", 1)]


def _expected_medium(run_m: float, speed: int) -> tuple[str, float]:
    """The catalogue's most preferred medium whose reach at ``speed`` covers the run, and its first
    orderable length at least the run (media.yaml as written)."""
    for mid, m in sorted(MEDIA.items(), key=lambda kv: (kv[1]["preference"], kv[0])):
        reach = m["reach_by_speed_m"].get(speed)
        length = next((L for L in m["lengths_m"] if run_m <= L), None)
        if reach is not None and reach >= run_m and length is not None and length <= reach:
            return mid, float(length)
    raise AssertionError(f"no medium reaches {run_m} m at {speed}G")


def test_same_rack_cables_are_dac_of_the_catalogue_length() -> None:
    p = _plan(LAB)
    dev = p.device_by_name
    links = p.links_of("compute")
    assert len(links) == 8  # 4 nodes x 2 ports
    for link in links:
        a, b = dev[link.a.device], dev[link.b.device]
        assert a.rack == b.rack
        # in-rack run: the units between the ends + the rack's width + the in-rack service loop (model
        # defaults 44.45 mm per U, 0.6 m, 0.5 m: the fixture leaves them unset)
        run = abs(a.u - b.u) * 0.04445 + 0.6 + 0.5
        assert link.run_m == pytest.approx(run, abs=1e-3)
        medium, length = _expected_medium(run, 200)
        assert (link.medium, link.length_m) == (medium, length) == ("dac", 1.5), link
        assert link.part_number == MEDIA["dac"]["part_numbers"][200]


def test_a_second_rack_position_stays_empty_no_aoc(tmp_path: Path) -> None:
    """The issue's second symptom: with two rack positions the switch went apart on 7 m AOCs."""
    p = _plan(_variant(tmp_path, racks_per_row=2))
    assert [r.id for r in p.racks] == ["r01-01"]
    assert {link.medium for link in p.links} == {"dac"}


def test_validate_passes_and_generate_works_for_the_lab(tmp_path: Path) -> None:
    code, out, err = run_cli("validate", str(LAB))
    assert code == 0, out + err
    gcode, gout, gerr = run_cli("generate", str(LAB), "-o", str(tmp_path / "build"), "--quiet")
    assert gcode == 0, gout + gerr


def _line_of(path: Path, key: str) -> int:
    return next(i for i, text in enumerate(path.read_text().splitlines(), 1) if text.strip().startswith(key))


def test_refusal_at_5_kw_is_located_and_exact(tmp_path: Path) -> None:
    src = _variant(tmp_path, power_kw=5)
    checked = check(src)
    errors = {f.rule: f for f in checked.errors}
    assert set(errors) == {"PWR003", "PLN001"}
    per_rack = math.floor(Fraction(5) / Fraction("2.25"))  # 2 nodes by power (by space 40U // 2U = 20)
    need = math.ceil(4 / per_rack)
    assert f"at least {need} racks (gpu 4/{per_rack} = {need})" in errors["PWR003"].message
    loc = errors["PWR003"].location
    assert loc is not None and loc.line == _line_of(src, "racks_per_row:")
    # the plan's own count: the node racks and, nodes and switch not fitting one rack, the default network
    # rack for the unit's leaf (1U fits an empty rack)
    assert errors["PLN001"].path == ("site",)
    assert f"needs {need + 1} racks ({need} compute, 1 network)" in errors["PLN001"].message
    assert "site has 1 row(s) x 1 racks = 1" in errors["PLN001"].message
    gcode, _, _ = run_cli("generate", str(src), "-o", str(tmp_path / "build"), "--quiet")
    assert gcode == 1 and not (tmp_path / "build").exists()


def test_an_explicit_network_rack_is_kept(tmp_path: Path) -> None:
    p = _plan(_variant(tmp_path, racks_per_row=2, switch_placement="network-rack"))
    purposes = {r.id: (r.purpose, set(r.devices)) for r in p.racks}
    assert purposes == {"r01-01": ("compute", set(NODES)), "r01-02": ("network", {"c-leaf-001"})}


def test_servers_over_one_rack_keep_the_existing_layout(tmp_path: Path) -> None:
    """Mixed case: 8 nodes at 2.25 kW in 15 kW racks (6 per rack): two compute racks and the unit's network
    rack after them, as before; nothing shares."""
    data = copy.deepcopy(LAB_DATA)
    data["pools"][0]["count"] = 8
    data["site"]["racks_per_row"] = 4
    p = _plan(_write(tmp_path, data))
    layout = [(r.id, r.purpose, len(r.devices)) for r in p.racks]
    assert layout == [("r01-01", "compute", 6), ("r01-02", "compute", 2), ("r01-03", "network", 1)]


def test_a_head_node_and_management_switches_share_the_lab_rack(tmp_path: Path) -> None:
    """Two pools and two fabrics, all within one rack: PWR003 used to count a rack per pool (2 > 1)."""
    data = copy.deepcopy(LAB_DATA)
    data["pools"][0]["spec"]["nics"].append(
        {"purpose": "management", "model": "x710", "count": 1, "speed_gbps": 1}
    )
    data["pools"].append({"name": "head", "role": "management", "count": 1, "server": "cpu-1u"})
    data["fabrics"]["management"] = {
        "technology": "ethernet-1",
        "topology": {"kind": "leaf-spine", "switch": "sn2201", "spine_switch": "sn4600c"},
    }
    src = _write(tmp_path, data)
    assert check(src).errors == []
    p = _plan(src)
    (rack,) = p.racks
    switch_u = sum(SWITCHES[d.model]["rack_units"] for d in p.devices if d.kind == "switch")
    assert rack.used_units == 4 * 2 + SERVERS["cpu-1u"]["rack_units"] + switch_u
    assert {d.name for d in p.devices} == set(rack.devices)


# The rules and the placement agree: for every budget, draw, node count, site size and switch placement,
# validate finds no error exactly when the plan places the design.
BUDGETS = [4, 5, 6, 9.5, 13.5, 15, 20]
DRAWS = [2.25, 3.3, 4.5]
COUNTS = [1, 2, 4, 5, 8]
SITES = [1, 2, 3]
MODES = [None, "network-rack", "top-of-rack"]


def _grid_case(budget: float, kw: float, count: int, racks: int, mode: str | None, head: bool) -> dict:
    data = copy.deepcopy(LAB_DATA)
    data["site"]["rack"]["power_kw"] = budget
    data["site"]["racks_per_row"] = racks
    if mode is not None:
        data["site"]["switch_placement"] = mode
    data["pools"][0]["count"] = count
    data["pools"][0]["spec"]["power_kw"] = kw
    if head:
        data["pools"].append({"name": "head", "role": "login", "count": 1, "server": "cpu-1u"})
    return data


@pytest.mark.parametrize("head", [False, True], ids=["gpu-only", "with-head"])
def test_validate_verdict_equals_whether_the_plan_places_it(tmp_path: Path, head: bool) -> None:
    disagree = []
    one_rack = 0
    for budget in BUDGETS:
        for kw in DRAWS:
            for count in COUNTS:
                for racks in SITES:
                    for mode in MODES:
                        src = _write(tmp_path, _grid_case(budget, kw, count, racks, mode, head))
                        checked = check(src)
                        plan = checked.context.plan  # the plan `generate` builds (None: it refuses)
                        if (not checked.errors) != (plan is not None):
                            case = (budget, kw, count, racks, mode, [f.rule for f in checked.errors])
                            disagree.append(case)
                        rack_rules = {f.rule for f in checked.errors} & {"PWR001", "PWR002", "PWR003"}
                        if rack_rules and plan is not None:  # a rack rule never refuses what the plan places
                            disagree.append((budget, kw, count, racks, mode, sorted(rack_rules)))
                        one_rack += plan is not None and len(plan.racks) == 1 and count > 1
    assert not disagree, disagree[:10]
    assert one_rack > 50  # the grid does exercise shared racks


@pytest.mark.parametrize("mode", MODES, ids=["default", "network-rack", "top-of-rack"])
def test_the_refusal_names_the_racks_a_big_enough_site_gets(tmp_path: Path, mode: str | None) -> None:
    """Exact, not a lower bound: a one-rack site refused with "needs N racks" is planned in N racks once the
    row has N positions (or more)."""
    checked_any = 0
    for budget in BUDGETS:
        for count in COUNTS:
            small = check(_write(tmp_path, _grid_case(budget, 2.25, count, 1, mode, True)))
            refusal = [f.message for f in small.errors if f.rule == "PLN001" and "racks (" in f.message]
            if not refusal:
                continue
            need = int(refusal[0].split("needs ", 1)[1].split(" racks", 1)[0])
            for racks in (need, need + 3):
                roomy = check(_write(tmp_path, _grid_case(budget, 2.25, count, racks, mode, True)))
                plan = roomy.context.plan
                assert plan is not None and len(plan.racks) == need, (
                    budget,
                    count,
                    mode,
                    racks,
                    roomy.errors,
                )
            checked_any += 1
    assert checked_any >= 5
