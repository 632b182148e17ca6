"""`blueprint configure` after a review: its report never replaces what it reads, the options it refuses,
the host status it takes from Ansible's own stats, an interrupted run. A build on this machine (connection
local), run by the real ansible-runner and ansible-playbook (test_configure_inputs.py's)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli
from test_configure_inputs import _build

MARK = """\
- name: Mark
  hosts: all
  gather_facts: false
  tasks:
    - name: Touch the marker
      ansible.builtin.command: touch {marker}
      changed_when: true
"""


def _marking(root: Path) -> tuple[Path, Path]:
    """A build whose mark.yml touches a file: proof that the playbook ran."""
    build = _build(root)
    marker = root / "ran"
    (build / "ansible" / "mark.yml").write_text(MARK.format(marker=json.dumps(str(marker))))
    return build, marker


@pytest.mark.parametrize(
    "target", ["-i", "ansible/inventory.yml", "ansible/mark.yml", "manifest.json", "dir"]
)
def test_the_report_never_replaces_an_input_and_is_checked_before_the_run(
    tmp_path: Path, target: str
) -> None:
    """`-o myinv.yml -i myinv.yml` replaced the inventory with the report, `-o build/ansible/inventory.yml`
    the build's; a folder as -o was refused after the whole playbook had run."""
    build, marker = _marking(tmp_path)
    own = tmp_path / "myinv.yml"
    own.write_text((build / "ansible" / "inventory.yml").read_text())
    (build / "manifest.json").write_text('{"files": {}}\n')
    path = {"-i": own, "dir": tmp_path}.get(target, build / target)
    before = None if path.is_dir() else path.read_bytes()
    code, out, err = run_cli(
        "configure", str(build), "--playbook", "mark.yml", "-i", str(own), "-o", str(path), "--format", "json"
    )
    assert code == 2 and "nothing written" in err and "Traceback" not in err, out + err
    assert ("would replace" in err) if before is not None else ("not a regular file" in err), err
    assert before is None or path.read_bytes() == before
    assert not marker.exists(), "the playbook ran before -o was checked"


@pytest.mark.parametrize("option", ["--limit", "-i", "--tags", "--skip-tags", "--artifacts"])
@pytest.mark.parametrize("value", ["", " "])
def test_an_empty_option_is_refused_not_taken_as_absent(tmp_path: Path, option: str, value: str) -> None:
    """`--limit ""` configured every host, `-i ""` the build's inventory: an empty value counted as none."""
    build, marker = _marking(tmp_path)
    code, out, err = run_cli("configure", str(build), "--playbook", "mark.yml", option, value)
    assert code == 2 and option in err and "empty" in err, out + err
    assert not marker.exists(), "the playbook ran"


RESCUED = """\
- name: Rescued
  hosts: all
  gather_facts: false
  tasks:
    - name: Try something
      block:
        - name: Optional probe
          ansible.builtin.command: /bin/false
          changed_when: false
      rescue:
        - name: Fall back
          ansible.builtin.debug:
            msg: fallback
"""

IGNORE_UNREACHABLE = """\
- name: Ignore unreachable
  hosts: all
  gather_facts: false
  tasks:
    - name: Reach
      ansible.builtin.command: /bin/true
      changed_when: false
      ignore_unreachable: true
"""


def test_a_rescued_failure_is_no_failed_host(tmp_path: Path) -> None:
    """A failure a `rescue:` block handled sends a failed event: the host was reported failed, exit 1, while
    Ansible said rc 0 successful (its stats: failures 0, rescued 1)."""
    build = _build(tmp_path)
    (build / "ansible" / "rescued.yml").write_text(RESCUED)
    code, out, err = run_cli("configure", str(build), "--playbook", "rescued.yml", "--format", "json")
    report = json.loads(out)
    assert code == 0 and report["ok"] is True and report["rc"] == 0, out + err
    lone = report["hosts"]["lone"]
    assert lone["status"] == "ok" and lone["failed"] == 0 and lone["rescued"] == 1, lone
    assert lone["failures"] == [], lone


def test_an_ignored_unreachable_host_is_not_unreachable(tmp_path: Path) -> None:
    """`ignore_unreachable: true` on a task: Ansible goes on (stats: dark 0, ignored 1, rc 0); the report said
    the host was unreachable, exit 1."""
    from real_tools import missing_executables, needs

    needs(missing_executables(["ssh"]), "apt-get install openssh-client")
    build = _build(tmp_path)
    (build / "ansible" / "ignore.yml").write_text(IGNORE_UNREACHABLE)
    inventory = tmp_path / "gone.yml"
    # nothing listens on port 1: ssh is refused at once
    inventory.write_text(
        "all:\n  hosts:\n    gone:\n      ansible_connection: ssh\n      ansible_host: 127.0.0.1\n"
        "      ansible_port: 1\n"
    )
    args = ("configure", str(build), "--playbook", "ignore.yml", "-i", str(inventory), "--format", "json")
    code, out, err = run_cli(*args)
    report = json.loads(out)
    assert code == 0 and report["rc"] == 0, out + err
    gone = report["hosts"]["gone"]
    assert gone["status"] == "ok" and gone["unreachable"] == 0 and gone["ignored"] == 1, gone


@pytest.mark.parametrize("option", ["--tags", "--skip-tags"])
def test_a_tag_that_selects_no_task_is_named(tmp_path: Path, option: str) -> None:
    """`--tags bogus` runs no task on any host: the run blamed only the inventory and --limit."""
    build = _build(tmp_path)
    (build / "ansible" / "site.yml").write_text(
        (build / "ansible" / "site.yml").read_text() + "      tags: [base]\n"
    )
    code, out, err = run_cli(
        "configure", str(build), *((option, "base") if option == "--skip-tags" else (option, "bogus"))
    )
    assert code == 1 and "no host ran a task" in err, out + err
    assert option in err and "mistyped tag" in err, err


SLOW = """\
- name: Slow
  hosts: all
  gather_facts: false
  tasks:
    - name: Sleep, then mark
      ansible.builtin.shell: echo $$ > {pidfile}; sleep 60; touch {marker}
      changed_when: true
"""


def test_an_interrupted_run_says_so_and_stops_ansibles_workers(tmp_path: Path) -> None:
    """Ctrl-C reported a failed run (status canceled, rc 254, exit 1), and ansible-runner's SIGKILL to
    ansible-playbook left its workers (each in its own session) running the task: the marker appeared."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from conftest import REPO

    build = _build(tmp_path)
    pidfile, marker = tmp_path / "task.pid", tmp_path / "ran"
    (build / "ansible" / "slow.yml").write_text(
        SLOW.format(pidfile=json.dumps(str(pidfile)), marker=json.dumps(str(marker)))
    )
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if not os.environ.get("BLUEPRINT_TEST_INSTALLED"):
        env["PYTHONPATH"] = str(REPO)
    cli = [sys.executable, "-m", "generator.cli", "configure", str(build), "--playbook", "slow.yml"]
    proc = subprocess.Popen(
        [*cli, "--format", "json"], env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 60
        while not (pidfile.exists() and pidfile.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert pidfile.exists(), "the task never started"
        task = int(pidfile.read_text())
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(task):
        time.sleep(0.2)
    orphaned = _alive(task)
    if orphaned:  # not left behind by the test: its process group is the Ansible worker's
        os.killpg(os.getpgid(task), signal.SIGKILL)
    assert proc.returncode == 130 and b"interrupted" in err, (proc.returncode, out, err)
    assert out == b"", out  # no report of a run that did not end
    assert not orphaned, "the task's process outlived the interrupted run"
    assert not marker.exists()


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize("item", ['cb_x":"1","cb_injected=2', "1st=x", "a-b=1", "a b=1", "é=1"])
def test_an_extra_variable_name_ansible_cannot_have_is_refused(tmp_path: Path, item: str) -> None:
    """ansible-runner writes -e keys into its extravars JSON unescaped: `cb_x":"1","cb_injected=2` defined
    two variables, one of them never typed as a name."""
    build, marker = _marking(tmp_path)
    code, out, err = run_cli("configure", str(build), "--playbook", "mark.yml", "-e", item)
    assert code == 2 and "not a variable name" in err, out + err
    assert not marker.exists(), "the playbook ran"
    code, out, err = run_cli("configure", str(build), "--playbook", "mark.yml", "-e", "cb_ok=1", "-q")
    assert code == 0 and marker.exists(), out + err
