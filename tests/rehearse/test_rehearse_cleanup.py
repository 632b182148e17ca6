"""Nothing a rehearsal starts outlives it: a SIGKILLed FRR daemon fails the rehearsal (exit 1, named) and
everything is removed; Ctrl-C (SIGINT) and SIGTERM remove everything too. Refusals need no tools."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest
from rehearse_fixtures import finish, leftovers, need_tools, small_build, start

from generator.rehearse import tools

pytestmark = [pytest.mark.realtools]


@pytest.fixture
def small() -> Path:
    need_tools(tools.ETHERNET_TOOLS)
    return small_build()


def _wait_for_daemon(pid: int, name: str, timeout_s: float = 60) -> int:
    """Pid of a running ``name`` (bgpd/zebra) of the rehearsal ``pid``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for proc in Path("/proc").glob("[0-9]*"):
            try:
                cmd = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if cmd and cmd[0].endswith(name.encode()) and f"cbr{pid}-".encode() in b" ".join(cmd):
                return int(proc.name)
        time.sleep(0.2)
    raise AssertionError(f"no {name} of rehearsal {pid} appeared")


def test_a_sigkilled_daemon_fails_the_rehearsal_and_nothing_is_left(small: Path) -> None:
    proc = start(str(small))
    victim = _wait_for_daemon(proc.pid, "bgpd")  # killed while the others start or after: said the same way
    subprocess.run(["kill", "-KILL", str(victim)], check=True)
    out, err = finish(proc, 300)
    assert proc.returncode == 1, err[-2000:]
    assert "stopped during the rehearsal" in out and "signal SIGKILL" in out
    assert leftovers(proc.pid) == []


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_rehearsal_removes_everything(small: Path, sig: signal.Signals) -> None:
    proc = start(str(small))
    _wait_for_daemon(proc.pid, "bgpd")
    proc.send_signal(sig)
    _, err = finish(proc, 120)
    assert proc.returncode == 128 + sig, err[-2000:]
    assert "every namespace and process it started was removed" in err
    assert leftovers(proc.pid) == []
