"""Structural checks of every format on the real plans of every example blueprint."""

from __future__ import annotations

import csv
import io
import json
import re

import netbox_checks
import openpyxl
import pytest
from cabling_plans import EXAMPLES, cluster_of, plan_of

from generator.emit.cabling import XLSX_NAME, applies, render_format
from generator.emit.cabling.fabric_views import fabrics_of_kind
from generator.emit.cabling.rows import LABEL_SOFT_MAX, cable_rows, natural_key
from generator.emit.cabling.xlsx import PULL_HEADER

ALL = sorted(EXAMPLES.glob("*.yaml"))
# single nodes and cloud targets have no cables: the format tests run on the others
CABLED = [p for p in ALL if plan_of(p).links]


def _cabled(path):
    return cluster_of(path), plan_of(path)


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.stem)
def test_applies_exactly_when_the_plan_has_cables(path) -> None:
    assert applies(cluster_of(path)) == bool(plan_of(path).links)


@pytest.mark.parametrize("path", CABLED, ids=lambda p: p.stem)
def test_rows_labels_and_order(path) -> None:
    cluster, plan = _cabled(path)
    rows = cable_rows(cluster, plan)
    assert len(rows) == len(plan.links)
    assert sorted(r.id for r in rows) == sorted(link.id for link in plan.links)
    labels = [e.label for r in rows for e in (r.a, r.b)]
    assert len(set(labels)) == len(labels), "labels must be unique"
    assert all(re.fullmatch(r"[!-~]+", label) for label in labels), "printable ASCII, no spaces"
    assert max(map(len, labels)) <= LABEL_SOFT_MAX, max(labels, key=len)
    site = cluster.blueprint.site.name
    # every device of an on-prem plan is racked, but an appliance whose size nobody publishes (NET024)
    unracked = {d.name for d in plan.devices if d.kind == "appliance" and d.rack is None}
    ends = [e for r in rows for e in (r.a, r.b) if e.device not in unracked]
    assert all(e.label.startswith(f"{site}-R") for e in ends), "every device of an on-prem plan is racked"
    keys = [(r.a.row, r.a.position, r.a.u, r.a.device, natural_key(r.a.port)) for r in rows]
    assert keys == sorted(keys), "pull order: A-end rack, unit, device, port"
    by_id = {link.id: link for link in plan.links}
    for r in rows:
        link = by_id[r.id]
        assert (r.a.device, r.a.port, r.b.device, r.b.port) == (
            link.a.device,
            link.a.port,
            link.b.device,
            link.b.port,
        )
        assert r.length_m == link.length_m and r.medium == link.medium
        assert r.a.rack == plan.device_by_name[link.a.device].rack


@pytest.mark.parametrize("path", CABLED, ids=lambda p: p.stem)
def test_csv_bom_totals_match_the_plan(path) -> None:
    cluster, plan = _cabled(path)
    files = render_format(cluster, plan, "csv")
    cables = list(csv.DictReader(io.StringIO(files["cables.csv"].decode())))
    assert len(cables) == len(plan.links)
    bom = list(csv.DictReader(io.StringIO(files["bom.csv"].decode())))

    def total(item: str) -> int:
        return sum(int(b["count"]) for b in bom if b["item"] == item)

    assert total("cable") == len(plan.links)
    assert total("switch") == len(plan.switches())
    assert total("server") == len(plan.nodes())
    assert total("transceiver") == sum(plan.transceivers.values())
    lengths = {}
    for c in cables:
        key = (c["medium"], c["length_m"])
        lengths[key] = lengths.get(key, 0) + 1
    assert sum(lengths.values()) == len(plan.links)


@pytest.mark.parametrize("path", CABLED, ids=lambda p: p.stem)
def test_netbox_import_is_consistent(path) -> None:
    cluster, plan = _cabled(path)
    files = render_format(cluster, plan, "netbox")
    assert netbox_checks.problems(files) == []
    t = netbox_checks.read(files)
    assert len(t["cables.csv"]) == len(plan.links)
    assert len(t["devices.csv"]) == len(plan.devices)
    assert len(t["interfaces.csv"]) == 2 * len(plan.links)


@pytest.mark.parametrize("path", CABLED, ids=lambda p: p.stem)
def test_xlsx_rack_sheets(path) -> None:
    cluster, plan = _cabled(path)
    wb = openpyxl.load_workbook(io.BytesIO(render_format(cluster, plan, "xlsx")[XLSX_NAME]), read_only=True)
    assert wb.sheetnames[:2] == ["Summary", "BOM"]
    rack_sheets = wb.sheetnames[2:]
    assert set(rack_sheets) == {plan.device_by_name[link.a.device].rack for link in plan.links}
    cable, frm = PULL_HEADER.index("Cable"), PULL_HEADER.index("From label")
    links = {link.id: link for link in plan.links}
    pulled = []
    for name in rack_sheets:
        for row in wb[name].iter_rows(min_row=3, values_only=True):
            link = links[row[cable]]
            assert plan.device_by_name[link.a.device].rack == name  # pulls start in the sheet's rack
            assert row[frm].endswith(f"-{link.a.device}-{link.a.label_port}")
            pulled.append(row[cable])
    assert sorted(pulled) == sorted(link.id for link in plan.links)
    wb.close()


@pytest.mark.parametrize("path", CABLED, ids=lambda p: p.stem)
def test_fabric_views_are_the_shared_renderers(path) -> None:
    from generator.emit.ibnetdiscover import render_netfile
    from generator.emit.lldp import neighbours

    cluster, plan = _cabled(path)
    ib = render_format(cluster, plan, "ibnetdiscover")
    assert set(ib) == {f"{f}.net" for f in fabrics_of_kind(cluster, plan, infiniband=True)}
    for name, data in ib.items():
        assert data.decode() == render_netfile(plan, fabric=name.removesuffix(".net"))
    eth = render_format(cluster, plan, "lldp")
    fabrics = [f for f in fabrics_of_kind(cluster, plan, infiniband=False) if plan.switches(f)]
    assert set(eth) == {f"{f}.json" for f in fabrics}  # one file per fabric, not one per switch
    for f in fabrics:
        doc = json.loads(eth[f"{f}.json"])
        assert doc and set(doc) <= {d.name for d in plan.switches(f)}
        assert doc == neighbours(plan, f)


@pytest.mark.parametrize("path", CABLED, ids=lambda p: p.stem)
def test_netbox_interfaces_in_device_then_natural_port_order(path) -> None:
    cluster, plan = _cabled(path)
    t = netbox_checks.read(render_format(cluster, plan, "netbox"))
    keys = [(r["device"], natural_key(r["name"])) for r in t["interfaces.csv"]]
    assert keys == sorted(keys)
    ends = {(r["side_a_device"], r["side_a_name"]) for r in t["cables.csv"]} | {
        (r["side_b_device"], r["side_b_name"]) for r in t["cables.csv"]
    }
    assert ends == {(r["device"], r["name"]) for r in t["interfaces.csv"]}
