"""NVIDIA's CUDA repository (URL, signing key) and the DNF versionlock plug-in as each role that uses them gets
them, rendered by the real ansible-playbook (localhost, connection local, the OS facts as extra vars; nothing is
installed) over the role's defaults and the generated group_vars.

One catalogue entry (software.cuda_repo and the OS's software.driver_packages entry) is their one source: the
nccl role kept its own copy of the repository URL, the signing keys and `nccl_versionlock_packages`, which the
generated group_vars never set, so a changed catalogue entry reached nvidia_driver and doca_ofed but not nccl.
The roles' own defaults (for a role used on its own) must be that same catalogue value for every OS.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ansible_helpers import ROLES_DIR, run_play_json
from conftest import run_cli

from blueprints.catalog.load import default_catalog
from blueprints.catalog.schema import SOFTWARE_OS

ROLES = ROLES_DIR
DEFAULTS = [ROLES / role / "defaults" / "main.yml" for role in ("nvidia_driver", "nccl", "doca_ofed")]
# what each role adds the repository from / installs before its first lock
SHOWN = {
    "nvidia_driver_repo": "{{ nvidia_driver_repo_url }}",
    "nvidia_driver_key": "{{ nvidia_driver_repo_key_url }}",
    "nccl_repo": "{{ nccl_repo_url }}",
    "nccl_key": "{{ nccl_repo_key_url }}",
    "nvidia_driver_lock": "{{ nvidia_driver_versionlock_package }}",
    "nccl_lock": "{{ nccl_versionlock_package }}",
    "doca_ofed_lock": "{{ doca_ofed_versionlock_package }}",
}
# Ansible's facts of each software.os value
FACTS = {
    "ubuntu-22.04": ("Debian", "Ubuntu", "22.04", "22"),
    "ubuntu-24.04": ("Debian", "Ubuntu", "24.04", "24"),
    "debian-12": ("Debian", "Debian", "12.7", "12"),
    "rhel-9": ("RedHat", "RedHat", "9.4", "9"),
    "rocky-9": ("RedHat", "Rocky", "9.4", "9"),
}

BLUEPRINT = """\
{catalog}apiVersion: cluster-blueprint/v1
name: cuda-repo
site: {{rows: 1, racks_per_row: 2, rack: {{units: 48, power_kw: 60}}}}
pools:
  - {{name: gpu, role: gpu, count: 2, server: dgx-h100, placement: {{nodes_per_rack: 2}}}}
fabrics:
  compute:
    technology: infiniband-ndr
    topology: {{kind: fat-tree, switch: qm9700, rail_optimized: true}}
    subnet_manager: {{kind: opensm, ha: true}}
software: {{os: {os}, driver_branch: "570", cuda: "12.8", nccl: "2.25.1", ofed: {{kind: doca, version: "2.9.1"}}}}
"""
# A site's own entry for rocky-9: its mirror's directory, key and versionlock package
SITE_ENTRY = """\
software:
  driver_packages:
    - os: [rocky-9]
      repo_dirs: {rocky-9: site9}
      repo_dirs_source: "the site's mirror of rhel9/"
      repo_key: SITE0001.pub
      repo_key_source: "the site's mirror signs with its own key"
      proprietary: {packages: [cuda-drivers-<branch>], version_package: nvidia-driver,
                    module_stream: <branch>-dkms, source: "site mirror"}
      open: {packages: [nvidia-open], version_package: nvidia-driver, module_stream: <branch>-open,
             source: "site mirror"}
      fabricmanager: nvidia-fabricmanager-<branch>
      nscq: libnvidia-nscq-<branch>
      source: "site mirror"
      versionlock_package: python3-site-versionlock
      versionlock_source: "site mirror"
"""


def _facts(os: str, arch: str = "x86_64") -> dict[str, str]:
    family, distribution, version, major = FACTS[os]
    return {
        "ansible_os_family": family,
        "ansible_distribution": distribution,
        "ansible_distribution_version": version,
        "ansible_distribution_major_version": major,
        "ansible_architecture": arch,
    }


def _rendered(tmp: Path, vars_files: list[Path], facts: dict[str, str]) -> dict[str, Any]:
    play = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "vars_files": [str(f) for f in vars_files],
            "tasks": [
                {"ansible.builtin.set_fact": {"shown": SHOWN}},
                {"ansible.builtin.debug": {"var": "shown"}},
            ],
        }
    ]
    done = run_play_json(tmp, play, facts)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    return json.loads(done.stdout)["plays"][0]["tasks"][-1]["hosts"]["localhost"]["shown"]  # type: ignore[no-any-return]


def _generated(tmp: Path, os: str, catalog: str | None) -> list[Path]:
    if catalog is not None:
        (tmp / "cat.yaml").write_text(catalog)
    bp = tmp / "bp.yaml"
    bp.write_text(BLUEPRINT.format(os=os, catalog="catalog: cat.yaml\n" if catalog else ""))
    code, _, err = run_cli("generate", str(bp), "-o", str(tmp / "b"), "--only", "ansible")
    assert code == 0, err
    group_vars = tmp / "b" / "ansible" / "group_vars"
    return [*DEFAULTS, group_vars / "all.yml", group_vars / "pool_gpu.yml"]


def _expected(os: str, arch: str, url: str, distro: str, key: str, lock: str) -> dict[str, str]:
    repo = f"{url}{distro}/{arch}/"
    return {
        "nvidia_driver_repo": repo,
        "nvidia_driver_key": repo + key,
        "nccl_repo": repo,
        "nccl_key": repo + key,
        "nvidia_driver_lock": lock,
        "nccl_lock": lock,
        "doca_ofed_lock": lock,
    }


@pytest.mark.parametrize(("arch", "arch_dir"), [("x86_64", "x86_64"), ("aarch64", "sbsa")])
def test_a_changed_catalogue_entry_reaches_every_role(tmp_path: Path, arch: str, arch_dir: str) -> None:
    """A site's driver_packages entry for rocky-9 (its mirror's directory, key and versionlock package): the
    nvidia_driver, nccl and doca_ofed roles all get it (nccl kept rhel9/D42D0685 and its own plug-in name)."""
    shown = _rendered(tmp_path, _generated(tmp_path, "rocky-9", SITE_ENTRY), _facts("rocky-9", arch))
    url = "https://developer.download.nvidia.com/compute/cuda/repos/"
    assert shown == _expected("rocky-9", arch_dir, url, "site9", "SITE0001.pub", "python3-site-versionlock")


@pytest.mark.parametrize("os", SOFTWARE_OS)
def test_the_roles_defaults_are_the_catalogue_values(tmp_path: Path, os: str) -> None:
    """Every role alone (its defaults only) and every role under the generated group_vars adds the same
    repository, key and plug-in, which are the catalogue's for that OS."""
    software = default_catalog().software
    assert software is not None and software.cuda_repo is not None
    entry = software.driver_packages_for(os)
    assert entry is not None
    lock = entry.versionlock_package or "python3-dnf-plugin-versionlock"  # only the RedHat family locks
    expected = _expected(os, "x86_64", software.cuda_repo.url, entry.repo_dirs[os], entry.repo_key, lock)
    assert _rendered(tmp_path, DEFAULTS, _facts(os)) == expected
    assert _rendered(tmp_path, _generated(tmp_path, os, None), _facts(os)) == expected
