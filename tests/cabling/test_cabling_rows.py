"""The cable table on a hand-built plan: labels, pull order, part numbers, CSV files."""

from __future__ import annotations

import csv
import io
from dataclasses import replace

import pytest
from cabling_plans import node_ep, small_plan, switch_ep

from generator.emit.cabling import render_format
from generator.emit.cabling.rows import CablingError, cable_rows, natural_key, rows_by_rack
from generator.emit.cabling.tables import BOM_COLUMNS, CABLE_COLUMNS, LABEL_COLUMNS
from generator.plan.model import Link


def _rows():
    plan = small_plan()
    return plan, cable_rows(plan.cluster, plan)


def test_labels_follow_the_site_rack_unit_device_port_convention() -> None:
    _, rows = _rows()
    by_id = {r.id: r for r in rows}
    first = by_id["C-NL-000001"]
    assert first.a.label == "dc1-R01-01-U01-dgx001-P01/1"  # DGX twin-port cage 1, sub-port 1
    assert first.b.label == "dc1-R01-02-U01-c-leaf-001-P01/1"
    assert by_id["C-NL-000003"].b.label == "dc1-R01-02-U01-c-leaf-001-P02/1"  # logical port 3 = cage 2/1
    assert by_id["C-LS-000001"].a.label == "dc1-R01-02-U01-c-leaf-001-P17/1"
    mgmt = by_id["M-NL-000001"]
    assert mgmt.a.label == "dc1-R01-01-U01-dgx001-mlx5_10/1"  # no cage: the RDMA port
    assert mgmt.b.label == "dc1-R01-02-U03-m-leaf-001-P1"
    assert first.a.location == "dc1-R01-01-U01"


def test_pull_order_is_rack_then_unit_then_port_with_stable_sequence() -> None:
    _, rows = _rows()
    assert [r.id for r in rows] == ["C-NL-000001", "C-NL-000003", "M-NL-000001", "C-NL-000002", "C-LS-000001"]
    assert [r.seq for r in rows] == [1, 2, 3, 4, 5]
    keys = [(r.a.row, r.a.position, r.a.u) for r in rows]
    assert keys == sorted(keys)
    grouped = rows_by_rack(rows)
    assert list(grouped) == ["r01-01", "r01-02"]
    assert all(r.a.rack == rack for rack, pulls in grouped.items() for r in pulls)


def test_natural_port_order() -> None:
    ports = ["mlx5_10/1", "mlx5_2/1", "10", "9", "mlx5_1/2"]
    assert sorted(ports, key=natural_key) == ["9", "10", "mlx5_1/2", "mlx5_2/1", "mlx5_10/1"]


def test_medium_and_part_number_come_from_link_then_catalogue() -> None:
    plan, rows = _rows()
    by_id = {r.id: r for r in rows}
    # C-NL-000002 carries no part number: the catalogue's for 400G multimode fibre is used
    assert by_id["C-NL-000002"].part_number == plan.cluster.catalog.media["mmf"].part_numbers[400.0]
    assert by_id["C-NL-000002"].medium_kind == "mmf" and by_id["C-NL-000002"].needs_transceivers
    assert by_id["M-NL-000001"].part_number == ""  # Cat6 has none
    assert by_id["M-NL-000001"].netbox_type == "cat6" and not by_id["M-NL-000001"].needs_transceivers


def test_two_cables_on_one_port_are_refused() -> None:
    plan = small_plan()
    clash = Link(
        "C-NL-000009",
        "compute",
        "node_leaf",
        node_ep("dgx002", 1, "ib1", 1, 2),
        switch_ep("c-leaf-001", 1),
        400.0,
        "mmf",
        5.0,
        4.0,
        1,
        None,
    )
    bad = replace(plan, links=(*plan.links, clash))
    with pytest.raises(CablingError, match="c-leaf-001-P01/1"):
        cable_rows(bad.cluster, bad)


def test_unknown_device_is_refused() -> None:
    plan = small_plan()
    ghost = Link(
        "C-NL-000009",
        "compute",
        "node_leaf",
        node_ep("dgx999", 0, "ib0"),
        switch_ep("c-leaf-001", 9),
        400.0,
        "mmf",
        5.0,
        4.0,
        0,
        None,
    )
    bad = replace(plan, links=(ghost,))
    with pytest.raises(CablingError, match="dgx999"):
        cable_rows(bad.cluster, bad)


def _read(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8"))))


def test_csv_files() -> None:
    plan = small_plan()
    files = render_format(plan.cluster, plan, "csv")
    assert sorted(files) == ["bom.csv", "cables.csv", "labels.csv"]
    cables = _read(files["cables.csv"])
    assert tuple(cables[0]) == CABLE_COLUMNS
    assert [c["cable_id"] for c in cables] == [
        "C-NL-000001",
        "C-NL-000003",
        "M-NL-000001",
        "C-NL-000002",
        "C-LS-000001",
    ]
    first = cables[0]
    assert (
        first["a_rack"],
        first["a_u"],
        first["a_device"],
        first["a_port"],
        first["a_cage"],
        first["a_cage_port"],
    ) == ("r01-01", "1", "dgx001", "mlx5_0/1", "1", "1")
    assert (first["length_m"], first["medium"], first["part_number"]) == ("5", "mmf", "MFP7E10-N0xx")
    labels = _read(files["labels.csv"])
    assert tuple(labels[0]) == LABEL_COLUMNS
    assert len(labels) == 2 * len(cables)
    assert labels[0]["label"] == cables[0]["a_label"] and labels[0]["far_end"] == cables[0]["b_label"]
    assert labels[1]["label"] == cables[0]["b_label"] and labels[1]["end"] == "B"
    assert labels[0]["line1"] + "-" + labels[0]["line2"] == labels[0]["label"]
    bom = _read(files["bom.csv"])
    assert tuple(bom[0]) == BOM_COLUMNS
    # the hand-built BOM lists no transceivers, so Plan.transceivers is added
    assert [b for b in bom if b["item"] == "transceiver"] == [
        {
            "item": "transceiver",
            "model": "mma4z00-ns",
            "detail": "800G twin-port OSFP 2xSR4 multimode",
            "part_number": "MMA4Z00-NS",
            "count": "4",
        }
    ]


@pytest.mark.parametrize("reverse", [False, True], ids=["listed-in-order", "listed-reversed"])
def test_cables_sharing_an_a_port_are_ordered_by_natural_cable_id(reverse: bool) -> None:
    """Equal A ends (a plan bug) tie in pull order; the cable id decides, naturally (9 before 10), so the
    clash is reported the same way whatever order the plan lists the links in."""
    plan = small_plan()
    twins = [
        Link(
            f"X-{n}",
            "compute",
            "node_leaf",
            node_ep("dgx001", 0, "ib0", 1, 1),
            switch_ep("c-leaf-001", 40 + n),
            400.0,
            "mmf",
            5.0,
            4.0,
            0,
            None,
        )
        for n in (10, 9)
    ]
    others = tuple(link for link in plan.links if link.id != "C-NL-000001")
    links = (*others, *(reversed(twins) if reverse else twins))
    bad = replace(plan, links=links)
    with pytest.raises(CablingError, match=r"dgx001-P01/1 is used by cables X-9 and X-10"):
        cable_rows(bad.cluster, bad)


def test_an_unprintable_name_is_refused() -> None:
    plan = small_plan()
    devices = tuple(d._replace(name="dgx 001") if d.name == "dgx001" else d for d in plan.devices)
    links = tuple(
        link._replace(a=link.a._replace(device="dgx 001")) if link.a.device == "dgx001" else link
        for link in plan.links
    )
    bad = replace(plan, devices=devices, links=links)
    with pytest.raises(CablingError, match=r"label 'dc1-R01-01-U01-dgx 001-P01/1' is not printable"):
        cable_rows(bad.cluster, bad)
