"""The site's rack names (``site.rack_names``: a list or a template) name the racks everywhere the plan
does (cable labels, NetBox racks and devices), case kept; bad lists and templates are located errors."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from pydantic import ValidationError

from blueprints.models.site import Site
from generator.cli import main

BLUEPRINT = """\
apiVersion: cluster-blueprint/v1
name: site-racks
site:
  name: p1
  rows: 1
  racks_per_row: 4
  rack: {{units: 42, power_kw: 40}}
  rack_names: {rack_names}
pools:
  - name: gpu
    count: 8  # two compute racks and the leaves' network rack (a 4-node lab would share one rack)
    server: pcie-h100-8
    placement: {{nodes_per_rack: 4}}
fabrics:
  compute:
    technology: infiniband-ndr
    topology: {{kind: fat-tree, tiers: 2, switch: mqm9701, rail_optimized: true, scalable_unit: 8}}
    subnet_manager: {{kind: opensm, ha: true, routing_engine: ftree}}
"""


def _generate(tmp_path: Path, rack_names: str) -> Path:
    bp = tmp_path / "site.yaml"
    bp.write_text(BLUEPRINT.format(rack_names=rack_names))
    out = tmp_path / "out"
    assert main(["generate", str(bp), "-o", str(out), "-q"]) == 0
    return out / "cabling"


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def test_listed_rack_names_are_the_racks_of_labels_and_netbox(tmp_path: Path) -> None:
    cabling = _generate(tmp_path, "{names: [A09, A10, A11, A12]}")
    labels = _rows(cabling / "labels.csv")
    node_end = next(r for r in labels if r["cable_id"] == "C-NL-000001" and r["end"] == "A")
    assert node_end["label"] == "p1-A09-U01-gpu001-mlx5_0/1"  # the site's rack, not R01-01
    assert node_end["far_end"].startswith("p1-A11-U01-c-leaf-su1-r0-")  # the leaves' network rack
    racks = [r["name"] for r in _rows(cabling / "netbox" / "racks.csv")]
    assert set(racks) <= {"A09", "A10", "A11", "A12"} and "A09" in racks
    devices = {r["name"]: r["rack"] for r in _rows(cabling / "netbox" / "devices.csv")}
    assert devices["gpu001"] == "A09" and devices["gpu005"] == "A10" and devices["c-leaf-su1-r0"] == "A11"


def test_a_rack_name_template_keeps_case(tmp_path: Path) -> None:
    cabling = _generate(tmp_path, '{template: "DH2.R{row:02}-P{position:02}"}')
    labels = {r["label"] for r in _rows(cabling / "labels.csv")}
    assert "p1-DH2.R01-P01-U01-gpu001-mlx5_0/1" in labels


def test_default_racks_keep_the_tool_ids(tmp_path: Path) -> None:
    bp = tmp_path / "site.yaml"
    bp.write_text(BLUEPRINT.format(rack_names="null"))
    assert main(["generate", str(bp), "-o", str(tmp_path / "out"), "-q"]) == 0
    labels = _rows(tmp_path / "out" / "cabling" / "labels.csv")
    assert labels[0]["label"].startswith("p1-R01-01-U01-")


@pytest.mark.parametrize(
    ("rack_names", "message"),
    [
        ({"names": ["A09", "A10", "A11"]}, "lists 3 names for 1 rows x 4 racks = 4 rack slots"),
        ({"names": ["A09", "A10", "a09", "A12"]}, "the rack name 'a09' twice"),
        ({"template": "A{row:02}"}, "gives the rack name 'A01' twice"),
        ({"template": "A {position}"}, "is not a rack-name template"),
        ({"template": "A{rack}"}, "is not a rack-name template"),
        ({"names": ["A09", "A10", "A11", "A 12"]}, "should match pattern"),
        ({"names": ["A09"], "template": "A{position}"}, "exactly one of `template` or `names`"),
    ],
)
def test_bad_rack_names_are_refused(rack_names: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Site.model_validate({"rows": 1, "racks_per_row": 4, "rack_names": rack_names})


def test_a_bad_rack_name_is_located_by_validate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bp = tmp_path / "site.yaml"
    bp.write_text(BLUEPRINT.format(rack_names="{names: [A09, A10, A11]}"))
    assert main(["validate", str(bp)]) != 0
    out = capsys.readouterr()
    assert f"{bp}:" in out.out + out.err and "4 rack slots" in out.out + out.err
