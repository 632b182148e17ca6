"""A rack-name template gives names a list could hold (review h154 f6): `template: "-{row}-{position}"`
validated, and its `-1-1` racks reached the labels and NetBox, where the same names as a list are refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from blueprints.models.site import Site
from generator.cli import main


@pytest.mark.parametrize("template", ["-{row}-{position}", "_r{row}-{position}", ".{row:02}{position:02}"])
def test_a_template_whose_names_a_list_could_not_hold_is_refused(template: str) -> None:
    sample = (
        template.replace("{row}", "1").replace("{position}", "1").replace("{row:02}{position:02}", "0101")
    )
    with pytest.raises(ValidationError, match="rack name starts with a letter or digit"):
        Site.model_validate({"rows": 1, "racks_per_row": 4, "rack_names": {"template": template}})
    with pytest.raises(ValidationError):  # the same names as a list
        Site.model_validate({"rows": 1, "racks_per_row": 1, "rack_names": {"names": [sample]}})


@pytest.mark.parametrize("template", ["A{row:02}-R{position:02}", "{row}-{position}", "dh2.r{row}{position}"])
def test_good_templates_still_pass(template: str) -> None:
    Site.model_validate({"rows": 2, "racks_per_row": 4, "rack_names": {"template": template}})


def test_validate_locates_the_template(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bp = tmp_path / "bp.yaml"
    bp.write_text(
        "apiVersion: cluster-blueprint/v1\nname: t\nsite:\n  rows: 1\n  racks_per_row: 4\n"
        '  rack_names: {template: "-{row}-{position}"}\npools:\n  - {name: gpu, count: 1, server: dgx-h100}\n'
    )
    assert main(["validate", str(bp)]) == 2
    out = capsys.readouterr()
    assert f"{bp}:6:" in out.out + out.err and "'-1-1'" in out.out + out.err, out
