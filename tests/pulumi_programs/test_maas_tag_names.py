"""MAAS tag names: rack names may hold '.', MAAS tag names may not.

MAAS refuses a tag name outside `^[a-zA-Z0-9_-]+$` (Tag._tag_name_regex in canonical/maas
src/maasserver/models/tag.py); docs/existing-site.md gives "DH2.R{row:02}-P{position:02}" as a rack-name
template. The program created `maas.Tag(name="<name>-rack-A01.R01")` and `pulumi up` failed part-way.
Now any other character becomes '-', and two racks that would share a tag are refused (DEP014, at
site.rack_names) before anything is generated.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli

pytest.importorskip("pulumi", reason="the Pulumi SDK is in the test extra")

from pulumi_cases import generate_text, run_target

from generator.pipeline import check

pytestmark = pytest.mark.pulumi

MAAS_TAG = re.compile(r"^[a-zA-Z0-9_-]+$")  # canonical/maas src/maasserver/models/tag.py
SITE = "  rack: {units: 48, power_kw: 44}\n"


def _with_rack_names(rack_names: str) -> str:
    text = (EXAMPLES / "maas-onprem-h100.yaml").read_text()
    assert SITE in text and "rack_names" not in text
    return text.replace(SITE, f"{SITE}  rack_names: {rack_names}\n")


def test_rack_names_with_a_dot_become_tags_maas_takes(tmp_path: Path) -> None:
    cluster, project = generate_text(_with_rack_names('{template: "DH2.R{row:02}-P{position:02}"}'), tmp_path)
    run = run_target(cluster, project)
    tags = {t.inputs["name"]: t.inputs["machines"] for t in run.of_type("maas:index/tag:Tag")}
    assert tags and all(MAAS_TAG.fullmatch(t) for t in tags), sorted(tags)
    assert "maas-onprem-h100-rack-DH2-R01-P01" in tags
    rack_tags = [t for t in tags if "-rack-" in t]
    assert sum(len(tags[t]) for t in rack_tags) == 38, "every machine in exactly one rack tag"
    for machine in run.of_type("maas:index/instance:Instance"):
        assert all(MAAS_TAG.fullmatch(t) for t in machine.inputs["allocateParams"]["tags"])


def test_two_racks_one_tag_is_refused_at_rack_names(tmp_path: Path) -> None:
    names = ", ".join(["A01.R01", "A01-R01", *(f"A01-R{i:02d}" for i in range(2, 20))])
    blueprint = tmp_path / "bp.yaml"
    blueprint.write_text(_with_rack_names(f"{{names: [{names}]}}"))
    (finding,) = [f for f in check(blueprint).findings if f.rule == "DEP014"]
    assert finding.path == ("site", "rack_names") and finding.location is not None
    assert "A01-R01, A01.R01" in finding.message and "maas-onprem-h100-rack-A01-R01" in finding.message
    code, _, err = run_cli("generate", str(blueprint), "-o", str(tmp_path / "out"), "--only", "pulumi")
    assert code == 1 and "DEP014" in err and not (tmp_path / "out").exists()
