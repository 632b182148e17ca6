"""SFT006: an OFED release older than its release line's support for the node OS.

Expected values are NVIDIA's, kept here independent of data/software.yaml: the MLNX_OFED 5.6-2.0.9.0
release notes, "Changes and New Features"
(docs.nvidia.com/networking/display/MLNXOFEDv562090/Changes+and+New+Features): "Added support for the
following Operating Systems: RHEL8.6, RHEL9.0, SLES15-SP4." RHEL 9.0 is the first RHEL 9 release.
The other versions used below are published MLNX_OFED releases (5.6-1.0.3.3 before 5.6-2.0.9.0 on the
5.6 line; 5.4-3.4.0.0 LTS and 5.8-1.1.2.1 LTS on other lines).
"""

from __future__ import annotations

import typing
from pathlib import Path

import pytest
from conftest import run_cli

from blueprints.catalog.load import default_catalog
from blueprints.models.software import Software
from generator.pipeline import check
from generator.rules.sft.sft006_ofed_os_release import release_line

FIX = Path(__file__).resolve().parents[1] / "rules" / "fixtures" / "SFT006"
VENDOR_ADDED_IN = "5.6-2.0.9.0"  # MLNX_OFED release whose notes add RHEL9.0
VENDOR_QUOTE = "Added support for the following Operating Systems: RHEL8.6, RHEL9.0, SLES15-SP4."


def blueprint(tmp_path: Path, os: str, kind: str, version: str) -> Path:
    text = (FIX / "fail.yaml").read_text()
    text = text.replace("os: rhel-9", f"os: {os}").replace("kind: mlnx", f"kind: {kind}")
    path = tmp_path / f"{os}-{kind}-{version}.yaml"
    path.write_text(text.replace('"5.6-1.0.3.3"', f'"{version}"'))
    return path


def sft006_lines(path: Path) -> list[str]:
    """SFT006 findings of ``validate``, each with its hint line."""
    code, out, _ = run_cli("validate", str(path))
    rows = out.splitlines()
    lines = [f"{row} | {rows[i + 1].strip()}" for i, row in enumerate(rows) if " SFT006 " in row]
    assert code == (1 if lines else 0), out
    return lines


def test_catalogue_records_the_vendor_statement_for_rhel_family() -> None:
    compat = default_catalog().software
    assert compat is not None
    by_os = {(a.ofed, a.os): a for a in compat.ofed_os_added}
    for os in ("rhel-9", "rocky-9"):
        added = by_os[("mlnx", os)]
        assert added.added_in == VENDOR_ADDED_IN and added.os_release == "RHEL 9.0"
        assert VENDOR_QUOTE in added.source and "MLNXOFEDv562090" in added.source


def test_catalogue_names_only_operating_systems_the_blueprint_can_pin() -> None:
    compat = default_catalog().software
    assert compat is not None
    allowed = set(typing.get_args(Software.model_fields["os"].annotation))
    assert {a.os for a in compat.ofed_os_added} <= allowed


def test_fail_fixture_is_located_at_the_version_line() -> None:
    path = FIX / "fail.yaml"
    (line,) = sft006_lines(path)
    assert line.startswith(f"{path}:14:5: error SFT006 ")  # software.ofed.version
    assert f"5.6-1.0.3.3 is older than {VENDOR_ADDED_IN}" in line and "RHEL 9.0" in line


@pytest.mark.parametrize(
    ("os", "kind", "version", "fires"),
    [
        ("rhel-9", "mlnx", "5.6-1.0.3.3", True),  # earlier release of the 5.6 line
        ("rocky-9", "mlnx", "5.6-1.0.3.3", True),  # Rocky installs the RHEL packages
        ("rhel-9", "mlnx", VENDOR_ADDED_IN, False),  # the release that added RHEL 9.0
        ("rhel-9", "mlnx", "5.8-1.1.2.1", False),  # a later line
        ("rhel-9", "mlnx", "5.4-3.4.0.0", False),  # an LTS line: its own additions are not recorded
        ("rhel-9", "mlnx", "5.6", False),  # a line, not a release
        ("ubuntu-22.04", "mlnx", "5.6-1.0.3.3", False),  # the statement is about RHEL 9
        ("rhel-9", "inbox", "5.6-1.0.3.3", False),  # the distribution's own stack
        ("rhel-9", "doca", "2.9.1", False),  # no DOCA addition recorded for RHEL 9
    ],
)
def test_rule_follows_the_release_line(tmp_path: Path, os: str, kind: str, version: str, fires: bool) -> None:
    lines = sft006_lines(blueprint(tmp_path, os, kind, version))
    assert bool(lines) is fires, lines
    assert all(f"hint: pin software.ofed.version {VENDOR_ADDED_IN} or a later 5.6" in x for x in lines)


def test_release_line_of_nvidia_version_formats() -> None:
    # MLNX_OFED <line>-<build> (5.6-2.0.9.0, 23.10-3.2.2.0); DOCA <major>.<minor>.<patch> (2.5.2)
    assert [release_line(v) for v in ("5.6-2.0.9.0", "23.10-3.2.2.0", "2.5.2", "3.2.1")] == [
        "5.6",
        "23.10",
        "2.5",
        "3.2",
    ]


def test_default_ofed_pin_is_clean_on_every_os(tmp_path: Path) -> None:
    head = (FIX / "fail.yaml").read_text().split("software:")[0]
    for os in typing.get_args(Software.model_fields["os"].annotation):
        path = tmp_path / f"default-{os}.yaml"
        path.write_text(f"{head}software:\n  os: {os}\n")  # software.ofed left at its default
        assert [f for f in check(path).findings if f.rule == "SFT006"] == [], os
