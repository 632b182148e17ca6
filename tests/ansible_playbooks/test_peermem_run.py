"""The nvidia_peermem role, for real, on a fresh Debian test root (community.general.chroot) standing in for a
GPU node on its first run: the module is not loaded yet and the role's own check must find it loaded.

A chroot has no kernel of its own: ``/proc`` is not mounted in the test root, so ``/proc/modules`` is a plain
file there, and a stand-in ``modprobe`` appends the module it is asked for to it, as the kernel lists a module
it has loaded. ``nvidia_peermem_hardware_present=true`` (unlike ``cb_hardware_present=false`` in the other
runs) keeps the load and the check. Before the fix the load was a handler, run at the end of the play, after
the check: the first run failed with the module never loaded."""

from __future__ import annotations

import json
import platform
import subprocess
import tarfile
from pathlib import Path

import pytest
from ansible_helpers import ansible_bin, root_tarball_fixture  # noqa: F401  (fixture)

pytestmark = pytest.mark.ansible_host

ROLES = Path(__file__).resolve().parents[2] / "playbooks" / "roles"
# modprobe(8) as a kernel would answer it: -n (dry run) changes nothing; a load lists the module
MODPROBE = """#!/bin/sh
for a in "$@"; do case "$a" in -n|--dry-run) exit 0;; esac; done
echo "$1 94208 0 - Live 0x0000000000000000" >> /proc/modules
"""


@pytest.fixture(scope="module")
def gpu_root(root_tarball: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh root of its own: the stand-in modprobe and /proc/modules stay out of the shared one."""
    root = tmp_path_factory.mktemp("peermem") / "root"
    root.mkdir()
    with tarfile.open(root_tarball) as tar:
        tar.extractall(root, filter="fully_trusted")
    modprobe = root / "usr/sbin/modprobe"
    modprobe.write_text(MODPROBE)
    modprobe.chmod(0o755)
    (root / "proc").mkdir(exist_ok=True)
    (root / "proc/modules").write_text("nvidia 104857600 1 nvidia_uvm, Live 0x0000000000000000\n")
    # community.general.modprobe also reads the running kernel's built-in module list
    builtin = root / "lib/modules" / platform.release() / "modules.builtin"
    builtin.parent.mkdir(parents=True, exist_ok=True)
    builtin.write_text("")
    return root


def _play(root: Path, tmp: Path) -> dict:  # type: ignore[type-arg]
    inv = tmp / "hosts.yml"
    inv.write_text(
        "all:\n  vars:\n    ansible_connection: community.general.chroot\n    ansible_become: false\n"
        f"    ansible_python_interpreter: /usr/bin/python3\n  hosts:\n    gpu001:\n      ansible_host: {root}\n"
    )
    play = tmp / "play.json"
    play.write_text(json.dumps([{"hosts": "gpu001", "gather_facts": False, "roles": ["nvidia_peermem"]}]))
    proc = subprocess.run(
        [
            ansible_bin("ansible-playbook"),
            "-i",
            str(inv),
            "-e",
            "nvidia_peermem_hardware_present=true",
            str(play),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp,
        env={
            "ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.json",
            "ANSIBLE_ROLES_PATH": str(ROLES),
            "ANSIBLE_HOME": str(tmp / "ansible-home"),
            "PATH": "/usr/bin:/bin:/usr/sbin:/sbin",
        },
    )
    try:
        return json.loads(proc.stdout)["stats"]["gpu001"]
    except (ValueError, KeyError):
        pytest.fail(
            f"ansible-playbook printed no stats (exit {proc.returncode}): {proc.stdout[-3000:]}{proc.stderr}"
        )


def test_a_fresh_node_loads_nvidia_peermem_before_checking_it(gpu_root: Path, tmp_path: Path) -> None:
    first = _play(gpu_root, tmp_path)
    assert first["failures"] == 0, first
    assert "nvidia_peermem" in (gpu_root / "etc/modules-load.d/nvidia-peermem.conf").read_text()
    assert (gpu_root / "proc/modules").read_text().count("nvidia_peermem ") == 1
    second = _play(gpu_root, tmp_path)
    assert second["failures"] == 0 and second["changed"] == 0, second
    assert (gpu_root / "proc/modules").read_text().count("nvidia_peermem ") == 1  # loaded once, not again
