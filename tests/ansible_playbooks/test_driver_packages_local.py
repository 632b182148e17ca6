"""The nvidia_driver role's package names, signing key and DNF module stream as Ansible renders them (the real
ansible-playbook on localhost, connection local, the OS facts given as extra vars; nothing is installed):

* the role's own defaults for Ubuntu 24.04 and Rocky 9, per kernel-module flavour: the RPM repository's key is
  D42D0685 (the Debian one, 3bf863cc, was used for both), Fabric Manager below branch 580 is
  nvidia-fabricmanager-<branch> on Debian and nvidia-fabric-manager on RedHat (NVIDIA/gpu-driver-container
  fabricmanager_install; tests/ansible_playbooks/test_nvswitch_packages.py has the names per branch), the open
  flavour installs nvidia-open;
* the generated pool group_vars over those defaults: a Blackwell pool gets the open flavour (the proprietary
  cuda-drivers-570 / nvidia-driver-570 before), a Hopper pool keeps the proprietary one, each with its OS's names;
* module-stream.yml with a stand-in `dnf` on PATH: the branch's stream is enabled when none is, left alone when it
  is, and another enabled stream is refused with the switch-to command (the role never enabled one before).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml
from ansible_helpers import ROLES_DIR, ansible_bin, run_play_json
from conftest import run_cli

ROLES = ROLES_DIR
DEFAULTS = ROLES / "nvidia_driver" / "defaults" / "main.yml"
UBUNTU = {
    "ansible_os_family": "Debian",
    "ansible_distribution": "Ubuntu",
    "ansible_distribution_version": "24.04",
    "ansible_distribution_major_version": "24",
    "ansible_architecture": "x86_64",
}
ROCKY = {
    "ansible_os_family": "RedHat",
    "ansible_distribution": "Rocky",
    "ansible_distribution_version": "9.4",
    "ansible_distribution_major_version": "9",
    "ansible_architecture": "x86_64",
}
SHOWN = {
    "packages": "{{ nvidia_driver_packages }}",
    "version_package": "{{ nvidia_driver_version_package }}",
    "stream": "{{ nvidia_driver_module_stream }}",
    "fm": "{{ nvidia_driver_fabricmanager_package }}",
    "nscq": "{{ nvidia_driver_nscq_package }}",
    "key": "{{ nvidia_driver_repo_key_url }}",
    "lock": "{{ nvidia_driver_versionlock_package }}",
}


def _run(tmp: Path, play: list[dict], extra: dict) -> subprocess.CompletedProcess[str]:  # type: ignore[type-arg]
    return run_play_json(tmp, play, extra)


def _rendered(tmp: Path, vars_files: list[Path], extra: dict) -> dict:  # type: ignore[type-arg]
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
    done = _run(tmp, play, extra)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    tasks = json.loads(done.stdout)["plays"][0]["tasks"]
    return tasks[-1]["hosts"]["localhost"]["shown"]  # type: ignore[no-any-return]


CUDA = "https://developer.download.nvidia.com/compute/cuda/repos/"


@pytest.mark.parametrize(
    ("facts", "flavor", "expected"),
    [
        (
            UBUNTU,
            "proprietary",
            (["cuda-drivers-570"], "nvidia-driver-570", "", CUDA + "ubuntu2404/x86_64/3bf863cc.pub"),
        ),
        (
            UBUNTU,
            "open",
            (["nvidia-open-570"], "nvidia-driver-570-open", "", CUDA + "ubuntu2404/x86_64/3bf863cc.pub"),
        ),
        (
            ROCKY,
            "proprietary",
            (["cuda-drivers-570"], "nvidia-driver", "570-dkms", CUDA + "rhel9/x86_64/D42D0685.pub"),
        ),
        (ROCKY, "open", (["nvidia-open"], "nvidia-driver", "570-open", CUDA + "rhel9/x86_64/D42D0685.pub")),
    ],
    ids=["ubuntu-proprietary", "ubuntu-open", "rocky-proprietary", "rocky-open"],
)
def test_role_defaults_name_the_os_family_packages(
    tmp_path: Path, facts: dict, flavor: str, expected: tuple
) -> None:  # type: ignore[type-arg]
    shown = _rendered(
        tmp_path, [DEFAULTS], {**facts, "nvidia_driver_branch": "570", "nvidia_driver_flavor": flavor}
    )
    assert (shown["packages"], shown["version_package"], shown["stream"], shown["key"]) == expected
    fm = "nvidia-fabric-manager" if facts is ROCKY else "nvidia-fabricmanager-570"
    assert (shown["fm"], shown["nscq"]) == (fm, "libnvidia-nscq-570")
    assert shown["lock"] == "python3-dnf-plugin-versionlock"


BLUEPRINT = """\
apiVersion: cluster-blueprint/v1
name: driver-flavour
site: {{rows: 1, racks_per_row: 2, rack: {{units: 48, power_kw: 60}}}}
pools:
  - {{name: gpu, role: gpu, count: 2, server: {server}, placement: {{nodes_per_rack: 2}}}}
fabrics:
  compute:
    technology: infiniband-ndr
    topology: {{kind: fat-tree, switch: qm9700, rail_optimized: true}}
    subnet_manager: {{kind: opensm, ha: true}}
software: {{os: {os}, driver_branch: "570", cuda: "12.8", nccl: "2.25.1", ofed: {{kind: doca, version: "2.9.1"}}}}
"""


@pytest.mark.parametrize(
    ("server", "os", "facts", "expected"),
    [
        ("dgx-b200", "ubuntu-24.04", UBUNTU, ("open", ["nvidia-open-570"], "nvidia-driver-570-open", "")),
        ("dgx-b200", "rocky-9", ROCKY, ("open", ["nvidia-open"], "nvidia-driver", "570-open")),
        ("dgx-h100", "ubuntu-24.04", UBUNTU, ("proprietary", ["cuda-drivers-570"], "nvidia-driver-570", "")),
        ("dgx-h100", "rhel-9", ROCKY, ("proprietary", ["cuda-drivers-570"], "nvidia-driver", "570-dkms")),
    ],
    ids=["b200-ubuntu", "b200-rocky", "h100-ubuntu", "h100-rhel"],
)
def test_generated_group_vars_give_the_role_the_flavour_and_names(
    tmp_path: Path,
    server: str,
    os: str,
    facts: dict,
    expected: tuple,  # type: ignore[type-arg]
) -> None:
    bp = tmp_path / "bp.yaml"
    bp.write_text(BLUEPRINT.format(server=server, os=os))
    code, _, err = run_cli("generate", str(bp), "-o", str(tmp_path / "b"), "--only", "ansible")
    assert code == 0, err
    ansible = tmp_path / "b" / "ansible"
    pool = ansible / "group_vars" / "pool_gpu.yml"
    flavor = yaml.safe_load(pool.read_text())["nvidia_driver_flavor"]
    files = [ansible / "roles/nvidia_driver/defaults/main.yml", ansible / "group_vars/all.yml", pool]
    shown = _rendered(tmp_path, files, facts)
    assert (flavor, shown["packages"], shown["version_package"], shown["stream"]) == expected
    fm = "nvidia-fabric-manager" if facts is ROCKY else "nvidia-fabricmanager-570"
    assert (shown["fm"], shown["nscq"]) == (fm, "libnvidia-nscq-570")
    assert shown["key"].endswith("D42D0685.pub" if facts is ROCKY else "3bf863cc.pub")


def _dnf_stub(tmp: Path, enabled: str | None) -> Path:
    """`dnf` answering `module list --enabled` with ``enabled`` (exit 1 without), logging every call."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    log = tmp / "dnf.log"
    listing = (
        f"CUDA\\nName          Stream   Profiles                      Summary\\n"
        f"nvidia-driver {enabled} [e] default [d], fm, ks, src   Nvidia driver for {enabled} branch\\n"
        if enabled
        else ""
    )
    script = bin_dir / "dnf"
    script.write_text(
        f'#!/bin/sh\necho "$*" >> {log}\ncase "$*" in *"module list"*) '
        + (f'printf "{listing}"; exit 0;;' if enabled else "exit 1;;")
        + " esac\nexit 0\n"
    )
    script.chmod(0o755)
    return log


@pytest.mark.parametrize(
    ("enabled", "ok", "enables"),
    [(None, True, True), ("570-open", True, False), ("570-dkms", False, False)],
    ids=["none-enabled", "same-enabled", "other-enabled"],
)
def test_the_branch_stream_is_enabled_before_the_install(
    tmp_path: Path, enabled: str | None, ok: bool, enables: bool
) -> None:
    log = _dnf_stub(tmp_path, enabled)
    tasks = [{"ansible.builtin.include_role": {"name": "nvidia_driver", "tasks_from": "module-stream.yml"}}]
    play = [{"hosts": "localhost", "gather_facts": False, "tasks": tasks}]
    done = _run(tmp_path, play, {**ROCKY, "nvidia_driver_branch": "570", "nvidia_driver_flavor": "open"})
    assert (done.returncode == 0) == ok, done.stdout[-3000:] + done.stderr[-2000:]
    calls = log.read_text().splitlines()
    assert ("-y module enable nvidia-driver:570-open" in calls) == enables, calls
    if not ok:
        assert "nvidia-driver:570-dkms is enabled" in done.stdout
        assert "dnf module switch-to nvidia-driver:570-open --allowerasing" in done.stdout


@pytest.mark.parametrize(
    ("role", "tasks_from", "lock"),
    [
        ("nvidia_driver", "install-redhat.yml", "Lock the driver packages against upgrades"),
        ("doca_ofed", "vendor-redhat.yml", "Lock the OFED packages on the pinned release"),
    ],
)
def test_the_versionlock_plugin_is_installed_before_the_first_lock(
    tmp_path: Path, role: str, tasks_from: str, lock: str
) -> None:
    """community.general.yum_versionlock needs the DNF plugin, which no role installed: the task list as
    ansible-playbook reads it (the RedHat tasks imported statically) installs it before the role's lock."""
    tasks = [{"ansible.builtin.import_role": {"name": role, "tasks_from": tasks_from}}]
    path = tmp_path / "play.json"
    path.write_text(json.dumps([{"hosts": "localhost", "gather_facts": False, "tasks": tasks}]))
    done = subprocess.run(
        [ansible_bin("ansible-playbook"), "-i", "localhost,", "--list-tasks", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "ANSIBLE_ROLES_PATH": str(ROLES), "ANSIBLE_HOME": str(tmp_path / "a")},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    names = [
        line.split(" : ", 1)[1].split("\tTAGS")[0].strip()
        for line in done.stdout.splitlines()
        if " : " in line
    ]
    assert "Install the DNF versionlock plugin" in names, names
    assert names.index("Install the DNF versionlock plugin") < names.index(lock), names
