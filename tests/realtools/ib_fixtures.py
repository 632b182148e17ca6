"""Shared pieces of the real-tool tests: ibsim simulators that are always killed, cached plans.

Not a conftest.py: a second conftest module would shadow tests/conftest.py for `from conftest import`.
Each test module wraps ``simulators`` in its own fixture (the finalizer that kills ibsim).
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

from ibsim_harness import Simulator

from generator.plan.model import Plan


def simulators(tmp_path: Path) -> Iterator[Callable[..., Simulator]]:
    """Yields ``start(netfile_text, name)``; every simulator started through it is stopped afterwards."""
    started: list[Simulator] = []

    def start(netfile: str, name: str = "fabric") -> Simulator:
        work = tmp_path / f"{name}-{len(started)}"
        work.mkdir()
        path = work / f"{name}.net"
        path.write_text(netfile)
        sim = Simulator(path, work)
        started.append(sim)
        return sim.start()

    try:
        yield start
    finally:
        for sim in started:
            sim.stop()


@functools.cache
def plan_of(path: str) -> Plan:
    """The plan of a blueprint, built once per test session."""
    from generator.pipeline import load_and_resolve
    from generator.plan.build import build_plan

    return build_plan(load_and_resolve(path)[1])


def run_cli(*args: str) -> tuple[int, str, str]:
    """`blueprint ARGS` in-process → (exit code, stdout, stderr) (see tests/verify/vfy_plans.py for why
    this does not come from conftest)."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from generator.cli import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def stop_process(proc: subprocess.Popen[bytes]) -> None:
    """Stop a daemon started in its own session (OpenSM, ibsim): SIGTERM to its group, SIGKILL if it is still
    there after 15 s; bounded either way."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
