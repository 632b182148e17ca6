"""The opensm role, for real, on the Debian test root (community.general.chroot): the generated SM files land in
/etc/opensm/<fabric>/, the per-fabric unit is written, a second run changes nothing. No IB port and no
systemd in a chroot: ``opensm_hardware_present=false`` skips the package, the port GUID and the service
start (as ``cb_hardware_present`` does for the other roles)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from ansible_helpers import ansible_bin, chroot_root_fixture, root_tarball_fixture  # noqa: F401  (fixtures)
from conftest import run_cli

pytestmark = pytest.mark.ansible_host

FIXTURE = Path(__file__).resolve().parents[1] / "realtools" / "fixtures" / "ft2-hdr-rail-sm.yaml"


def _play(build: Path, inventory: Path) -> dict:  # type: ignore[type-arg]
    proc = subprocess.run(
        [
            ansible_bin("ansible-playbook"),
            "-i",
            str(inventory),
            "-i",
            "../subnet_manager/inventory.yml",
            "--limit",
            "gpu001",
            "-e",
            "opensm_hardware_present=false",
            "opensm.yml",
        ],
        cwd=build / "ansible",
        capture_output=True,
        text=True,
        timeout=600,
        env={"ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.json", "PATH": "/usr/bin:/bin:/usr/sbin:/sbin"},
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    return json.loads(proc.stdout)["stats"]["gpu001"]


def test_opensm_role_installs_the_generated_files(chroot_root: Path, tmp_path: Path) -> None:
    build = tmp_path / "build"
    code, _, err = run_cli(
        "generate", str(FIXTURE), "-o", str(build), "--quiet", "--only", "ansible,subnet_manager"
    )
    assert code == 0, err
    inv = tmp_path / "chroot.yml"
    inv.write_text(
        "all:\n  vars:\n    ansible_connection: community.general.chroot\n    ansible_become: false\n"
        f"    ansible_python_interpreter: /usr/bin/python3\n  hosts:\n    gpu001:\n      ansible_host: {chroot_root}\n"
    )
    first = _play(build, inv)
    assert first["failures"] == 0 and first["changed"] >= 3, first  # dirs, the copied files, the unit
    etc = chroot_root / "etc" / "opensm" / "compute"
    sm = build / "subnet_manager" / "compute"
    assert (etc / "opensm.conf").read_bytes() == (sm / "gpu001" / "opensm.conf").read_bytes()  # this host's
    assert "sm_priority 15" in (etc / "opensm.conf").read_text()  # gpu001 is the master
    assert (etc / "partitions.conf").read_bytes() == (sm / "partitions.conf").read_bytes()
    unit = (chroot_root / "etc/systemd/system/cluster-blueprint-opensm@.service").read_text()
    assert "ExecStart=/usr/sbin/opensm -F /etc/opensm/%i/opensm.conf -g ${OPENSM_PORT_GUID}" in unit
    second = _play(build, inv)
    assert second["failures"] == 0 and second["changed"] == 0, second
