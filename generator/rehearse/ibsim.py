"""ibsim (ibsim-utils) and its clients, children of the rehearsal.

Facts this relies on (linux-rdma/ibsim ibsim/sim_net.c, umad2sim; Debian's ibsim 0.10, OpenSM 3.3):
* ``ibsim -s -n FILE``: start the fabric at once, without the console (the console spins on EOF);
  ``-N/-S/-P`` raise its node/switch/port limits (defaults 2048/256/13312);
* a client attaches through the umad2sim ``LD_PRELOAD`` with ``SIM_HOST=<node id>`` (port 1 of that node
  must be cabled) and ``IBSIM_SOCKNAME`` (one per simulator, so rehearsals may run side by side);
* clients block when ibsim is gone, so each one runs with a timeout and ibsim's liveness is checked first.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

from generator.rehearse import tools
from generator.rehearse.cleanup import Reaper


def netfile_size(text: str) -> tuple[int, int, int]:
    """(nodes, switches, ports incl. switch port 0) declared by a net file."""
    nodes = switches = ports = 0
    for m in re.finditer(r"^(Switch|Ca|Hca|Rt)\s+(\d+)", text, re.M):
        nodes += 1
        switches += m.group(1) == "Switch"
        ports += int(m.group(2)) + (m.group(1) == "Switch")
    return nodes, switches, ports


class SimulationFailed(RuntimeError):
    """ibsim would not start or stopped, or a client of it did not finish in its time: a check the rehearsal
    reports as failed (exit 1), not a fault of cluster-blueprint."""


class Simulator:
    def __init__(self, reaper: Reaper, netfile: Path, workdir: Path) -> None:
        self.reaper = reaper
        self.netfile = netfile
        self.workdir = workdir
        self.sockname = f"{reaper.tag}{netfile.stem}"
        self.label = f"ibsim {netfile.name}"
        self.log = workdir / f"{netfile.stem}.ibsim.log"

    def start(self, ready_timeout_s: float = 300) -> float:
        nodes, switches, ports = netfile_size(self.netfile.read_text())
        argv = [
            tools.must("ibsim"), "-s", "-n", "-N", str(max(2048, nodes + 16)),
            "-S", str(max(256, switches + 16)), "-P", str(max(13312, ports + 64)), str(self.netfile),
        ]  # fmt: skip
        env = {**os.environ, "IBSIM_SOCKNAME": self.sockname}
        env.pop("LD_PRELOAD", None)
        t0 = time.monotonic()
        with open(self.log, "wb") as log:
            proc = self.reaper.spawn(self.label, argv, stdout=log, stderr=subprocess.STDOUT,
                                     cwd=self.workdir, env=env)  # fmt: skip
        while time.monotonic() - t0 < ready_timeout_s:
            if "Network simulator ready" in self.log.read_text(errors="replace"):
                return time.monotonic() - t0
            if proc.poll() is not None:
                raise SimulationFailed(f"ibsim exited ({proc.returncode}) on {self.netfile}: {self._tail()}")
            time.sleep(0.05)
        raise SimulationFailed(f"ibsim not ready after {ready_timeout_s:.0f} s: {self._tail()}")

    def _tail(self) -> str:
        return self.log.read_text(errors="replace")[-1500:]

    def stop(self) -> None:
        self.reaper.stop(self.label)

    def env(self, sim_host: str, state: Path) -> dict[str, str]:
        state.mkdir(parents=True, exist_ok=True)
        return {
            **os.environ,
            "LD_PRELOAD": tools.must("libumad2sim.so"),
            "SIM_HOST": sim_host,
            "IBSIM_SOCKNAME": self.sockname,
            "OSM_TMP_DIR": str(state),
            "OSM_CACHE_DIR": str(state),
        }

    def client(self, sim_host: str, argv: list[str], timeout_s: float) -> subprocess.CompletedProcess[str]:
        """A client run to completion; SimulationFailed when ibsim is gone or the client is not done after
        ``timeout_s`` (it is killed then)."""
        if self.reaper.procs.get(self.label) is None or self.reaper.dead():
            raise SimulationFailed(f"ibsim is not running: {self._tail()}")
        try:
            return subprocess.run(
                argv, env=self.env(sim_host, self.workdir / "state" / sim_host), cwd=self.workdir,
                capture_output=True, text=True, errors="replace", check=False, timeout=timeout_s,
                stdin=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            raise SimulationFailed(f"{Path(argv[0]).name} was not done within {timeout_s:g} s") from None


def ca_of(netfile: str, host: str) -> str | None:
    """Node id of ``host``'s first CA whose port 1 is cabled (its NodeDescription is '<host> <hca>')."""
    current = None
    for line in netfile.splitlines():
        m = re.match(r'^(?:Ca|Hca)\s+\d+\s+"([^"]+)"\s*#\s*"([^"]*)"', line)
        if m:
            current = m.group(1) if m.group(2).split(" ")[0] == host or not host else None
        elif current and line.startswith("[1]"):
            return current
        elif not line.startswith("["):
            current = None
    return None
