"""Run the InfiniBand simulator (ibsim), OpenSM and ibnetdiscover for tests.

Facts this relies on (linux-rdma/ibsim ibsim/sim_net.c and OpenSM 3.3 runs; learned the hard way):
* ``ibsim -s -n``: start the fabric at once, no console (without ``-n`` it spins a core on EOF);
* each simulator gets its own ``IBSIM_SOCKNAME`` so tests can run side by side;
* clients attach through the umad2sim ``LD_PRELOAD`` with ``SIM_HOST=<node id>`` (port 1 of that
  node must be cabled); ``ibsim-run`` is not used because it mangles an already-set LD_PRELOAD;
* clients block forever when ibsim is gone, so every call runs under ``timeout`` and checks that
  the simulator is alive first;
* OpenSM exits 0 even when the requested routing engine failed: read its log.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import shutil
import signal
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
from real_tools import missing_executables

TOOLS = ("ibsim", "opensm", "ibnetdiscover", "timeout")
SIM_SPEEDS = ("SDR", "DDR", "QDR", "FDR", "EDR", "HDR")  # what Debian's ibsim 0.10 models


def umad2sim() -> str | None:
    hits = sorted(glob.glob("/usr/lib/*/umad2sim/libumad2sim.so")) + sorted(
        glob.glob("/usr/lib*/umad2sim/libumad2sim.so")
    )
    return hits[0] if hits else None


def missing_tools() -> list[str]:
    missing = missing_executables(TOOLS)
    if umad2sim() is None:
        missing.append("libumad2sim.so (ibsim-utils)")
    return missing


_MISSING = missing_tools()
# every real-tool test module: pytestmark = [pytest.mark.realtools, REQUIRES_TOOLS]
# (skipped outside CI when a tool is missing, failed in CI: see tests/real_tools.py)
REQUIRES_TOOLS = pytest.mark.needs_tools(_MISSING, hint="apt-get install ibsim-utils opensm infiniband-diags")


def _tool(name: str) -> str:
    return shutil.which(name) or str(Path("/usr/sbin", name))


def netfile_size(text: str) -> tuple[int, int, int]:
    """(nodes, switches, ports incl. switch port 0) declared by a net file."""
    nodes = switches = ports = 0
    for line in text.splitlines():
        m = re.match(r"^(Switch|Ca|Hca|Rt)\s+(\d+)", line)
        if m:
            nodes += 1
            n = int(m.group(2))
            if m.group(1) == "Switch":
                switches += 1
                n += 1
            ports += n
    return nodes, switches, ports


@dataclass
class OsmRun:
    log: str
    returncode: int
    seconds: float

    @property
    def ftree_ok(self) -> bool:
        return "ftree tables configured on all switches" in self.log

    def errors(self) -> list[str]:
        return re.findall(r"ERR (AB[0-9A-F]{2})", self.log)


class Simulator:
    """One ibsim process on one net file, in its own working directory and socket name."""

    def __init__(self, netfile: Path, workdir: Path, *, lifetime_s: int = 900) -> None:
        self.netfile = netfile
        self.workdir = workdir
        self.sockname = f"cbt{os.getpid()}{uuid.uuid4().hex[:8]}"
        self.lifetime_s = lifetime_s
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = workdir / "ibsim.log"
        self.startup_s = 0.0

    def start(self, ready_timeout_s: float = 120.0) -> Simulator:
        if _MISSING:
            raise RuntimeError(
                f"InfiniBand tools not installed: {', '.join(_MISSING)} "
                "(apt-get install ibsim-utils opensm infiniband-diags)"
            )
        nodes, switches, ports = netfile_size(self.netfile.read_text())
        # raise ibsim's limits above the defaults (2048 nodes, 256 switches, 13312 ports) as needed
        args = [
            _tool("timeout"),
            "-s",
            "TERM",
            "-k",
            "5",
            str(self.lifetime_s),
            _tool("ibsim"),
            "-s",
            "-n",
            "-N",
            str(max(2048, nodes + 16)),
            "-S",
            str(max(256, switches + 16)),
            "-P",
            str(max(13312, ports + 64)),
            str(self.netfile),
        ]
        env = {**os.environ, "IBSIM_SOCKNAME": self.sockname}
        env.pop("LD_PRELOAD", None)
        t0 = time.monotonic()
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                args,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.workdir,
                env=env,
                start_new_session=True,
            )
        while time.monotonic() - t0 < ready_timeout_s:
            text = self.log_path.read_text(errors="replace")
            if "Network simulator ready" in text:
                self.startup_s = time.monotonic() - t0
                return self
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"ibsim exited with {self.proc.returncode} while parsing {self.netfile}:\n{text[-3000:]}"
                )
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(
            f"ibsim not ready after {ready_timeout_s} s:\n{self.log_path.read_text(errors='replace')[-3000:]}"
        )

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        """Kill the process group we started (timeout + ibsim); idempotent."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self.proc = None

    def client_env(self, sim_host: str) -> dict[str, str]:
        so = umad2sim()
        assert so is not None
        return {
            **os.environ,
            "LD_PRELOAD": so,
            "SIM_HOST": sim_host,
            "IBSIM_SOCKNAME": self.sockname,
            "OSM_TMP_DIR": str(self.workdir),
            "OSM_CACHE_DIR": str(self.workdir),
        }

    def _run(self, sim_host: str, argv: list[str], timeout_s: int) -> subprocess.CompletedProcess[str]:
        if not self.alive():
            raise RuntimeError(f"ibsim is not running:\n{self.log_path.read_text(errors='replace')[-2000:]}")
        return subprocess.run(
            [_tool("timeout"), "-k", "5", str(timeout_s), *argv],
            env=self.client_env(sim_host),
            cwd=self.workdir,
            capture_output=True,
            text=True,
            errors="replace",
            check=False,
            stdin=subprocess.DEVNULL,
        )

    def opensm(self, sim_host: str, engine: str = "ftree", timeout_s: int = 300) -> OsmRun:
        log = self.workdir / f"opensm-{engine.replace(',', '_')}.log"
        log.unlink(missing_ok=True)
        t0 = time.monotonic()
        proc = self._run(sim_host, [_tool("opensm"), "-o", "-R", engine, "-f", str(log)], timeout_s)
        seconds = time.monotonic() - t0
        if proc.returncode == 124:
            raise RuntimeError(f"opensm timed out after {timeout_s} s (is port 1 of {sim_host} cabled?)")
        text = log.read_text(errors="replace") if log.exists() else proc.stdout + proc.stderr
        return OsmRun(text, proc.returncode, seconds)

    def ibnetdiscover(self, sim_host: str, *args: str, timeout_s: int = 300) -> str:
        proc = self._run(sim_host, [_tool("ibnetdiscover"), *args], timeout_s)
        if proc.returncode != 0:
            raise RuntimeError(f"ibnetdiscover failed ({proc.returncode}): {proc.stderr[-2000:]}")
        return proc.stdout

    def __enter__(self) -> Simulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def first_ca(netfile_text: str) -> str:
    """Node id of the first CA record whose port 1 is cabled (SIM_HOST for clients)."""
    current = None
    for line in netfile_text.splitlines():
        m = re.match(r'^(?:Ca|Hca)\s+\d+\s+"([^"]+)"', line)
        if m:
            current = m.group(1)
            continue
        if current and line.startswith("[1]"):
            return current
        if not line.startswith("["):
            current = None if not line.strip() else current
    raise ValueError("no CA with port 1 cabled in the net file")
