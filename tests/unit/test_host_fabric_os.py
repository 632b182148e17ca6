"""SFT009: validate refuses RHEL 9 / Rocky 9 where the build has fabric addresses for the host_fabric role
to write (netplan only), and names exactly the pools and interfaces the generator hands that role
(`host_fabric_interfaces` in the pools' group_vars)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO, run_cli
from ruamel.yaml import YAML

from generator.findings import Severity
from generator.pipeline import check

FIXTURES = REPO / "tests" / "rules" / "fixtures"
EXAMPLES = REPO / "examples"


def _os(text: str, os: str) -> str:
    return text.replace("os: rocky-9", f"os: {os}")


@pytest.mark.parametrize("os", ["rhel-9", "rocky-9"])
def test_refused_where_the_build_has_fabric_addresses(tmp_path: Path, os: str) -> None:
    path = tmp_path / "bp.yaml"
    path.write_text(_os((FIXTURES / "SFT009" / "fail.yaml").read_text(), os))
    found = [f for f in check(path).findings if f.rule == "SFT009"]
    assert len(found) == 1 and found[0].severity is Severity.ERROR
    assert found[0].path == ("software", "os") and found[0].location is not None
    assert found[0].location.line == 17  # the `os:` line of the fixture
    assert f"software.os {os}" in found[0].message and "netplan" in found[0].message


@pytest.mark.parametrize("os", ["ubuntu-22.04", "ubuntu-24.04", "debian-12"])
def test_netplan_oses_pass(tmp_path: Path, os: str) -> None:
    path = tmp_path / "bp.yaml"
    path.write_text(_os((FIXTURES / "SFT009" / "fail.yaml").read_text(), os))
    assert not [f for f in check(path).findings if f.rule == "SFT009"]


def test_no_fabric_addresses_no_finding() -> None:
    # Rocky 9 on AWS: the provider addresses the EFA interfaces, the role gets no host_fabric_interfaces
    assert not [f for f in check(FIXTURES / "DEP009" / "pass.yaml").findings if f.rule == "SFT009"]


def test_names_what_the_generator_hands_the_role(tmp_path: Path) -> None:
    """The pools and interfaces SFT009 names are the generated host_fabric_interfaces (built on Ubuntu)."""
    yaml = YAML(typ="safe", pure=True)
    data = yaml.load((EXAMPLES / "maas-onprem-h100.yaml").read_text())
    out = tmp_path / "build"
    code, _, err = run_cli(
        "generate", str(EXAMPLES / "maas-onprem-h100.yaml"), "-o", str(out), "--only", "ansible"
    )
    assert code == 0, err
    generated: dict[str, list[str]] = {}
    for f in sorted((out / "ansible" / "group_vars").glob("pool_*.yml")):
        nics = [n["interface"] for n in yaml.load(f.read_text()).get("host_fabric_interfaces") or []]
        if nics:
            generated[f.stem.removeprefix("pool_")] = nics
    assert generated, "the example must give some pool fabric addresses"
    data.setdefault("software", {})["os"] = "rhel-9"
    rhel = tmp_path / "rhel.json"
    rhel.write_text(json.dumps(data))
    [finding] = [f for f in check(rhel).findings if f.rule == "SFT009"]
    assert f"({', '.join(generated)})" in finding.message
    names = sorted({n for nics in generated.values() for n in nics})
    assert f"({', '.join(names)})" in finding.message
