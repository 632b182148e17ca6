"""playbooks/switches.yml for an FRR fabric (``switch_os: frr``), for real, on the Debian test root
(community.general.chroot) with Debian's frr and frr-pythontools installed, as on a Linux NOS running FRR.

The generated frr.conf becomes /etc/frr/frr.conf (owner and group frr, mode 0640, as the package keeps
it), bgpd is enabled in /etc/frr/daemons, and the reload handler is notified; a second run changes
nothing and notifies nothing; a frr.conf that FRR's own parser (``vtysh --dryrun``) rejects is not
installed. No systemd in a chroot: ``switches_frr_systemd=false`` skips the service (the handler then
shows as notified but skipped). The Cumulus branch needs NVUE (``nv``) and is not run here.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from ansible_helpers import ansible_bin, chroot_root_fixture, root_tarball_fixture  # noqa: F401  (fixtures)
from conftest import run_cli
from switch_os import with_switch_os

pytestmark = pytest.mark.ansible_host

REPO = Path(__file__).resolve().parents[2]
DRAGONFLY = REPO / "tests" / "realtools" / "fixtures" / "roce-dragonfly-small.yaml"
RELOAD = "Reload FRR"
ENV = {"ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.json", "PATH": "/usr/bin:/bin:/usr/sbin:/sbin"}


def _chroot_inventory(path: Path, host: str, root: Path) -> Path:
    """The switch as a host var (beats the generated group's connection): reached through the chroot."""
    path.write_text(
        "all:\n  hosts:\n"
        f"    {host}:\n      ansible_connection: community.general.chroot\n      ansible_host: {root}\n"
        "      ansible_become: false\n      ansible_python_interpreter: /usr/bin/python3\n"
    )
    return path


def _install_frr(inventory: Path, host: str) -> None:
    proc = subprocess.run(
        [
            ansible_bin("ansible"),
            host,
            "-i",
            str(inventory),
            "-m",
            "ansible.builtin.apt",
            "-a",
            "name=frr,frr-pythontools state=present install_recommends=false",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=ENV,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]


def _play(switches: Path, chroot_inv: Path, host: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    proc = subprocess.run(
        [
            ansible_bin("ansible-playbook"),
            "-i",
            str(switches / "inventory.yml"),
            "-i",
            str(chroot_inv),
            "--limit",
            host,
            "-e",
            "switches_frr_systemd=false",
            "switches.yml",  # the copy in build/ansible/, run from there as docs/switches.md says
        ],
        cwd=switches.parent / "ansible",
        capture_output=True,
        text=True,
        timeout=600,
        env=ENV,
    )
    return proc.returncode, json.loads(proc.stdout)


def _task_results(result: dict, host: str) -> dict[str, dict]:  # type: ignore[type-arg]
    return {t["task"]["name"]: t["hosts"][host] for t in result["plays"][0]["tasks"] if host in t["hosts"]}


def _ids(root: Path, table: str, name: str) -> int:
    for line in (root / "etc" / table).read_text().splitlines():
        fields = line.split(":")
        if fields[0] == name:
            return int(fields[2])
    raise AssertionError(f"{name} not in the test root's /etc/{table}")


def test_frr_switch_gets_its_frr_conf_and_a_reload(chroot_root: Path, tmp_path: Path) -> None:
    bp = with_switch_os(DRAGONFLY, tmp_path, compute="frr")
    code, _, err = run_cli(
        "generate", str(bp), "-o", str(tmp_path / "build"), "--quiet", "--only", "ansible,switches"
    )
    assert code == 0, err
    switches = tmp_path / "build" / "switches"
    host = sorted(p.name for p in (switches / "compute").iterdir())[0]
    generated = switches / "compute" / host / "frr.conf"
    inv = _chroot_inventory(tmp_path / "chroot.yml", host, chroot_root)
    _install_frr(inv, host)
    etc = chroot_root / "etc" / "frr"

    code, first = _play(switches, inv, host)
    assert code == 0 and first["stats"][host]["failures"] == 0, first["stats"]
    installed = etc / "frr.conf"
    assert installed.read_bytes() == generated.read_bytes()
    st = installed.stat()
    assert (st.st_uid, st.st_gid) == (_ids(chroot_root, "passwd", "frr"), _ids(chroot_root, "group", "frr"))
    assert st.st_mode & 0o777 == 0o640
    daemons = (etc / "daemons").read_text().splitlines()
    assert "bgpd=yes" in daemons and "bgpd=no" not in daemons
    tasks = _task_results(first, host)
    assert tasks[f"{RELOAD} (frr-reload.py applies the difference; starts FRR if it is stopped)"].get(
        "skipped"
    )
    nvue = [name for name in tasks if "startup.yaml" in name or "staging" in name]  # the Cumulus branch
    assert nvue and all(tasks[name].get("skipped") for name in nvue)
    assert not any("pending configuration" in name for name in tasks)  # no nv config replace/apply

    code, second = _play(switches, inv, host)
    assert code == 0 and second["stats"][host]["changed"] == 0, second["stats"]
    assert not any(name.startswith(RELOAD) for name in _task_results(second, host))  # nothing to reload

    generated.write_text(generated.read_text() + "router bgp 1\n no-such-command\n")  # FRR's parser refuses
    code, third = _play(switches, inv, host)
    assert code != 0 and third["stats"][host]["failures"] == 1
    failed = [r for r in _task_results(third, host).values() if r.get("failed")]
    assert len(failed) == 1 and "failed to validate" in failed[0]["msg"], failed
    assert installed.read_bytes() != generated.read_bytes()  # the running switch keeps its good file
