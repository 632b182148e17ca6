"""The DOCA-OFED repository the doca_ofed role points a node at, rendered by real ansible-playbook.

Expected paths are NVIDIA's layout as public sources show it (independent of the role): up to DOCA 2.x a
RHEL-family repository per minor release (stackhpc/stackhpc-release-train, commit b348e74:
``doca/2.9.3/rhel9.6/x86_64/``), from DOCA 3.2.0 one per major release (same commit:
``doca/3.2.0/rhel9/x86_64/``; DOCA 3.2.1 "General Support": "NVIDIA no longer provides DOCA-Host for minor
OS releases"); Ubuntu per release (``doca/2.9.1/ubuntu24.04/``, public install notes).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ansible_helpers import run_local_play

ROLE_DEFAULTS = (
    Path(__file__).resolve().parents[2] / "playbooks" / "roles" / "doca_ofed" / "defaults" / "main.yml"
)
BASE = "https://linux.mellanox.com/public/repo/doca/"

REDHAT_9_6 = {
    "ansible_os_family": "RedHat",
    "ansible_distribution": "Rocky",
    "ansible_distribution_version": "9.6",
    "ansible_distribution_major_version": "9",
}
UBUNTU_24_04 = {
    "ansible_os_family": "Debian",
    "ansible_distribution": "Ubuntu",
    "ansible_distribution_version": "24.04",
    "ansible_distribution_major_version": "24",
}


def _repo_url(tmp_path: Path, facts: dict[str, str], version: str) -> str:
    play = tmp_path / "render.yml"
    play.write_text(
        "- hosts: localhost\n  gather_facts: false\n"
        f"  vars_files: ['{ROLE_DEFAULTS}']\n"
        "  tasks:\n    - ansible.builtin.debug: {var: doca_ofed_repo_url}\n"
    )
    extra = {
        **facts,
        "ansible_architecture": "x86_64",
        "doca_ofed_kind": "doca",
        "doca_ofed_version": version,
    }
    code, result = run_local_play(play, extra)
    assert code == 0, json.dumps(result)[-2000:]
    return str(result["plays"][0]["tasks"][0]["hosts"]["localhost"]["doca_ofed_repo_url"])


@pytest.mark.parametrize(
    ("facts", "version", "expected"),
    [
        (REDHAT_9_6, "2.9.3", BASE + "2.9.3/rhel9.6/x86_64/"),
        (REDHAT_9_6, "3.2.0", BASE + "3.2.0/rhel9/x86_64/"),
        (UBUNTU_24_04, "2.9.1", BASE + "2.9.1/ubuntu24.04/x86_64/"),
    ],
)
def test_doca_repository_follows_nvidias_layout(
    tmp_path: Path, facts: dict[str, str], version: str, expected: str
) -> None:
    assert _repo_url(tmp_path, facts, version) == expected
