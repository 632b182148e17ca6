"""Shared pieces of the rehearse tests: builds made once, the command run as a user runs it, and what a
rehearsal may have left behind (namespaces, processes, directories carrying its pid)."""

from __future__ import annotations

import atexit
import functools
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from real_tools import needs

from generator.rehearse import tools

REPO = Path(__file__).resolve().parents[2]
SMALL_ROCE = REPO / "tests" / "realtools" / "fixtures" / "roce-ft2-rail.yaml"  # 4 leaves, 4 spines


def need_tools(which: dict[str, str]) -> None:
    missing = [f"{t} ({p})" for t, p in tools.missing(which)] + ([] if tools.is_root() else ["root"])
    needs(missing, "apt-get install frr ibsim-utils opensm infiniband-diags iproute2; run as root")


def generate(blueprint: Path, out: Path) -> Path:
    proc = subprocess.run(
        [sys.executable, "-m", "generator.cli", "generate", str(blueprint), "-o", str(out), "-q"],
        capture_output=True, text=True, timeout=300, check=False, cwd=REPO / "tests",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out


def start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "generator.cli", "rehearse", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO / "tests",
    )  # fmt: skip


@functools.cache
def small_build() -> Path:
    """The small RoCE fixture generated once per test session and removed when the session's
    interpreter exits (each test that edits it works on a copy)."""
    top = Path(tempfile.mkdtemp(prefix="cb-rehearse-test-"))
    atexit.register(shutil.rmtree, top, ignore_errors=True)
    return generate(SMALL_ROCE, top / "build")


def rehearse(*args: str, timeout_s: float = 600) -> tuple[int, dict[str, Any], str]:
    """`blueprint rehearse ARGS --format json` in a child; (exit code, report, stderr); checks it left
    nothing behind."""
    proc = start(*args, "--format", "json")
    out, err = finish(proc, timeout_s)
    assert leftovers(proc.pid) == [], leftovers(proc.pid)
    return proc.returncode, (json.loads(out) if out.strip() else {}), err


def finish(proc: subprocess.Popen[str], timeout_s: float) -> tuple[str, str]:
    """The rehearsal's (stdout, stderr) once it ends; past ``timeout_s`` it is stopped as a user would stop it
    (SIGTERM: it removes its namespaces and daemons), then killed, so a slow test leaves nothing running
    into the next ones, and the test fails saying so."""
    try:
        return proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.terminate()
        try:
            proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
        raise AssertionError(f"the rehearsal ran past {timeout_s:g} s and was stopped") from None


def leftovers(pid: int) -> list[str]:
    """Namespaces, processes and FRR pathspaces of the rehearsal with this pid that still exist."""
    tag = f"cbr{pid}-"
    found = [f"namespace {ln.split()[0]}" for ln in _netns() if ln.startswith(tag)]
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if tag in cmd or f"cb-rehearse-{pid}-" in cmd:
            found.append(f"process {proc.name}: {cmd[:120]}")
    found += [f"pathspace {p}" for p in Path("/var/run/frr").glob(f"{tag}*")]
    return found


def _netns() -> list[str]:
    return subprocess.run(
        ["ip", "netns", "list"], capture_output=True, text=True, check=False
    ).stdout.splitlines()


def failed(report: dict[str, Any]) -> dict[str, list[str]]:
    """check name -> reasons, for every failed check of every fabric."""
    return {c["check"]: c["reasons"] for f in report["fabrics"] for c in f["checks"] if not c["ok"]}
