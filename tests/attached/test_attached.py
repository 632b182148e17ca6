"""Devices on fabric switch ports (blueprint ``appliances:``): validation, plan, SM members, outputs."""

from __future__ import annotations

import csv
import functools
import io
from pathlib import Path

import pytest
import yaml
from conftest import EXAMPLES, run_cli

from blueprints.catalog import default_catalog
from generator.plan.model import Plan

HERE = Path(__file__).resolve().parent
PAIR = HERE / "fixtures" / "ufm-pair.yaml"
SUPERPOD = EXAMPLES / "superpod-h100-4su.yaml"


@functools.cache
def plan_of(path: Path) -> Plan:
    from generator.pipeline import load_and_resolve
    from generator.plan.build import build_plan

    return build_plan(load_and_resolve(path)[1])


def _variant(tmp_path: Path, old: str, new: str) -> Path:
    text = PAIR.read_text()
    assert old in text
    out = tmp_path / "variant.yaml"
    out.write_text(text.replace(old, new))
    return out


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), start=1) if needle in ln)


# --- validation: located errors ------------------------------------------------------------------------


CASES = {
    "no-such-port": (
        "{switch: c-leaf-su1-r0, port: 31}",
        "{switch: c-leaf-su1-r0, port: 65}",
        "port: 65",
        "switch c-leaf-su1-r0 has ports 1-64, not 65",
    ),
    "port-taken-by-node": (
        "{switch: c-leaf-su1-r0, port: 31}",
        "{switch: c-leaf-su1-r0, port: 2}",
        "port: 2}",
        "port 2 of c-leaf-su1-r0 is taken by the cable to dgx002 ",
    ),
    "port-taken-by-appliance": (  # ufm02 declared on ufm01's port: the error is at ufm02's (the last) link
        "{switch: c-leaf-su1-r1, port: 31}",
        "{switch: c-leaf-su1-r0, port: 31}",
        "{switch: c-leaf-su1-r0, port: 31}",
        "port 31 of c-leaf-su1-r0 is taken by the cable to ufm01",
    ),
    "no-such-switch": (
        "{switch: c-leaf-su1-r0, port: 31}",
        "{switch: c-leaf-su1-r9, port: 31}",
        "c-leaf-su1-r9",
        "no switch `c-leaf-su1-r9` on the compute fabric",
    ),
    "unknown-model": (
        "model: ufm-enterprise-appliance-3\n    links: [{switch: c-leaf-su1-r0",
        "model: ufm-4\n    links: [{switch: c-leaf-su1-r0",
        "ufm-4",
        "unknown appliance model `ufm-4`",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_ports_are_located_errors(tmp_path: Path, case: str) -> None:
    old, new, needle, message = CASES[case]
    bp = _variant(tmp_path, old, new)
    code, out, err = run_cli("validate", str(bp))
    text = out + err
    assert code == 1 and message in text, text
    errors = [ln for ln in text.splitlines() if " error PLN001 " in ln]
    want = [i for i, ln in enumerate(bp.read_text().splitlines(), start=1) if needle in ln][-1]
    assert errors and errors[0].startswith(f"{bp}:{want}:"), errors
    code, _o, err = run_cli("plan", str(bp))  # commands that build the plan refuse with exit 2, located
    assert code == 2 and message in err


def test_links_or_ports_is_a_schema_error(tmp_path: Path) -> None:
    bp = _variant(
        tmp_path, "{name: spare01, ports: 1,", "{name: spare01, ports: 1, links: [{switch: x, port: 1}],"
    )
    code, out, err = run_cli("validate", str(bp))
    assert code == 2 and "exactly one of `links`" in out + err
    assert f"{bp}:{_line_of(bp, 'spare01')}:" in out + err


def test_a_full_fabric_has_no_port_for_the_appliances(tmp_path: Path) -> None:
    """32 DGX fill every node port of the SU's leaves: the declared port is a node's, and a count finds none."""
    bp = _variant(tmp_path, "count: 4, server", "count: 32, server")
    code, out, err = run_cli("validate", str(bp))
    assert code == 1 and "port 31 of c-leaf-su1-r0 is taken by the cable to dgx031" in out + err
    text = bp.read_text().split("appliances:")[0] + "appliances:\n  - {name: spare01, ports: 1}\n"
    bp.write_text(text)
    code, out, err = run_cli("validate", str(bp))
    assert code == 1 and "has no free leaf port left" in out + err
    assert f"{bp}:{_line_of(bp, 'spare01')}:" in out + err


# --- plan: counts against independent oracles ------------------------------------------------------------


def _free_leaf_ports(plan: Plan, exclude_appliances: bool) -> int:
    """Free leaf ports computed here: the catalogue's port count minus the ports the topology cables."""
    radix = default_catalog().switch("qm9700").ports_at(plan.cluster.fabrics["compute"].speed_gbps)
    leaves = [d.name for d in plan.switches("compute") if d.role == "leaf"]
    used: set[tuple[str, str]] = set()
    for link in plan.links_of("compute"):
        if exclude_appliances and link.layer == "appliance_switch":
            continue
        for end in (link.a, link.b):
            used.add((end.device, end.port))
    return sum(radix - sum(1 for d, _ in used if d == leaf) for leaf in leaves)


def test_superpod_example_matches_the_reference_architecture() -> None:
    """NVIDIA's H100 RA, Table 4, 4 SUs: 127 nodes, "Compute and UFM" cables 1020, spine-leaf 1024."""
    plan = plan_of(SUPERPOD)
    compute = plan.links_of("compute")
    by_layer: dict[str, int] = {}
    for link in compute:
        by_layer[link.layer] = by_layer.get(link.layer, 0) + 1
    assert by_layer["node_leaf"] + by_layer["appliance_switch"] == 1020
    assert by_layer["leaf_spine"] == 1024
    # the free node slot: 32 leaves x 32 node ports - 127 x 8 = 8 free before the appliances, 4 after
    assert _free_leaf_ports(plan, exclude_appliances=True) == 8
    assert _free_leaf_ports(plan, exclude_appliances=False) == 4
    leaves_of: dict[str, set[str]] = {}
    for link in compute:
        if link.layer == "appliance_switch":
            leaves_of.setdefault(link.b.device, set()).add(link.a.device)  # A end the switch
    assert sorted(leaves_of) == ["ufm01", "ufm02"]
    assert not leaves_of["ufm01"] & leaves_of["ufm02"]  # the HA pair on different leaves
    assert all(s.startswith("c-leaf-su4-") for s in leaves_of["ufm01"] | leaves_of["ufm02"])  # the last SU
    appliances = [d for d in plan.devices if d.kind == "appliance"]
    assert [(d.name, d.model, d.rack) for d in appliances] == [
        ("ufm01", "ufm-enterprise-appliance-3", None),  # no published size: unracked, NET024 says so
        ("ufm02", "ufm-enterprise-appliance-3", None),
    ]
    assert [(b.model, b.count) for b in plan.bom if b.item == "appliance"] == [
        ("ufm-enterprise-appliance-3", 2)
    ]


def test_declared_appliances_are_racked_with_their_cables() -> None:
    plan = plan_of(PAIR)
    dev = plan.device_by_name
    for name in ("ufm01", "ufm02"):
        assert dev[name].rack == dev["c-leaf-su1-r0"].rack  # the rack of the leaf it is cabled to
    rack = plan.rack_by_id[dev["ufm01"].rack]
    assert {"ufm01", "ufm02", "spare01"} <= set(rack.devices)
    expected_kw = sum(dev[n].power_kw for n in rack.devices)
    assert rack.power_kw == pytest.approx(expected_kw) and dev["spare01"].power_kw == 0.9
    cables = {ln.b.device: ln for ln in plan.links if ln.layer == "appliance_switch"}  # A end the switch
    assert (cables["ufm01"].a.device, cables["ufm01"].a.port) == ("c-leaf-su1-r0", "31")
    assert (cables["ufm02"].a.device, cables["ufm02"].a.port) == ("c-leaf-su1-r1", "31")
    assert cables["spare01"].a.device.startswith("c-leaf-su1-")
    for ln in cables.values():  # same rack: a short copper run from the real positions
        assert ln.medium and 0 < ln.run_m <= ln.length_m
    assert [(b.model, b.count) for b in plan.bom if b.item == "appliance"] == [
        ("generic", 1),
        ("ufm-enterprise-appliance-3", 2),
    ]


def test_declared_rack_and_a_missing_one(tmp_path: Path) -> None:
    plan = plan_of(PAIR)
    spine_rack = plan.device_by_name["c-spine-001"].rack
    assert spine_rack is not None
    bp = _variant(tmp_path, "{name: spare01, ports: 1,", f"{{name: spare01, rack: {spine_rack}, ports: 1,")
    code, out, err = run_cli("plan", str(bp), "--format", "json")
    assert code == 0, err
    bp = _variant(tmp_path, "{name: spare01, ports: 1,", "{name: spare01, rack: r09-09, ports: 1,")
    code, out, err = run_cli("validate", str(bp))
    assert code == 1 and "the plan has no rack `r09-09`" in out + err


# --- subnet manager --------------------------------------------------------------------------------------


def test_ufm_appliances_are_the_sm_members() -> None:
    from generator.plan.subnet_manager import sm_plan

    p = sm_plan(plan_of(PAIR).cluster, "compute", plan_of(PAIR))
    assert [(m.name, m.priority) for m in p.members] == [("ufm01", 15), ("ufm02", 14)]
    p = sm_plan(plan_of(SUPERPOD).cluster, "compute", plan_of(SUPERPOD))
    assert [m.name for m in p.members] == ["ufm01", "ufm02"]


def test_ufm_without_appliances_warns_members_unknown(tmp_path: Path) -> None:
    text = PAIR.read_text().split("appliances:")[0]
    bp = tmp_path / "bare.yaml"
    bp.write_text(text)
    code, out, _err = run_cli("validate", str(bp))
    assert code == 0
    line = _line_of(bp, "subnet_manager")
    assert f"{bp}:{line}:" in out and "NET024" in out and "0 of the 2 it needs are declared" in out
    code, out, _ = run_cli("validate", str(SUPERPOD))
    assert "NET024" in out and "rack_units and power_w not published" in out


def test_sm_on_gpu_node_still_refused_with_sharp(tmp_path: Path) -> None:
    bp = _variant(
        tmp_path,
        "subnet_manager: {kind: ufm, ha: true, sharp: true}",
        "subnet_manager: {kind: opensm, flavour: opensm-nvidia, sharp: true}",
    )
    code, out, err = run_cli("validate", str(bp))
    assert code == 1 and "NET023" in out + err


# --- outputs ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("build")
    code, _o, err = run_cli("generate", str(PAIR), "-o", str(out), "-q")
    assert code == 0, err
    return out


def test_cabling_rows_name_the_appliance(built: Path) -> None:
    rows = list(csv.DictReader(io.StringIO((built / "cabling" / "cables.csv").read_text())))
    mine = [r for r in rows if r["layer"] == "appliance_switch"]
    assert len(mine) == 3
    by_id = {r["cable_id"]: r for r in mine}
    assert set(by_id) == {"C-AS-000001", "C-AS-000002", "C-AS-000003"}
    assert {r["b_device"] for r in mine} == {"ufm01", "ufm02", "spare01"}  # pulled from the switch's rack
    assert any(r["a_device"] == "c-leaf-su1-r0" and r["a_port"] == "31" for r in mine)
    netbox = (built / "cabling" / "netbox" / "devices.csv").read_text()
    assert "ufm01" in netbox and "spare01" in netbox


def test_inventory_group_without_gpu_roles(built: Path) -> None:
    inv = yaml.safe_load((built / "ansible" / "appliances.yml").read_text())
    groups = inv["all"]["children"]["appliances"]["children"]
    assert sorted(groups) == ["appliance_host", "appliance_ufm"]
    ufm = groups["appliance_ufm"]["hosts"]
    assert sorted(ufm) == ["ufm01", "ufm02"]
    assert ufm["ufm01"]["cb_switch_ports"] == ["c-leaf-su1-r0:31"]
    assert ufm["ufm01"]["cb_subnet_manager_fabrics"] == ["compute"]
    main = (built / "ansible" / "inventory.yml").read_text()
    assert "ufm01" not in main and "spare01" not in main  # base.yml runs on `all` of inventory.yml
    assert (built / "subnet_manager" / "compute" / "ufm01" / "opensm.conf").is_file()
    elevation = "".join(p.read_text() for p in (built / "diagrams").glob("rack-elevation*.svg"))
    assert "ufm01" in elevation


def test_expected_ibnetdiscover_has_the_appliance(built: Path) -> None:
    net = (built / "cabling" / "ibnetdiscover" / "compute.net").read_text()
    assert 'Ca\t1 "H-ufm01-p1"' in net and '"S-c-leaf-su1-r0"[31]' in net
