"""A declared interface name is one Linux can have, refused at validate where it is written.

`eth0:rail` passed validate and was refused by generate (its switch configuration cannot name the port); a
16-character name passed both and failed on the host. Linux takes names shorter than IFNAMSIZ (16) without
'/', ':' or white space (net/core/dev.c dev_valid_name).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli

REPO = Path(__file__).resolve().parents[2]
ROCE_PCIE = REPO / "tests" / "ansible_playbooks" / "data" / "roce-pcie.yaml"


def _with_netdev(tmp_path: Path, name: str) -> tuple[Path, int]:
    text = ROCE_PCIE.read_text()
    assert "netdev: ens1f0np0" in text
    path = tmp_path / "bp.yaml"
    path.write_text(text.replace("netdev: ens1f0np0", f"netdev: {name}"))
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if f"netdev: {name}" in t)
    return path, line


@pytest.mark.parametrize("name", ["eth0:rail", "a" * 16, "ens1/0"])
def test_a_name_linux_refuses_is_refused_where_it_is_written(tmp_path: Path, name: str) -> None:
    path, line = _with_netdev(tmp_path, name)
    code, out, err = run_cli("validate", str(path))
    assert code == 2, out + err
    assert f"bp.yaml:{line}:" in out + err and "netdev" in out + err
    assert "Linux interface name" in out + err
    code, out, err = run_cli("generate", str(path), "-o", str(tmp_path / "build"), "--quiet")
    assert code == 2 and not (tmp_path / "build").exists()


def test_the_longest_name_linux_takes_builds(tmp_path: Path) -> None:
    path, _ = _with_netdev(tmp_path, "e" * 15)
    code, out, err = run_cli("generate", str(path), "-o", str(tmp_path / "build"), "--quiet")
    assert code == 0, out + err
