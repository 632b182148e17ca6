"""The host_fabric role picks the host's own network configuration, run by the real ansible-playbook (connection
local, check mode: nothing is written): netplan on the Debian family, NetworkManager keyfile profiles on RHEL 9
/ Rocky 9 (which ship no netplan; the profiles themselves: test_host_fabric_nm_run.py). A host of another
family with fabric addresses to configure stops at the role's first check, naming the OS and the interfaces,
instead of writing files nothing reads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from ansible_helpers import ansible_bin
from real_tools import missing_executables, needs

ROLES = Path(__file__).resolve().parents[2] / "playbooks" / "roles"
NIC = {"interface": "ibp24s0", "purpose": "compute", "rail": 0, "kind": "ipoib", "subnet": "10.100.0.0/19",
       "mtu": None, "table": None}  # fmt: skip
FACTS = {
    "ansible_distribution_version": "9.4",
    "ansible_distribution_major_version": "9",
    "ansible_python_interpreter": sys.executable,
    "host_fabric_interfaces": [NIC],
    "cb_fabric_addresses": {"ibp24s0": "10.100.0.10/19"},
    "cb_hardware_present": False,
}


def _run(tmp: Path, family: str, distribution: str) -> tuple[int, list[dict[str, Any]]]:
    needs(missing_executables([ansible_bin("ansible-playbook")]), "the test extra installs ansible-core")
    facts = FACTS | {"ansible_os_family": family, "ansible_distribution": distribution}
    play = [{"hosts": "localhost", "gather_facts": False, "vars": facts, "roles": ["host_fabric"]}]
    path = tmp / "play.json"
    path.write_text(json.dumps(play))
    env = {
        "PATH": "/usr/bin:/bin",
        "ANSIBLE_ROLES_PATH": str(ROLES),
        "ANSIBLE_HOME": str(tmp / "ansible-home"),
        "ANSIBLE_STDOUT_CALLBACK": "json",
        "ANSIBLE_LOCALHOST_WARNING": "0",
        "ANSIBLE_INVENTORY_UNPARSED_WARNING": "0",
        "HOME": str(tmp),
    }
    proc = subprocess.run(
        [ansible_bin("ansible-playbook"), "-i", "localhost,", "-c", "local", "--check", str(path)],
        capture_output=True, text=True, timeout=300, cwd=tmp, env=env,
    )  # fmt: skip
    tasks = [t for p in json.loads(proc.stdout)["plays"] for t in p["tasks"]]
    return proc.returncode, tasks


def _ran(tasks: list[dict[str, Any]], name: str) -> bool:
    return any(
        t["task"]["name"] == f"host_fabric : {name}" and not t["hosts"]["localhost"].get("skipped")
        for t in tasks
    )


def test_rocky_host_goes_on_to_networkmanager_profiles(tmp_path: Path) -> None:
    code, tasks = _run(tmp_path, "RedHat", "Rocky")
    assert code == 0, tasks
    assert _ran(tasks, "Write each fabric interface's NetworkManager profile")
    assert not _ran(tasks, "Write the fabric interfaces to netplan") and not _ran(
        tasks, "Create /etc/netplan"
    )


def test_a_host_of_another_family_stops_before_writing(tmp_path: Path) -> None:
    code, tasks = _run(tmp_path, "Suse", "SLES")
    assert code != 0
    failed = [t for t in tasks if t["hosts"]["localhost"].get("failed")]
    assert [t["task"]["name"] for t in failed] == [
        "host_fabric : Check the host's network is configured with netplan or NetworkManager"
    ]
    message = failed[0]["hosts"]["localhost"]["msg"]
    assert (
        "SLES (Suse family)" in message
        and "ibp24s0" in message
        and "NetworkManager (RHEL / Rocky 9)" in message
    )
    assert not any("Write" in t["task"]["name"] for t in tasks)


def test_ubuntu_host_goes_on_to_netplan(tmp_path: Path) -> None:
    code, tasks = _run(tmp_path, "Debian", "Ubuntu")
    assert code == 0, tasks
    assert _ran(tasks, "Write the fabric interfaces to netplan")
    assert not _ran(tasks, "Write each fabric interface's NetworkManager profile")
