"""A catalogue's orderable cable lengths are whole centimetres (review h154 f7): `lengths_m: [7.125, 10.0625]`
reached netbox/cables.csv, whose NetBox Cable.length holds 2 decimals (DecimalField(max_digits=8,
decimal_places=2), netbox dcim migration 0132_cable_length), so the import refused every such cable. The
catalogue line is refused instead (exit 2), and the length the plan uses is the one every file shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.cli import main

BLUEPRINT = """\
apiVersion: cluster-blueprint/v1
name: lengths
catalog: cat.yaml
site: {name: dc1, rows: 1, racks_per_row: 4, rack: {units: 42, power_kw: 60}}
pools:
  - {name: dgx, role: gpu, count: 4, server: dgx-h100, placement: {nodes_per_rack: 4}}
fabrics:
  compute:
    technology: infiniband-ndr
    topology: {kind: fat-tree, tiers: 2, switch: qm9700, rail_optimized: true, scalable_unit: 4}
    subnet_manager: {kind: opensm, ha: true}
"""
CATALOG = """\
media:
  mmf:
    name: multimode fibre
    kind: mmf
    preference: 4
    netbox_type: mmf-om4
    reach_by_speed_m: {{25: 100.0, 100: 100.0, 400: 50.0, 800: 50.0}}
    lengths_m: {lengths}
    part_numbers: {{400: MFP7E10-N0xx}}
    needs_transceivers: true
    infiniband_max_gbps: 400
"""


def _site(tmp_path: Path, lengths: str) -> Path:
    (tmp_path / "cat.yaml").write_text(CATALOG.format(lengths=lengths))
    bp = tmp_path / "bp.yaml"
    bp.write_text(BLUEPRINT)
    return bp


@pytest.mark.parametrize("lengths", ["[7.125, 10.0625, 15, 20, 30, 40, 50]", "[3, 7.001, 50]"])
def test_lengths_finer_than_a_centimetre_are_refused_at_their_line(
    tmp_path: Path, lengths: str, capsys: pytest.CaptureFixture[str]
) -> None:
    bp = _site(tmp_path, lengths)
    assert main(["cabling", str(bp), "-o", str(tmp_path / "out"), "-q"]) == 2
    shown = "".join(capsys.readouterr())
    assert f"{tmp_path / 'cat.yaml'}:8:" in shown and "more than 2 decimals" in shown, shown
    assert not (tmp_path / "out").exists()


def test_centimetre_lengths_reach_netbox_as_the_plan_has_them(tmp_path: Path) -> None:
    import csv

    bp = _site(tmp_path, "[2.25, 7.12, 10.5, 15, 20, 30, 40, 50]")
    assert main(["cabling", str(bp), "-o", str(tmp_path / "out"), "-q"]) == 0
    with (tmp_path / "out" / "netbox" / "cables.csv").open(newline="") as fh:
        netbox = {r["label"]: r["length"] for r in csv.DictReader(fh)}
    with (tmp_path / "out" / "cables.csv").open(newline="") as fh:
        plan = {r["cable_id"]: r["length_m"] for r in csv.DictReader(fh)}
    assert netbox == plan and "7.12" in netbox.values()
