"""Everything a rehearsal starts is removed: on a normal exit, an exception, Ctrl-C/SIGTERM, and when a
child is killed (SIGKILL included).

* ``Reaper`` records each namespace, process and directory as it is made and ``release()`` removes them
  in reverse: process groups (SIGTERM, then SIGKILL), whatever still runs inside a namespace
  (``ip netns pids``), the namespaces, the directories, then its ``finally`` callbacks (kernel limits).
* ``signals_raise()`` turns SIGINT/SIGTERM/SIGHUP into an ``Interrupted`` exception for the duration of a
  rehearsal, so the ``finally`` that calls ``release()`` runs (Python's default SIGTERM kills without it).
* Children get ``PR_SET_PDEATHSIG`` = SIGKILL (prctl(2)): if the rehearsal itself is SIGKILLed, the kernel
  kills its root-owned children (ibsim, OpenSM). Daemons that change credentials lose that setting
  (prctl(2): "cleared ... when the credentials change"), so every namespace, directory and FRR pathspace
  carries the rehearsal's pid, and ``sweep_stale()`` at the next start removes those of dead rehearsals.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType

PREFIX = "cbr"  # namespaces cbr<pid>-<n>, FRR pathspaces /var/run/frr/cbr<pid>-<n>
WORK_PREFIX = "cb-rehearse-"  # work directories <tmp>/cb-rehearse-<pid>-XXXX


FRR_RUN = Path("/var/run/frr")  # zebra -N <name> puts its zserv socket in /var/run/frr/<name>/
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
PID_MAX = 4_194_304  # PID_MAX_LIMIT on 64-bit Linux (proc(5), /proc/sys/kernel/pid_max: "2^22")


class Interrupted(BaseException):
    """SIGINT/SIGTERM/SIGHUP arrived during a rehearsal."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum


def run(argv: list[str], timeout_s: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)


def must(argv: list[str], timeout_s: float = 30) -> str:
    proc = run(argv, timeout_s)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr.strip()[-600:]}")
    return proc.stdout


def _die_with_parent() -> None:
    """preexec_fn: the kernel sends SIGKILL to the child when this process dies."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


HELD_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # what stops a rehearsal (signals_raise)
# the signals signals_raise's handler took while release() ran, raised once it is done (None: not running);
# not the thread's signal mask, which a process with other threads (an xdist worker) gets its signals past
_pending: list[int] | None = None


class Reaper:
    """What one rehearsal made, removed by ``release()`` (idempotent, never raises)."""

    def __init__(self) -> None:
        self.tag = f"{PREFIX}{os.getpid()}"
        self.procs: dict[str, subprocess.Popen[bytes]] = {}  # label -> process (its own group)
        self.namespaces: list[str] = []
        self.paths: list[Path] = []
        self.finally_: list[Callable[[], None]] = []
        self._n = 0

    def namespace(self) -> str:
        name = f"{self.tag}-{self._n}"
        self._n += 1
        must(["ip", "netns", "add", name])
        self.namespaces.append(name)
        return name

    def directory(self, path: Path) -> Path:
        self.paths.append(path)
        return path

    def spawn(self, label: str, argv: list[str], **kw: object) -> subprocess.Popen[bytes]:
        """A child in its own session (so its group can be killed) that dies with this process."""
        proc = subprocess.Popen(  # type: ignore[call-overload]
            argv, start_new_session=True, preexec_fn=_die_with_parent, stdin=subprocess.DEVNULL, **kw
        )
        self.procs[label] = proc
        return proc

    def dead(self) -> list[str]:
        """Children that exited while they should run: 'label (exit N | signal NAME)'."""
        out = []
        for label, proc in self.procs.items():
            code = proc.poll()
            if code is not None:
                how = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit {code}"
                out.append(f"{label} ({how})")
        return out

    def stop(self, label: str) -> None:
        proc = self.procs.pop(label, None)
        if proc is not None:
            _terminate([proc])

    def release(self) -> None:
        """Everything removed, with SIGINT, SIGTERM and SIGHUP held until it is done: one arriving meanwhile
        (a second Ctrl-C) is raised after, so it cannot leave namespaces and daemons half removed."""
        with _signals_held():
            _terminate(list(self.procs.values()))
            self.procs.clear()
            for ns in reversed(self.namespaces):
                delete_namespace(ns)
            self.namespaces.clear()
            for path in reversed(self.paths):
                shutil.rmtree(path, ignore_errors=True)
            self.paths.clear()
            while self.finally_:
                with contextlib.suppress(Exception):
                    self.finally_.pop()()


def _terminate(procs: list[subprocess.Popen[bytes]], grace_s: float = 5.0) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for proc in procs:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, sig)
        deadline = time.monotonic() + grace_s
        while any(p.poll() is None for p in procs) and time.monotonic() < deadline:
            time.sleep(0.05)
    for proc in procs:  # reap what a group kill left (the group leader is the child itself)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=1)


def delete_namespace(ns: str) -> None:
    """Kill whatever still runs in the namespace (daemons that forked away), then delete it."""
    with contextlib.suppress(subprocess.SubprocessError, OSError):
        pids = run(["ip", "netns", "pids", ns]).stdout.split()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid), signal.SIGKILL)
        run(["ip", "netns", "delete", ns])
    shutil.rmtree(FRR_RUN / ns, ignore_errors=True)


def alive(pid: int) -> bool:
    """Whether a process with this pid exists (a pid no kernel gives, from a name or a file, is dead)."""
    if not 0 < pid <= PID_MAX:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale(tmp: Path, state: Path | None = None) -> list[str]:
    """Namespaces, pathspaces and work directories left by rehearsals that were SIGKILLed (in ``tmp``), and
    the kernel limits they raised (their state in ``state``, none given: not looked at)."""
    removed: list[str] = []
    stale = re.compile(rf"^{PREFIX}(\d+)-\d+$")
    listing = run(["ip", "netns", "list"]).stdout if shutil.which("ip") else ""
    for line in listing.splitlines():
        name = line.split()[0] if line.split() else ""
        m = stale.match(name)
        if m and int(m.group(1)) != os.getpid() and not alive(int(m.group(1))):
            delete_namespace(name)
            removed.append(f"namespace {name}")
    if state is not None:
        from generator.rehearse.limits import sweep

        removed += [f"raised kernel limit {key} (put back)" for key in sweep(state)]
    for root, pattern in ((FRR_RUN, rf"^{PREFIX}(\d+)-\d+$"), (tmp, rf"^{WORK_PREFIX}(\d+)-")):
        for path in root.glob("*") if root.is_dir() else []:
            m = re.match(pattern, path.name)
            if m and int(m.group(1)) != os.getpid() and not alive(int(m.group(1))):
                shutil.rmtree(path, ignore_errors=True)
                removed.append(str(path))
    return removed


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """signals_raise's signals, taken inside the block, raised as Interrupted when it ends."""
    global _pending
    outer, _pending = _pending, []
    try:
        yield
    finally:
        held, _pending = _pending, outer
    if held:
        raise Interrupted(held[0])


@contextlib.contextmanager
def signals_raise() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP raise ``Interrupted`` inside the block (the previous handlers after)."""

    def handler(signum: int, frame: FrameType | None) -> None:
        if _pending is not None:  # release() is removing what the rehearsal made: after that
            _pending.append(signum)
            return
        raise Interrupted(signum)

    old = {s: signal.signal(s, handler) for s in HELD_SIGNALS}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
