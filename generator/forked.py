"""Run part of an output in a forked child process, so a 100k-GPU build uses two cores.

Outputs are independent once the plan exists (and the cabling formats once the cable rows exist), and
pure Python (the GIL keeps threads from helping). A forked child inherits the plan for free
(copy-on-write) and writes its files into its own directories; the parent makes the other outputs
meanwhile. If the child fails for any reason, the parent makes its part itself, so errors surface in the
parent exactly as without the fork and the output is the same either way.

The child does nothing but compute and write files, and leaves with ``os._exit`` (no atexit handlers,
no flushing of stdio buffers inherited from the parent); it never touches the console, so a progress-bar
thread in the parent (whose locks the child inherits) cannot deadlock it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import warnings
from collections.abc import Callable

# Below this many cables the outputs take well under a second: not worth a fork.
FORK_MIN_CABLES = 20_000


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def can_fork() -> bool:
    return hasattr(os, "fork") and usable_cpus() > 1


# prctl(2): PR_SET_PDEATHSIG, the signal a child gets when its parent dies (Linux)
PR_SET_PDEATHSIG = 1


def _die_with(parent: int) -> None:
    """Have the kernel kill this child when ``parent`` dies. A parent killed with SIGKILL left its child
    writing into the staging folder and holding the output folder's lock (an inherited descriptor), so a
    rerun was refused until the child ended."""
    import ctypes
    import ctypes.util

    with contextlib.suppress(OSError, AttributeError):  # not Linux: the child ends with its work anyway
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


class Child:
    """``work()`` running in a forked child process, which dies with its parent."""

    def __init__(self, work: Callable[[], None]) -> None:
        parent = os.getpid()
        with warnings.catch_warnings():
            # Python 3.12+ warns that forking a multi-threaded process may deadlock the child; this child
            # takes no lock another thread could hold (see the module docstring).
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:  # the child
            code = 1
            try:
                _die_with(parent)
                work()
                code = 0
            except BaseException:  # whatever it was, the parent redoes the work and reports it itself
                code = 1
            finally:
                os._exit(code)
        self.pid = pid
        self._status: int | None = None

    def wait(self) -> bool:
        """Wait for the child; True when ``work()`` returned normally."""
        if self._status is None:
            _, status = os.waitpid(self.pid, 0)
            self._status = status
        return os.WIFEXITED(self._status) and os.WEXITSTATUS(self._status) == 0

    def cancel(self) -> None:
        """Stop the child (the parent failed, so its work is not wanted) and reap it."""
        if self._status is None:
            with contextlib.suppress(ProcessLookupError):  # already gone
                os.kill(self.pid, signal.SIGTERM)
            self.wait()
