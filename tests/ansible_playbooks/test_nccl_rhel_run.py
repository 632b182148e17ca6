"""The nccl role's package tasks run by the real ansible-playbook with RHEL 9 / Rocky 9 facts (connection
local; nothing outside the test's folder is written).

The repository, NCCL install and hold were all `when: ansible_os_family == 'Debian'`, so on a RHEL host
the pinned NCCL was silently not installed, and nccl-tests asked dnf for Debian names (g++, openmpi-bin,
cuda-cudart-dev-*) and built against Debian's MPI_HOME. Here the RedHat branch must run: NVIDIA's CUDA
rhel9 repository with the rpm signing key (D42D0685), dnf asked for libnccl-<v>-1+cuda<X.Y> and its devel
package, the version lock, and the RHEL names and Open MPI paths for nccl-tests.

This machine has no dnf, so every dnf / versionlock task fails after the real module was called with its
arguments (the include applies ignore_errors): the test reads what each task asked for from the json
callback. The Debian branch runs for real in the chroot test root (test_host_run.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ansible_helpers import ansible_bin
from conftest import EXAMPLES, run_cli
from real_tools import missing_executables, needs

ROCKY9 = {
    "ansible_os_family": "RedHat",
    "ansible_distribution": "Rocky",
    "ansible_distribution_version": "9.4",
    "ansible_distribution_major_version": "9",
    "ansible_architecture": "x86_64",
    # what fact gathering reports on RHEL 9: the package action then calls the dnf module
    "ansible_facts": {"pkg_mgr": "dnf"},
    "ansible_python_interpreter": sys.executable,
}
PINS = {"nccl_version": "2.21.5", "nccl_cuda": "12.4"}
CUDA_REPO = "https://developer.download.nvidia.com/compute/cuda/repos/rhel9/x86_64/"
# nccl-tests' make target, replaced: prints what the role's build passes (make variables and environment)
MAKEFILE = "all:\n\t@echo MPI_HOME=$(MPI_HOME) CUDA_HOME=$(CUDA_HOME) NCCL_HOME=$(NCCL_HOME) CPATH=$$CPATH > built.txt\n"


@pytest.fixture(scope="module")
def roles(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The roles as `generate` ships them."""
    needs(
        missing_executables([ansible_bin("ansible-playbook"), "make"]), "the test extra installs ansible-core"
    )
    out = tmp_path_factory.mktemp("build")
    code, _, err = run_cli(
        "generate", str(EXAMPLES / "superpod-h100-4su.yaml"), "-o", str(out), "--only", "ansible"
    )
    assert code == 0, err
    return out / "ansible" / "roles"


def _run(tmp: Path, roles: Path, tasks_from: str, role_vars: dict[str, Any], *options: str) -> dict[str, Any]:
    """The role's ``tasks_from`` file on localhost with Rocky 9 facts, failures ignored: task name -> result."""
    include = {"name": "nccl", "tasks_from": tasks_from, "apply": {"ignore_errors": True}}
    play = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "vars": ROCKY9,
            "tasks": [{"ansible.builtin.include_role": include, "vars": PINS | role_vars}],
        }
    ]
    path = tmp / "play.json"
    path.write_text(json.dumps(play))
    env = {
        "PATH": "/usr/bin:/bin",
        "ANSIBLE_ROLES_PATH": str(roles),
        "ANSIBLE_HOME": str(tmp / "ansible-home"),
        "ANSIBLE_STDOUT_CALLBACK": "json",
        "ANSIBLE_LOCALHOST_WARNING": "0",
        "ANSIBLE_INVENTORY_UNPARSED_WARNING": "0",
        "HOME": str(tmp),
    }
    proc = subprocess.run(
        [ansible_bin("ansible-playbook"), "-i", "localhost,", "-c", "local", *options, str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp,
        env=env,
    )
    result = json.loads(proc.stdout)
    return {t["task"]["name"]: t["hosts"]["localhost"] for p in result["plays"] for t in p["tasks"]}


def _args(result: dict[str, Any]) -> dict[str, Any]:
    assert not result.get("skipped"), result
    return dict(result.get("invocation", {}).get("module_args", {}))


def test_the_cuda_rhel9_repository_with_the_rpm_key(roles: Path, tmp_path: Path) -> None:
    # check mode: nothing is written (this machine has no /etc/yum.repos.d, so the module stops there)
    tasks = _run(tmp_path, roles, "packages", {}, "--check")
    repo = _args(tasks["nccl : Add NVIDIA's CUDA repository"])
    assert repo["baseurl"] == [CUDA_REPO]
    assert repo["gpgkey"] == [CUDA_REPO + "D42D0685.pub"] and repo["gpgcheck"] is True


def test_dnf_installs_and_locks_the_pinned_nccl(roles: Path, tmp_path: Path) -> None:
    tasks = _run(tmp_path, roles, "packages", {"nccl_manage_repo": False})
    install = _args(tasks["nccl : Install NCCL at the pinned version"])
    assert install["name"] == ["libnccl-2.21.5-1+cuda12.4", "libnccl-devel-2.21.5-1+cuda12.4"]
    assert "dnf" in tasks["nccl : Install NCCL at the pinned version"]["msg"]  # the dnf module, not apt
    plugin = _args(tasks["nccl : Install dnf's versionlock plug-in"])
    assert plugin["name"] == ["python3-dnf-plugin-versionlock"]
    lock = _args(tasks["nccl : Lock NCCL on the pinned version"])
    assert lock == {"name": ["libnccl", "libnccl-devel"], "state": "present"}
    assert "Hold NCCL on the pinned version" not in " ".join(tasks)  # apt's hold is the Debian branch


def test_nccl_tests_build_with_rhel_packages_and_open_mpi_paths(roles: Path, tmp_path: Path) -> None:
    src = tmp_path / "nccl-tests"
    src.mkdir()
    (src / "Makefile").write_text(MAKEFILE)
    role_vars = {"nccl_tests_dir": str(src), "nccl_tests_repo": str(tmp_path / "no-such-repo")}
    tasks = _run(tmp_path, roles, "nccl_tests", role_vars)
    packages = _args(tasks["nccl : Install the nccl-tests build dependencies"])
    assert packages["name"] == [
        "git", "make", "gcc-c++", "openmpi", "openmpi-devel", "cuda-nvcc-12-4", "cuda-cudart-devel-12-4",
    ]  # fmt: skip
    built = (src / "built.txt").read_text().split()
    assert "MPI_HOME=/usr/lib64/openmpi" in built
    assert "CPATH=/usr/include/openmpi-x86_64" in built
    assert "CUDA_HOME=/usr/local/cuda-12.4" in built and "NCCL_HOME=/usr" in built
