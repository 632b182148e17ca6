"""Run Debian's FRR (zebra + bgpd) in one network namespace per switch, wired with veth pairs as cabled.

Each switch gets a namespace ``cb<id>-<n>``; every switch-to-switch cable of the plan becomes a veth pair
whose two ends carry the interface names of the generated configuration (``swp5`` / ``swp3s1``, each in
its own namespace, so names may repeat). zebra and bgpd start from the generated ``frr.conf`` with their
own pathspace (``-N``), pid files and vty socket directory, as root, without systemd or watchfrr.
Every daemon and namespace is removed by ``close()`` (by pid, then ``ip netns delete``), also on failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

FRR_DIR = Path("/usr/lib/frr")
FRR_RUN = Path("/var/run/frr")  # -N <name> puts zebra's zserv socket under /var/run/frr/<name>/
TOOLS = ("ip", "vtysh")


def missing_tools() -> list[str]:
    missing = [t for t in TOOLS if shutil.which(t) is None]
    missing += [d for d in ("zebra", "bgpd") if not (FRR_DIR / d).exists()]
    if os.geteuid() != 0:
        missing.append("root (ip netns)")
    return missing


def _run(argv: list[str], timeout_s: float = 20) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)


def _must(argv: list[str], timeout_s: float = 20) -> str:
    proc = _run(argv, timeout_s)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr.strip()[-1000:]}")
    return proc.stdout


@dataclass
class FrrSwitch:
    name: str  # plan name
    ns: str  # namespace (and FRR pathspace)
    conf: Path
    rundir: Path
    pids: dict[str, int] = field(default_factory=dict)  # daemon -> pid

    def vtysh(self, command: str, timeout_s: float = 15) -> str:
        return _must(["vtysh", "--vty_socket", str(self.rundir), "-c", command], timeout_s)

    def routes(self) -> dict[str, list[dict[str, object]]]:
        return json.loads(self.vtysh("show ip route json"))


class FrrFabric:
    """Namespaces + veths + FRR for a set of switches; use as a context manager."""

    def __init__(self) -> None:
        # user frr must reach its files: pytest's tmp dirs are 0700, so a 0755 dir of our own
        self.workdir = Path(tempfile.mkdtemp(prefix="cb-frr-"))
        self.workdir.chmod(0o755)
        self.tag = f"cb{uuid.uuid4().hex[:6]}"
        self.switches: dict[str, FrrSwitch] = {}
        self._namespaces: list[str] = []
        self._pathspaces: list[Path] = []

    def add_switch(self, name: str, frr_conf: str) -> FrrSwitch:
        ns = f"{self.tag}-{len(self.switches)}"
        _must(["ip", "netns", "add", ns])
        self._namespaces.append(ns)
        _must(["ip", "-n", ns, "link", "set", "lo", "up"])
        rundir = self.workdir / ns
        rundir.mkdir(parents=True)
        conf = rundir / "frr.conf"
        conf.write_text(frr_conf)
        # the daemons drop to user frr (Debian's build requires the frrvty group for the vty socket):
        # their pid files, vty sockets, logs and the pathspace's zserv socket dir must be theirs
        pathspace = FRR_RUN / ns
        pathspace.mkdir(parents=True, exist_ok=True)
        self._pathspaces.append(pathspace)
        for path in (rundir, pathspace):
            shutil.chown(path, "frr", "frr")
        sw = FrrSwitch(name, ns, conf, rundir)
        self.switches[name] = sw
        return sw

    def cable(self, a: str, a_if: str, b: str, b_if: str) -> None:
        """A veth pair between two switches' namespaces, named as in the configuration."""
        sa, sb = self.switches[a], self.switches[b]
        tmp_a, tmp_b = f"v{uuid.uuid4().hex[:10]}", f"v{uuid.uuid4().hex[:10]}"
        _must(["ip", "link", "add", tmp_a, "type", "veth", "peer", "name", tmp_b])
        for tmp, sw, ifname in ((tmp_a, sa, a_if), (tmp_b, sb, b_if)):
            _must(["ip", "link", "set", tmp, "netns", sw.ns])
            _must(["ip", "-n", sw.ns, "link", "set", tmp, "name", ifname])
            _must(["ip", "-n", sw.ns, "link", "set", ifname, "up"])

    def start(self, sw: FrrSwitch) -> None:
        for daemon in ("zebra", "bgpd"):
            pid_file = sw.rundir / f"{daemon}.pid"
            argv = [
                "ip", "netns", "exec", sw.ns, str(FRR_DIR / daemon), "-d",
                "-N", sw.ns, "-f", str(sw.conf), "-i", str(pid_file),
                "--vty_socket", str(sw.rundir), "-u", "frr", "-g", "frr", "-P", "0",
                "--log", f"file:{sw.rundir / daemon}.log",
            ]  # fmt: skip
            _must(argv, timeout_s=30)
            sw.pids[daemon] = self._wait_pid(pid_file)

    @staticmethod
    def _wait_pid(pid_file: Path, timeout_s: float = 20) -> int:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with contextlib.suppress(FileNotFoundError, ValueError):
                return int(pid_file.read_text().strip())
            time.sleep(0.05)
        raise RuntimeError(f"{pid_file} never appeared")

    def stop(self, name: str) -> None:
        """Stop one switch's daemons (by pid) and take its links down, like a failed switch."""
        sw = self.switches[name]
        self._kill(sw)
        out = _must(["ip", "-n", sw.ns, "-o", "link", "show"])
        for line in out.splitlines():
            ifname = line.split(":")[1].strip().split("@")[0]
            if ifname != "lo":
                _run(["ip", "-n", sw.ns, "link", "set", ifname, "down"])

    @staticmethod
    def _kill(sw: FrrSwitch) -> None:
        for pid in sw.pids.values():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 5
        for pid in sw.pids.values():
            while time.monotonic() < deadline:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.05)
            else:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        sw.pids.clear()

    def close(self) -> None:
        for sw in self.switches.values():
            self._kill(sw)
        for ns in self._namespaces:
            # a daemon whose start raised before its pid was recorded still runs there: `ip netns delete`
            # does not stop it
            listed = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True, check=False)
            for pid in listed.stdout.split():
                with contextlib.suppress(ProcessLookupError, ValueError):
                    os.kill(int(pid), signal.SIGKILL)
            _run(["ip", "netns", "delete", ns])
        self._namespaces.clear()
        for path in self._pathspaces:
            shutil.rmtree(path, ignore_errors=True)
        self._pathspaces.clear()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> FrrFabric:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
