"""Fabric Manager and NSCQ package names per driver branch on NVSwitch systems (HGX/DGX H100, H200, B200).

NVIDIA's CUDA repository drops the driver branch from both names at branch 580. NVIDIA/gpu-driver-container
installs, on Ubuntu (ubuntu22.04/install.sh fabricmanager_install / nscq_install):
  branch >= 580  nvidia-fabricmanager=<version>-1, libnvidia-nscq=<version>-1
  below          nvidia-fabricmanager-<branch>=<version>-1, libnvidia-nscq-<branch>=<version>-1
and on RHEL 9 (rhel9/install.sh):
  branch >= 580  nvidia-fabricmanager-<version>-1, libnvidia-nscq-<version>-1
  below          nvidia-fabric-manager-<version>-1, libnvidia-nscq-<branch>-<version>-1
The catalogue wrote nvidia-fabricmanager-<branch> / libnvidia-nscq-<branch> for every branch and OS, names that
do not exist from 580 on (nor for the RPM Fabric Manager). The expected names below are written from those
scripts, not read from the catalogue. The names are rendered by the real ansible-playbook (localhost,
connection local, the OS facts as extra vars; nothing is installed), over the generated group_vars and over
the role's own defaults.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml
from ansible_helpers import ROLES_DIR, run_play_json
from conftest import run_cli

ROLES = ROLES_DIR
DEFAULTS = ROLES / "nvidia_driver" / "defaults" / "main.yml"
DEBIAN = {"ansible_os_family": "Debian", "ansible_distribution": "Ubuntu", "ansible_architecture": "x86_64"}
REDHAT = {"ansible_os_family": "RedHat", "ansible_distribution": "Rocky", "ansible_architecture": "x86_64"}
SHOWN = {"fm": "{{ nvidia_driver_fabricmanager_package }}", "nscq": "{{ nvidia_driver_nscq_package }}"}

# (OS family, branch) -> (Fabric Manager, NSCQ), from NVIDIA/gpu-driver-container's install scripts
EXPECTED = {
    ("Debian", "570"): ("nvidia-fabricmanager-570", "libnvidia-nscq-570"),
    ("Debian", "580"): ("nvidia-fabricmanager", "libnvidia-nscq"),
    ("RedHat", "570"): ("nvidia-fabric-manager", "libnvidia-nscq-570"),
    ("RedHat", "580"): ("nvidia-fabricmanager", "libnvidia-nscq"),
}

BLUEPRINT = """\
apiVersion: cluster-blueprint/v1
name: nvswitch-packages
site: {{rows: 1, racks_per_row: 2, rack: {{units: 48, power_kw: 60}}}}
pools:
  - {{name: gpu, role: gpu, count: 2, server: {server}, placement: {{nodes_per_rack: 2}}}}
fabrics:
  compute:
    technology: infiniband-ndr
    topology: {{kind: fat-tree, switch: qm9700, rail_optimized: true}}
    subnet_manager: {{kind: opensm, ha: true}}
software: {{os: {os}, driver_branch: "{branch}", cuda: "12.8", nccl: "2.25.1", ofed: {{kind: doca, version: "2.9.1"}}{extra}}}
"""


def _blueprint(tmp: Path, os: str, branch: str, server: str = "dgx-h100", extra: str = "") -> Path:
    path = tmp / f"bp-{os}-{branch}.yaml"
    path.write_text(BLUEPRINT.format(server=server, os=os, branch=branch, extra=extra))
    return path


def _play(
    tmp: Path, vars_files: list[Path], extra: dict[str, str], tasks: list[dict]
) -> subprocess.CompletedProcess[str]:  # type: ignore[type-arg]
    play = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "vars_files": [str(f) for f in vars_files],
            "tasks": tasks,
        }
    ]
    return run_play_json(tmp, play, extra)


def _rendered(tmp: Path, vars_files: list[Path], extra: dict[str, str]) -> tuple[str, str]:
    tasks = [{"ansible.builtin.set_fact": {"shown": SHOWN}}, {"ansible.builtin.debug": {"var": "shown"}}]
    done = _play(tmp, vars_files, extra, tasks)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    shown = json.loads(done.stdout)["plays"][0]["tasks"][-1]["hosts"]["localhost"]["shown"]
    return shown["fm"], shown["nscq"]


@pytest.mark.parametrize(
    ("os", "family", "branch"),
    [
        ("ubuntu-22.04", "Debian", "570"),
        ("ubuntu-22.04", "Debian", "580"),
        ("rocky-9", "RedHat", "570"),
        ("rocky-9", "RedHat", "580"),
    ],
)
def test_generated_names_per_branch(tmp_path: Path, os: str, family: str, branch: str) -> None:
    """An HGX H100 system (DGX H100) on branch 570 and 580: the generated pool group_vars name the packages
    NVIDIA's repository holds for the OS and branch, with the source next to them, and the role reads them."""
    code, _, err = run_cli(
        "generate", str(_blueprint(tmp_path, os, branch)), "-o", str(tmp_path / "b"), "--only", "ansible"
    )
    assert code == 0, err
    ansible = tmp_path / "b" / "ansible"
    pool = ansible / "group_vars" / "pool_gpu.yml"
    data = yaml.safe_load(pool.read_text())
    assert data["nvidia_driver_nvswitch"] is True
    fm, nscq = EXPECTED[(family, branch)]
    assert (data["nvidia_driver_fabricmanager_package"], data["nvidia_driver_nscq_package"]) == (fm, nscq)
    text = pool.read_text()
    assert f"# Fabric Manager branch {branch}: NVIDIA/gpu-driver-container" in text, text
    assert f"# NSCQ branch {branch}: NVIDIA/gpu-driver-container" in text, text
    files = [ansible / "roles/nvidia_driver/defaults/main.yml", ansible / "group_vars/all.yml", pool]
    facts = DEBIAN if family == "Debian" else REDHAT
    assert _rendered(tmp_path, files, {**facts, "nvidia_driver_branch": branch}) == (fm, nscq)


@pytest.mark.parametrize(
    ("facts", "branch", "expected"),
    [
        (DEBIAN, "570", EXPECTED[("Debian", "570")]),
        (DEBIAN, "580", EXPECTED[("Debian", "580")]),
        (DEBIAN, "590", ("nvidia-fabricmanager", "libnvidia-nscq")),
        (REDHAT, "570", EXPECTED[("RedHat", "570")]),
        (REDHAT, "580", EXPECTED[("RedHat", "580")]),
        (DEBIAN, "600", ("", "")),  # no source names it: none, and the role stops
        (REDHAT, "515", ("nvidia-fabric-manager", "")),
    ],
    ids=["deb-570", "deb-580", "deb-590", "rpm-570", "rpm-580", "deb-600", "rpm-515"],
)
def test_role_defaults_name_the_packages_per_branch(
    tmp_path: Path, facts: dict[str, str], branch: str, expected: tuple[str, str]
) -> None:
    """The role on its own (no generated group_vars) picks the same names from its table."""
    assert _rendered(tmp_path, [DEFAULTS], {**facts, "nvidia_driver_branch": branch}) == expected


def test_role_defaults_equal_the_catalogue() -> None:
    """One truth: the role's tables are the catalogue's ranges for each OS family's entry."""
    from blueprints.catalog import default_catalog

    software = default_catalog().software
    assert software is not None
    defaults = yaml.safe_load(DEFAULTS.read_text())
    for family, os in (("Debian", "ubuntu-22.04"), ("RedHat", "rhel-9")):
        pkgs = software.driver_packages_for(os)
        assert pkgs is not None
        for which in ("fabricmanager", "nscq"):
            table = [{"first": p.first, "last": p.last, "name": p.name} for p in getattr(pkgs, which)]
            assert defaults[f"nvidia_driver_{which}_packages"][family] == table, (family, which)
    # every OS of a family has the same entry as the one compared above
    assert software.driver_packages_for("ubuntu-24.04") == software.driver_packages_for("debian-12")
    assert software.driver_packages_for("rocky-9") == software.driver_packages_for("rhel-9")


CHECK = "Check the Fabric Manager and NSCQ packages of the driver branch are known"


def test_the_role_stops_on_a_branch_without_names(tmp_path: Path) -> None:
    """No guess: on an NVSwitch host of a branch outside the table the role stops before it installs anything.
    The role's own check task is played alone (the rest of the role would change this host)."""
    tasks = yaml.safe_load((ROLES / "nvidia_driver" / "tasks" / "main.yml").read_text())
    names = [t["name"] for t in tasks]
    assert CHECK in names, names
    assert names.index(CHECK) < names.index("Configure the repository and install the driver"), names
    check = tasks[names.index(CHECK)]
    base = {**DEBIAN, "nvidia_driver_nvswitch": "true"}
    done = _play(tmp_path, [DEFAULTS], {**base, "nvidia_driver_branch": "600"}, [check])
    assert done.returncode != 0
    assert "no Fabric Manager or NSCQ package is recorded for driver branch 600" in done.stdout, done.stdout[
        -3000:
    ]
    assert "software.fabricmanager_package" in done.stdout
    done = _play(tmp_path, [DEFAULTS], {**base, "nvidia_driver_branch": "580"}, [check])
    assert done.returncode == 0, done.stdout[-3000:]


def test_unrecorded_branch_is_refused(tmp_path: Path) -> None:
    """validate refuses an NVSwitch pool on a branch no source names, at software.driver_branch."""
    path = _blueprint(tmp_path, "ubuntu-22.04", "595", server="hgx-h200")
    code, out, err = run_cli("validate", str(path))
    assert code == 1, out + err
    line = next(line for line in out.splitlines() if " SFT011 " in line)
    assert line.startswith(f"{path}:11:") and "595" in line, line
    assert "software.fabricmanager_package and software.nscq_package" in line, line
    # a DGX (its DGX OS ships the driver and Fabric Manager) and a server without NVSwitch need no name
    for server in ("dgx-h100", "pcie-h100-8"):
        code, out, _ = run_cli("validate", str(_blueprint(tmp_path, "ubuntu-22.04", "595", server=server)))
        assert " SFT011 " not in out, (server, out)


def test_declared_names_for_an_unrecorded_branch(tmp_path: Path) -> None:
    """The blueprint's names are what the role installs, with where they come from."""
    extra = ", fabricmanager_package: nvidia-fabricmanager, nscq_package: libnvidia-nscq"
    path = _blueprint(tmp_path, "ubuntu-22.04", "595", server="hgx-h200", extra=extra)
    code, out, err = run_cli("validate", str(path))
    assert " SFT011 " not in out, out + err
    code, _, err = run_cli("generate", str(path), "-o", str(tmp_path / "b"), "--only", "ansible")
    assert code == 0, err
    pool = tmp_path / "b" / "ansible" / "group_vars" / "pool_gpu.yml"
    data = yaml.safe_load(pool.read_text())
    assert data["nvidia_driver_fabricmanager_package"] == "nvidia-fabricmanager"
    assert data["nvidia_driver_nscq_package"] == "libnvidia-nscq"
    assert "software.fabricmanager_package (driver branch 595)" in pool.read_text()
