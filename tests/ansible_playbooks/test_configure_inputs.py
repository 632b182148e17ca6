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
    code = _report(
        argparse.Namespace(format="text", output=None, force=False, check=False), {}, 4, "failed", tail
    )
    err = capsys.readouterr().err
    assert code == 1, err
    assert "\x1b" not in err and "\x07" not in err, repr(err)
    assert "ok: [evil" in err and "Error processing keyword" in err and "before any host result" in err, err


def test_ansibles_last_lines_come_from_the_end_of_its_output(tmp_path: Path) -> None:
    """A run's output holds every task's text for every host; its last eight lines were found by reading it
    whole. They come from its last 64 KiB: an output whose last line is longer gives that line's end alone
    (reading it whole gave the short lines before it too), a two-byte character cut at the edge read as a
    replacement."""
    from generator.commands.configure import TAIL_BYTES, _stdout_tail

    out = tmp_path / "stdout"
    head = "".join(f"TASK [{i}]\n" for i in range(20))
    out.write_text(head + "é" * TAIL_BYTES + "\n", encoding="utf-8")  # 2 bytes a character: 128 KiB
    # the last 64 KiB: one byte of an é, then 32,767 whole ones and the line break
    assert _stdout_tail(out) == "\ufffd" + "é" * ((TAIL_BYTES - 2) // 2)
    short = tmp_path / "short"
    short.write_text(head + "\n\n".join(f"line {i}" for i in range(12)) + "\n\n")
    assert _stdout_tail(short).splitlines() == [f"line {i}" for i in range(4, 12)]
    assert _stdout_tail(tmp_path / "absent") == ""


def test_host_results_are_read_from_events_one_at_a_time(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """ansible-runner yields its events one file at a time, each with the task's whole result; the run
    gathered them all into a list first. ansible-runner's run is replaced by its result's shape (stats,
    an event stream, rc, status, artifact_dir) so that the stream can count the events still held."""
    import argparse
    import types
    import weakref

    import ansible_runner

    from generator.commands.configure import RunInputs, _run_playbook

    class Event(dict):  # a dict that a weak reference can follow, held in a set by identity
        __hash__ = object.__hash__

    alive: weakref.WeakSet[Event] = weakref.WeakSet()
    most = 0

    def events():
        nonlocal most
        for i in range(2_000):
            ev = Event(event="runner_on_ok", event_data={"host": f"h{i % 3}", "res": {"stdout": "x" * 1000}})
            alive.add(ev)
            most = max(most, len(alive))
            yield ev
        yield Event(
            event="runner_on_failed", event_data={"host": "h1", "task": "Install", "res": {"msg": "no"}}
        )

    (tmp_path / "stdout").write_text("PLAY RECAP\n")
    runner = types.SimpleNamespace(
        stats={"ok": {"h0": 2, "h1": 1, "h2": 3}, "failures": {"h1": 1}},
        events=events(),
        rc=2,
        status="failed",
        config=types.SimpleNamespace(artifact_dir=str(tmp_path)),
    )
    monkeypatch.setattr(ansible_runner, "run", lambda **_: runner)
    args = argparse.Namespace(check=False, diff=False, limit=None, tags=None, skip_tags=None, verbose=False)
    inputs = RunInputs(tmp_path, tmp_path / "site.yml", tmp_path / "inventory.yml", {}, str(tmp_path))
    outcome = _run_playbook(args, inputs, tmp_path)
    assert most <= 2, f"{most} events held at once"
    assert outcome.results["h1"].failures == [{"task": "Install", "message": "no"}]
    assert [outcome.results[h].ok for h in ("h0", "h1", "h2")] == [2, 1, 3]
