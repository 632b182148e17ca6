"""`blueprint configure` on what an operator types: the README's relative `configure build/`, an inventory
Ansible cannot parse. A one-host build on this machine (connection
local), run by the real ansible-runner and ansible-playbook."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import run_cli

PLAY = """\
- name: Probe
  hosts: all
  gather_facts: false
  tasks:
    - name: Run true
      ansible.builtin.command: /bin/true
      changed_when: false
"""


def _build(root: Path) -> Path:
    ansible = root / "build" / "ansible"
    ansible.mkdir(parents=True)
    (ansible / "site.yml").write_text(PLAY)
    (ansible / "ansible.cfg").write_text("[defaults]\nhost_key_checking = False\n")
    (ansible / "inventory.yml").write_text(
        "all:\n  hosts:\n    lone:\n      ansible_connection: local\n"
        f"      ansible_python_interpreter: {json.dumps(sys.executable)}\n"
    )
    return root / "build"


def _configure(*args: str) -> tuple[int, dict, str]:
    code, out, err = run_cli("configure", *args, "--format", "json")
    return code, (json.loads(out) if out.strip() else {}), err


def test_a_relative_build_folder_runs_its_own_inventory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ansible-runner runs Ansible in its own folder: `build/ansible/inventory.yml`, relative, named no file
    there and was read as a host name (unreachable), never the build's hosts."""
    _build(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, report, err = _configure("build")
    assert code == 0, err
    assert list(report["hosts"]) == ["lone"] and report["hosts"]["lone"]["status"] == "ok"


def test_an_inventory_ansible_cannot_read_is_not_done(tmp_path: Path) -> None:
    """Ansible warns and exits 0 when it cannot parse the inventory: the run said "done", exit 0."""
    build = _build(tmp_path)
    broken = tmp_path / "broken.yml"
    broken.write_text("hosts: [broken\n")
    code, report, err = _configure(str(build), "-i", str(broken))
    assert code == 1 and report["hosts"] == {} and report["ok"] is False, err
    code, _, err = run_cli("configure", str(build), "-i", str(broken))
    assert code == 1 and "no host ran a task" in err, err


def test_an_artifacts_folder_with_runner_settings_is_refused(tmp_path: Path) -> None:
    """ansible-runner reads `DIR/env/cmdline` and `DIR/env/envvars` even with suppress_env_files: a folder
    someone prepared added `-e` variables and environment to the run (found by a fuzzing review)."""
    build = _build(tmp_path)
    artifacts = tmp_path / "artifacts"
    (artifacts / "env").mkdir(parents=True)
    (artifacts / "env" / "cmdline").write_text("-e pwned=1")
    code, out, err = run_cli("configure", str(build), "--artifacts", str(artifacts))
    assert code == 2 and "env/" in err and "nothing run" in err, out + err
    assert not (artifacts / "artifacts").exists()


def test_ansibles_last_lines_reach_the_terminal_without_escapes(capsys: pytest.CaptureFixture[str]) -> None:
    """The last lines of a run that failed before any host result are Ansible's raw output, where a host
    name of a (dynamic) inventory holding escape sequences set the terminal's title and character set."""
    import argparse

    from generator.commands.configure import _report

    tail = "ok: [evil\x1b]0;PWNED\x07\x1b(0host]\n[ERROR]: Error processing keyword 'hosts'"
    code = _report(argparse.Namespace(format="text", output=None, check=False), {}, 4, "failed", tail)
    err = capsys.readouterr().err
    assert code == 1, err
    assert "\x1b" not in err and "\x07" not in err, repr(err)
    assert "ok: [evil" in err and "Error processing keyword" in err and "before any host result" in err, err
