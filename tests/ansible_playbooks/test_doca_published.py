"""The doca_ofed role asks NVIDIA's repository whether the pinned OFED release exists for the node OS
before installing (tasks/published.yml), by real ansible-playbook against a local HTTP server laid out
like the repository (``doca/<version>/<distro>/<arch>/``): a published release passes, an unpublished
one fails naming the release, the OS and the URL, and a dry run (--check) asks nothing."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest
from ansible_helpers import run_local_play

ROLES = Path(__file__).resolve().parents[2] / "playbooks" / "roles"
UBUNTU_22_04 = {
    "ansible_os_family": "Debian",
    "ansible_distribution": "Ubuntu",
    "ansible_distribution_version": "22.04",
    "ansible_distribution_major_version": "22",
    "ansible_architecture": "x86_64",
}


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[str]:
    """A local repository root publishing DOCA 2.9.1 for Ubuntu 22.04 x86_64 only."""
    root = tmp_path / "repo"
    (root / "doca" / "2.9.1" / "ubuntu22.04" / "x86_64").mkdir(parents=True)
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _run(tmp_path: Path, base: str, version: str, *flags: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    play = tmp_path / "published.yml"
    play.write_text(
        "- hosts: localhost\n  gather_facts: false\n  tasks:\n"
        "    - ansible.builtin.include_role: {name: doca_ofed, tasks_from: published}\n"
    )
    extra = {**UBUNTU_22_04, "doca_ofed_kind": "doca", "doca_ofed_version": version}
    # the role's own URL rule with this server as the repository root
    extra["doca_ofed_repo_url"] = f"{base}doca/{version}/ubuntu22.04/x86_64/"
    return run_local_play(
        play, extra, *flags, env={"ANSIBLE_ROLES_PATH": str(ROLES), "no_proxy": "127.0.0.1"}
    )


def _tasks(result: dict) -> dict[str, dict]:  # type: ignore[type-arg]
    """The role's tasks by name (the play's own include_role task left out)."""
    prefix = "doca_ofed : "
    return {
        t["task"]["name"].removeprefix(prefix): t["hosts"]["localhost"]
        for t in result["plays"][0]["tasks"]
        if t["task"]["name"].startswith(prefix)
    }


def test_a_published_release_passes(tmp_path: Path, repo: str) -> None:
    code, result = _run(tmp_path, repo, "2.9.1")
    tasks = _tasks(result)
    assert code == 0, json.dumps(result)[-3000:]
    assert (
        tasks["Ask NVIDIA's repository whether it publishes this OFED release for the node OS"]["status"]
        == 200
    )


def test_an_unpublished_release_fails_naming_the_pins(tmp_path: Path, repo: str) -> None:
    code, result = _run(tmp_path, repo, "2.9.9")
    refused = _tasks(result)["Refuse an OFED release NVIDIA does not publish for the node OS"]
    assert code == 2 and refused.get("failed"), json.dumps(result)[-3000:]
    message = refused["msg"]
    assert "doca 2.9.9 is not published for ubuntu22.04 x86_64" in message
    assert f"{repo}doca/2.9.9/ubuntu22.04/x86_64/ answered 404" in message
    assert "software.ofed.version" in message


def test_a_dry_run_asks_nothing(tmp_path: Path) -> None:
    # no server at all: a --check run must not depend on the network
    code, result = _run(tmp_path, "http://127.0.0.1:9/", "2.9.9", "--check")
    tasks = _tasks(result)
    assert code == 0 and len(tasks) == 2, json.dumps(result)[-3000:]
    assert all(t.get("skipped") for t in tasks.values())
