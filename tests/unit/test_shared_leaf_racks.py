"""Network racks shared by units (issue 24, "one leaf rack shared by several units"): `site.network_racks`
puts the switches of the listed units into one rack, stacked, measured from where they really are.

Oracles are independent of the planner: the rack of each leaf follows from the declared groups read here;
heights and draws from the catalogue's YAML as written, summed with exact fractions; run lengths from the
site's geometry (the model's documented defaults) and the racks' rows and positions; the medium picked here
from media.yaml as written.
"""

from __future__ import annotations

import copy
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import EXAMPLES, REPO, run_cli

from generator.pipeline import check, load_and_resolve
from generator.plan.build import build_plan
from generator.plan.model import Plan

CATALOG = REPO / "blueprints" / "catalog" / "data"
SWITCHES = yaml.safe_load((CATALOG / "switches.yaml").read_text(encoding="utf-8"))
MEDIA = yaml.safe_load((CATALOG / "media.yaml").read_text(encoding="utf-8"))
SUPERPOD: dict[str, Any] = yaml.safe_load((EXAMPLES / "superpod-h100-4su.yaml").read_text(encoding="utf-8"))
PAIRS = [["su1", "su2"], ["su3", "su4"]]


def _write(tmp_path: Path, data: dict[str, Any], name: str = "bp.yaml") -> Path:
    out = tmp_path / name
    out.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return out


def _superpod(tmp_path: Path, groups: list[list[str]] | None, **rack: Any) -> Path:
    data = copy.deepcopy(SUPERPOD)
    if groups is not None:
        data["site"]["network_racks"] = [{"units": g} for g in groups]
    data["site"]["rack"].update(rack)
    return _write(tmp_path, data)


def _plan(path: Path) -> Plan:
    return build_plan(load_and_resolve(path)[1])


def _line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if line.strip() == text)


def test_the_leaves_of_each_pair_share_one_rack(tmp_path: Path) -> None:
    p = _plan(_superpod(tmp_path, PAIRS))
    dev = p.device_by_name
    group_of = {int(label[2:]): i for i, g in enumerate(PAIRS) for label in g}  # su<N> -> its entry
    leaves = [d for d in p.devices if d.fabric == "compute" and d.role == "leaf"]
    assert len(leaves) == 4 * 8  # 4 SUs x 8 rails
    rack_of_group: dict[int, set[str]] = {}
    for leaf in leaves:
        assert leaf.su is not None and leaf.rack is not None
        rack_of_group.setdefault(group_of[leaf.su], set()).add(leaf.rack)
    assert all(len(racks) == 1 for racks in rack_of_group.values()), rack_of_group
    shared = [next(iter(rack_of_group[i])) for i in range(len(PAIRS))]
    assert len(set(shared)) == len(PAIRS)
    racks = {r.id: r for r in p.racks}
    for rid in shared:
        assert racks[rid].purpose == "network"
        assert not [n for n in racks[rid].devices if dev[n].kind == "node"]
    # one network rack per pair instead of one per SU: no other rack holds an SU's switch
    su_switch_racks = {d.rack for d in p.devices if d.kind == "switch" and d.su is not None}
    assert su_switch_racks == set(shared)


def test_the_shared_rack_follows_the_first_units_compute_racks(tmp_path: Path) -> None:
    p = _plan(_superpod(tmp_path, PAIRS))
    per_row = SUPERPOD["site"]["racks_per_row"]
    racks = {r.id: r for r in p.racks}
    slot = {rid: (r.row - 1) * per_row + r.position - 1 for rid, r in racks.items()}
    for first, second in PAIRS:
        n_first, n_second = int(first[2:]), int(second[2:])
        nodes = [d for d in p.devices if d.kind == "node" and d.su in (n_first, n_second)]
        shared = {d.rack for d in p.devices if d.kind == "switch" and d.su == n_first}
        (rid,) = shared
        last_first = max(slot[d.rack] for d in nodes if d.su == n_first)  # type: ignore[index]
        first_second = min(slot[d.rack] for d in nodes if d.su == n_second)  # type: ignore[index]
        assert slot[rid] == last_first + 1
        assert first_second > slot[rid]


def test_switches_are_stacked_within_the_racks_units_and_power(tmp_path: Path) -> None:
    src = _superpod(tmp_path, PAIRS)
    p = _plan(src)
    dev = p.device_by_name
    budget = Fraction(str(SUPERPOD["site"]["rack"]["power_kw"]))
    usable = SUPERPOD["site"]["rack"]["units"] - 2  # reserved_units: the model's default, unset here
    shared = {d.rack for d in p.devices if d.kind == "switch" and d.su is not None}
    for rack in (r for r in p.racks if r.id in shared):
        members = sorted((dev[n] for n in rack.devices), key=lambda d: d.u or 0)
        heights = [SWITCHES[d.model]["rack_units"] for d in members]
        kw = sum(Fraction(SWITCHES[d.model]["power_w"], 1000) for d in members)
        u = 1
        for d, h in zip(members, heights, strict=True):  # bottom up, each right above the last
            assert d.u == u, (rack.id, d.name)
            u += h
        assert rack.used_units == sum(heights) <= usable
        assert Fraction(str(rack.power_kw)).limit_denominator(1000) == kw <= budget
        # both units' switches: 2 SUs x (8 rails + 4 storage leaves) QM9700 and 2 management SN2201
        assert sum(1 for d in members if d.fabric == "compute" and d.role == "leaf") == 16
        assert sorted(d.model for d in members) == ["qm9700"] * 24 + ["sn2201"] * 2


def _expected_medium(run_m: float, speed: float, infiniband: bool) -> tuple[str, float]:
    """media.yaml as written: the most preferred medium (ties by id) whose reach at ``speed`` covers the run,
    carrying InfiniBand at that rate, and its first orderable length at least the run within that reach."""
    for mid, m in sorted(MEDIA.items(), key=lambda kv: (kv[1]["preference"], kv[0])):
        reach = m["reach_by_speed_m"].get(int(speed))
        ib_max = m.get("infiniband_max_gbps")
        if reach is None or reach < run_m or (infiniband and ib_max is not None and speed > ib_max):
            continue
        length = next((L for L in m["lengths_m"] if run_m - 1e-9 <= L), None)
        if length is not None and length <= reach:
            return mid, float(length)
    raise AssertionError(f"no medium reaches {run_m} m at {speed}G")


# the site's names (a template) and the racks it names for each pair: row 1 position 5 (amid su1's compute
# racks), row 3 position 1 (before su3's); written in another case than the template renders
NAMES = {"template": "A{row:02}-R{position:02}"}
NAMED = [("a01-r05", (1, 5)), ("A03-r01", (3, 1))]


def _named(tmp_path: Path, names: dict[str, Any] | None = NAMES, racks: list[str] | None = None) -> Path:
    data = copy.deepcopy(SUPERPOD)
    racks = racks or [name for name, _ in NAMED]
    data["site"]["network_racks"] = [{"units": g, "rack": r} for g, r in zip(PAIRS, racks, strict=True)]
    if names is not None:
        data["site"]["rack_names"] = names
    return _write(tmp_path, data)


def test_a_named_rack_holds_the_leaves_of_its_units(tmp_path: Path) -> None:
    p = _plan(_named(tmp_path))
    dev = p.device_by_name
    racks = {r.id: r for r in p.racks}
    for group, (_, (row, position)) in zip(PAIRS, NAMED, strict=True):
        rid = f"A{row:02}-R{position:02}"  # the template rendered here
        assert (racks[rid].row, racks[rid].position, racks[rid].purpose) == (row, position, "network")
        sus = {int(label[2:]) for label in group}
        leaves = {d.name for d in p.devices if d.fabric == "compute" and d.role == "leaf" and d.su in sus}
        assert len(leaves) == 16 and leaves <= set(racks[rid].devices)
        assert not [n for n in racks[rid].devices if dev[n].kind == "node"]
    # the fill goes around the named slots: su1's 8 compute racks are A01-R01..R04 and R06..R09
    su1 = sorted({d.rack for d in p.devices if d.kind == "node" and d.su == 1})  # type: ignore[type-var]
    assert su1 == [f"A01-R{p:02}" for p in (1, 2, 3, 4, 6, 7, 8, 9)]


def test_a_default_rack_id_names_a_rack_too(tmp_path: Path) -> None:
    p = _plan(_named(tmp_path, names=None, racks=["r02-12", "r05-01"]))
    dev = p.device_by_name
    for rid, sus in (("r02-12", (1, 2)), ("r05-01", (3, 4))):
        rack = next(r for r in p.racks if r.id == rid)
        assert {dev[n].su for n in rack.devices if dev[n].fabric == "compute"} == set(sus)


def test_a_rack_the_site_does_not_have_is_located(tmp_path: Path) -> None:
    src = _named(tmp_path, racks=["A01-R05", "B07"])
    errors = check(src).errors
    assert [(f.rule, f.path) for f in errors] == [("PLN001", ("site", "network_racks", 1, "rack"))]
    assert errors[0].location is not None and errors[0].location.line == _line_of(src, "rack: B07")
    assert "`B07`" in errors[0].message and "A01-R01 ... A06-R12, 72 in all" in errors[0].message


def test_one_rack_named_by_two_entries_is_a_schema_error(tmp_path: Path) -> None:
    code, out, err = run_cli("validate", str(_named(tmp_path, racks=["A01-R05", "a01-r05"])))
    assert code == 2 and "a01-r05" in out + err, out + err


@pytest.mark.parametrize("named", [False, True], ids=["after-first-unit", "named-racks"])
def test_cable_runs_are_measured_from_the_shared_rack(tmp_path: Path, named: bool) -> None:
    p = _plan(_named(tmp_path) if named else _superpod(tmp_path, PAIRS))
    dev = p.device_by_name
    racks = {r.id: r for r in p.racks}
    units = SUPERPOD["site"]["rack"]["units"]
    # the model's documented defaults (blueprints/models/site.py), none set by the example
    unit_m, tray_m, width_m, depth_m, aisle_m, slack_m = 0.04445, 0.5, 0.6, 1.2, 1.2, 1.5
    crossing = 0
    # the UFM appliances' cables have no rack until their size is declared (NET024): not measured
    links = [x for x in p.links_of("compute") if dev[x.a.device].rack and dev[x.b.device].rack]
    assert len(links) > 127 * 8
    for link in links:
        a, b = dev[link.a.device], dev[link.b.device]
        ra, rb = racks[a.rack], racks[b.rack]  # type: ignore[index]
        assert ra.id != rb.id  # no node shares a rack with a switch here
        run = (
            (units - a.u) * unit_m  # type: ignore[operator]
            + (units - b.u) * unit_m  # type: ignore[operator]
            + 2 * tray_m
            + abs(ra.position - rb.position) * width_m
            + abs(ra.row - rb.row) * (depth_m + aisle_m)
            + slack_m
        )
        assert link.run_m == pytest.approx(run, abs=1e-3), link
        assert (link.medium, link.length_m) == _expected_medium(run, link.speed_gbps, True), link
        crossing += link.layer == "node_leaf" and ra.row != rb.row
    # su2 and su4 are cabled to the rack of su1 and su3, a row away: 2 SUs x 32 slots less the free one,
    # 8 rails each (127 DGX: the free node slot is in su4)
    assert crossing == (32 + 31) * 8


def test_one_entry_per_unit_is_the_default_layout(tmp_path: Path) -> None:
    """Each unit alone in its entry: its own network rack, as without the fact (all fit one rack here)."""
    alone = _plan(_superpod(tmp_path, [[f"su{i}"] for i in range(1, 5)]))
    default = _plan(_write(tmp_path, SUPERPOD, "default.yaml"))
    assert [(r.id, r.purpose, r.devices) for r in alone.racks] == [
        (r.id, r.purpose, r.devices) for r in default.racks
    ]
    assert [(x.id, x.medium, x.length_m) for x in alone.links] == [
        (x.id, x.medium, x.length_m) for x in default.links
    ]


def test_too_much_draw_for_one_rack_is_refused_at_the_entry(tmp_path: Path) -> None:
    # all four SUs in one rack: the compute leaves alone draw 32 x 1720 W = 55.04 kW > 44 kW
    leaf = SWITCHES["qm9700"]
    assert 32 * Fraction(leaf["power_w"], 1000) > SUPERPOD["site"]["rack"]["power_kw"]
    assert 32 * leaf["rack_units"] <= SUPERPOD["site"]["rack"]["units"] - 2  # it is the power, not the space
    src = _superpod(tmp_path, [["su1", "su2", "su3", "su4"]])
    errors = check(src).errors
    assert [f.rule for f in errors] == ["PLN001"]
    (err,) = errors
    assert err.path == ("site", "network_racks", 0)
    assert err.location is not None and err.location.line == _line_of(src, "- units:")
    assert "units su1, su2, su3, su4" in err.message and "44 kW budget" in err.message
    code, out, _ = run_cli("validate", str(src))
    assert code == 1 and f"bp.yaml:{err.location.line}:" in out and "PLN001" in out
    gcode, _, _ = run_cli("generate", str(src), "-o", str(tmp_path / "build"), "--quiet")
    assert gcode == 1 and not (tmp_path / "build").exists()


def test_too_many_units_for_one_rack_is_refused_at_the_entry(tmp_path: Path) -> None:
    # 28U usable (48 - 20 reserved), 3 DGX of 8U per rack; 32 compute leaves of 1U do not fit, by space
    data = copy.deepcopy(SUPERPOD)
    data["site"]["rack"].update(reserved_units=20, power_kw=80)
    data["pools"][0]["placement"] = {"nodes_per_rack": 3}
    data["site"]["network_racks"] = [{"units": ["su1", "su2", "su3", "su4"]}]
    src = _write(tmp_path, data)
    assert 32 * SWITCHES["qm9700"]["rack_units"] > 48 - 20
    errors = check(src).errors
    assert [(f.rule, f.path) for f in errors] == [("PLN001", ("site", "network_racks", 0))]
    assert "28U usable" in errors[0].message
    # two SUs per rack fit: 2 x (8 compute + 4 storage) + 2 management = 26U <= 28U
    data["site"]["network_racks"] = [{"units": g} for g in PAIRS]
    assert check(_write(tmp_path, data, "pairs.yaml")).errors == []


def test_a_unit_the_plan_does_not_have_is_located(tmp_path: Path) -> None:
    src = _superpod(tmp_path, [["su1", "su9"]])
    errors = check(src).errors
    assert [(f.rule, f.path) for f in errors] == [("PLN001", ("site", "network_racks", 0, "units", 1))]
    assert errors[0].location is not None and errors[0].location.line == _line_of(src, "- su9")
    assert "`su9`" in errors[0].message and "su1, su2, su3, su4" in errors[0].message


def test_a_unit_in_two_entries_is_a_schema_error(tmp_path: Path) -> None:
    src = _superpod(tmp_path, [["su1", "su2"], ["su2", "su3"]])
    code, out, err = run_cli("validate", str(src))
    assert code == 2, out + err
    assert "su2" in out + err and "network_racks" in out + err


def test_validate_passes_and_generate_works(tmp_path: Path) -> None:
    src = _superpod(tmp_path, PAIRS)
    code, out, err = run_cli("validate", str(src))
    assert code == 0 and "valid — 0 error(s)" in out, out + err
    gcode, gout, gerr = run_cli("generate", str(src), "-o", str(tmp_path / "build"), "--quiet")
    assert gcode == 0, gout + gerr


@pytest.mark.parametrize("budget", [30, 40, 41.47, 41.48, 44, 60])
def test_validate_verdict_equals_whether_the_plan_places_it(tmp_path: Path, budget: float) -> None:
    """Whatever the rack budget, validate finds no error at the entries exactly when each pair's switches
    fit one rack by the catalogue's sums (switches.yaml; the pair's members as the stacking test counts
    them): 41.476 kW, so 41.47 kW is refused and 41.48 kW is not."""
    data = copy.deepcopy(SUPERPOD)
    data["site"].update(rows=12, network_racks=[{"units": g} for g in PAIRS])
    data["site"]["rack"]["power_kw"] = budget
    del data["pools"][0]["placement"]  # as many DGX per rack as the budget allows
    src = _write(tmp_path, data)
    errors = check(src).errors
    # switches of a pair: 2 x (8 compute leaves + 4 storage leaves) of qm9700, + 2 management leaves sn2201
    qm, sn = SWITCHES["qm9700"], SWITCHES["sn2201"]
    kw = 24 * Fraction(qm["power_w"], 1000) + 2 * Fraction(sn["power_w"], 1000)
    fits = kw <= budget
    pln = [f for f in errors if f.rule == "PLN001" and f.path[:2] == ("site", "network_racks")]
    assert bool(pln) == (not fits), (budget, kw, [f.message for f in errors])
