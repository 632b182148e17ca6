"""RHEL 9 / Rocky 9 with fabric addresses to configure: the host_fabric role writes them as NetworkManager
profiles there (its netplan branch is the Debian family's), so validate no longer refuses such a blueprint
(SFT009 did, while the role wrote netplan only: a rule that can no longer fire is gone) and generate hands
the role the same interfaces as on Ubuntu. The profiles themselves: ansible_playbooks/test_host_fabric_nm_run.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli
from ruamel.yaml import YAML

from generator.findings import Severity
from generator.pipeline import check
from generator.rules.registry import all_rules

# bare-metal DGX H100s on an NDR InfiniBand fabric: an IPoIB address per rail (the port map names the interfaces)
BLUEPRINT = """\
apiVersion: cluster-blueprint/v1
name: el9-fabric
site: {rows: 1, racks_per_row: 4, rack: {units: 42, power_kw: 44}}
pools:
  - name: dgx
    count: 4
    server: dgx-h100
fabrics:
  compute:
    technology: infiniband-ndr
    topology: {kind: fat-tree, tiers: 2, switch: qm9700, rail_optimized: true}
    subnet_manager: {kind: opensm}
software:
  os: OS
"""


def _interfaces(out: Path) -> dict[str, list[str]]:
    yaml = YAML(typ="safe", pure=True)
    found: dict[str, list[str]] = {}
    for f in sorted((out / "ansible" / "group_vars").glob("pool_*.yml")):
        nics = [n["interface"] for n in yaml.load(f.read_text()).get("host_fabric_interfaces") or []]
        if nics:
            found[f.stem] = nics
    return found


@pytest.mark.parametrize("os", ["rhel-9", "rocky-9"])
def test_el9_with_fabric_addresses_validates_and_generates(tmp_path: Path, os: str) -> None:
    path = tmp_path / "bp.yaml"
    path.write_text(BLUEPRINT.replace("OS", os))
    errors = [f for f in check(path).findings if f.severity is Severity.ERROR]
    assert not errors, errors
    code, _, err = run_cli("generate", str(path), "-o", str(tmp_path / "el9"), "--only", "ansible")
    assert code == 0, err
    ubuntu = tmp_path / "ubuntu.yaml"
    ubuntu.write_text(BLUEPRINT.replace("OS", "ubuntu-22.04"))
    code, _, err = run_cli("generate", str(ubuntu), "-o", str(tmp_path / "ubuntu"), "--only", "ansible")
    assert code == 0, err
    el9 = _interfaces(tmp_path / "el9")
    assert el9 == _interfaces(tmp_path / "ubuntu") and el9["pool_dgx"]  # an address per rail, as on Ubuntu


def test_no_rule_refuses_an_os_the_role_configures() -> None:
    assert "SFT009" not in {r.id for r in all_rules()}
