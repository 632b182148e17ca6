"""Strings a user writes that reach generated files stay data in the format that reads them: a mount option
fstab cannot hold is refused (a carriage return added a line to /etc/fstab through ansible.posix.mount, a
form feed or `#` made every run report a change), a blueprint file name with a line break cannot add a line
to report/SUMMARY.md, and a catalogue's port names hold no space or quote (they reach cable labels, lnet.conf,
ibstat's argv and ibnetdiscover's quoted descriptions; generate ended in an internal error)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli
from pydantic import ValidationError
from ruamel.yaml import YAML

from blueprints.catalog.schema import MappedPort


def _with_storage_options(tmp_path: Path, options: list[str]) -> Path:
    yaml = YAML()
    doc = yaml.load((EXAMPLES / "superpod-h100-4su.yaml").read_text())
    doc["storage"][0]["options"] = options
    out = tmp_path / "bp.yaml"
    with out.open("w") as fh:
        yaml.dump(doc, fh)
    return out


@pytest.mark.parametrize("option", ["a=b\rc", "x\x0by", "noatime\x0c", "noatime#x", "a b", "a,b", "", "é"])
def test_a_mount_option_fstab_cannot_hold_is_refused(tmp_path: Path, option: str) -> None:
    code, out, _ = run_cli("validate", str(_with_storage_options(tmp_path, ["noatime", option])))
    assert code == 2 and "is not one fstab can hold" in out


def test_real_mount_options_pass(tmp_path: Path) -> None:
    """Options as vendors document them (NFS, systemd, WEKA's net=, BeeGFS's cfgFile=)."""
    options = ["vers=4.1", "x-systemd.requires=weka-agent.service", "net=mlx5_0/10.0.0.1/24", "_netdev"]
    code, _, err = run_cli("validate", str(_with_storage_options(tmp_path, options)))
    assert code == 0, err


def test_a_blueprint_file_name_cannot_add_a_summary_line(tmp_path: Path) -> None:
    """A finding names the blueprint file; a name holding a line break and an ESC stays on its line."""
    name = tmp_path / 'odd\n- "forged" \x1b[31m.yaml'
    shutil.copy(EXAMPLES / "single-dgx-h100.yaml", name)
    code, _, err = run_cli("generate", str(name), "-o", str(tmp_path / "b"), "--only", "report")
    assert code == 0, err
    summary = (tmp_path / "b" / "report" / "SUMMARY.md").read_text()
    assert not any(line.startswith('- "forged"') for line in summary.split("\n"))
    assert "\x1b" not in summary and 'odd - "forged"  [31m.yaml:' in summary


@pytest.mark.parametrize("field", ["faceplate", "pci", "rdma", "netdev", "netdev_optional"])
@pytest.mark.parametrize("value", ['mlx5_0 "x', "enp0';$(id)#", "a b", "mlx5_0\n"])
def test_a_catalogue_port_name_with_a_space_or_quote_is_refused(field: str, value: str) -> None:
    with pytest.raises(ValidationError):
        MappedPort.model_validate({"role": "compute", field: value, "source": "test"})
    MappedPort.model_validate({"role": "compute", field: "mlx5_11", "source": "test"})
