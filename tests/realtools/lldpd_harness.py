"""Debian's lldpd in one network namespace per device, wired with veth pairs as a cabling plan says.

Each device of ``cabling/cables.csv`` gets a namespace; every cable becomes a veth pair whose ends carry
the interface names the plan gives (``a_netdev`` / ``b_netdev``: ``swp5`` on a switch, the declared netdev
on a host), created directly in the two namespaces (``ip link add NAME netns A type veth peer name PEER
netns B``, ip-link(8)). lldpd runs in the foreground (``-d``) with its own control socket (``-u``) and a
configuration file (``-O``) that sets the system name to the plan's device name, as a site's hosts and
switches carry their own hostnames, and a 1 s transmit interval so a test does not wait 30 s. Every
daemon is killed by process group and every namespace deleted by ``close()``, also on failure.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

TOOLS = ("ip", "lldpd", "lldpcli")


def missing_tools() -> list[str]:
    missing = [t for t in TOOLS if shutil.which(t) is None and not Path("/usr/sbin", t).exists()]
    if os.geteuid() != 0:
        missing.append("root (ip netns)")
    return missing


def _must(argv: list[str], timeout_s: float = 20) -> str:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr.strip()[-1000:]}")
    return proc.stdout


def _tool(name: str) -> str:
    return shutil.which(name) or str(Path("/usr/sbin", name))


@dataclass(frozen=True)
class Wire:
    """One cable as wired: device and interface at each end."""

    a: str
    a_if: str
    b: str
    b_if: str


def plan_wires(
    cables_csv: Path, fabric: str, host_netdev: dict[tuple[str, str], str] | None = None
) -> list[Wire]:
    """The veth pairs of a fabric's cables: the plan's netdev at each end, or ``host_netdev[(device,
    port)]`` where the plan names none (a host port whose netdev the blueprint does not declare)."""
    host_netdev = host_netdev or {}
    wires = []
    with cables_csv.open(newline="") as f:
        for row in csv.DictReader(f):
            if row["fabric"] != fabric:
                continue
            a_if = row["a_netdev"] or host_netdev[(row["a_device"], row["a_port"])]
            b_if = row["b_netdev"] or host_netdev[(row["b_device"], row["b_port"])]
            wires.append(Wire(row["a_device"], a_if, row["b_device"], b_if))
    return wires


class LldpFabric:
    """Namespaces + veths + lldpd for a set of devices; use as a context manager."""

    def __init__(self) -> None:
        # short: a Unix socket path is at most 107 bytes
        self.workdir = Path(tempfile.mkdtemp(prefix="cb-lldp-"))
        self.workdir.chmod(0o755)  # Debian installs lldpcli setuid _lldpd: it connects as that user
        self.tag = f"cl{uuid.uuid4().hex[:6]}"
        self.ns: dict[str, str] = {}  # device -> namespace
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def __enter__(self) -> LldpFabric:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add_device(self, name: str) -> str:
        ns = f"{self.tag}-{len(self.ns)}"
        _must(["ip", "netns", "add", ns])
        self.ns[name] = ns
        _must(["ip", "-n", ns, "link", "set", "lo", "up"])
        return ns

    def wire(self, wires: list[Wire]) -> None:
        for w in wires:
            for dev in (w.a, w.b):
                if dev not in self.ns:
                    self.add_device(dev)
            a_ns, b_ns = self.ns[w.a], self.ns[w.b]
            _must(["ip", "link", "add", w.a_if, "netns", a_ns, "type", "veth", "peer", "name", w.b_if,
                   "netns", b_ns])  # fmt: skip
            _must(["ip", "-n", a_ns, "link", "set", w.a_if, "up"])
            _must(["ip", "-n", b_ns, "link", "set", w.b_if, "up"])

    def start(self, config: dict[str, list[str]]) -> None:
        """One lldpd a device: a device of ``config`` runs its own lines (the lldp_agent role's name the host),
        any other the plan name. The namespaces share this machine's host name, which lldpd advertises unless
        told otherwise, so a device's own lines that name nothing show as an unidentified chassis."""
        for i, (name, ns) in enumerate(sorted(self.ns.items())):
            conf = self.workdir / f"{i}.conf"
            own = config.get(name)
            lines = [
                *(own if own is not None else [f"configure system hostname {name}"]),
                "configure lldp tx-interval 1",
            ]
            conf.write_text("\n".join(lines) + "\n")
            log = (self.workdir / f"{i}.log").open("wb")
            self.procs[name] = subprocess.Popen(
                [
                    "ip",
                    "netns",
                    "exec",
                    ns,
                    _tool("lldpd"),
                    "-d",
                    "-u",
                    str(self._sock(name)),
                    "-O",
                    str(conf),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            log.close()

    def _sock(self, name: str) -> Path:
        return self.workdir / f"{sorted(self.ns).index(name)}.sock"

    def neighbours(self, name: str, fmt: str = "json") -> str:
        """``lldpcli show neighbors -f FMT`` as run on the device."""
        return _must(["ip", "netns", "exec", self.ns[name], _tool("lldpcli"), "-u", str(self._sock(name)), "-f",
                      fmt, "show", "neighbors"], timeout_s=10)  # fmt: skip

    def wait_for(self, expected: dict[str, int], timeout_s: float = 60) -> dict[str, int]:
        """Poll until every device sees ``expected[device]`` neighbours; the counts last seen."""
        deadline = time.monotonic() + timeout_s
        seen: dict[str, int] = {}
        while True:
            for name, want in expected.items():
                if seen.get(name) == want:
                    continue
                with contextlib.suppress(RuntimeError, subprocess.SubprocessError):
                    seen[name] = _count(json.loads(self.neighbours(name, "json0")))
            dead = [n for n, p in self.procs.items() if p.poll() is not None]
            if dead:
                raise RuntimeError(f"lldpd stopped on {dead}: {self._logs(dead)}")
            if all(seen.get(n) == w for n, w in expected.items()) or time.monotonic() > deadline:
                return seen
            time.sleep(0.5)

    def _logs(self, names: list[str]) -> str:
        return " | ".join(
            (self.workdir / f"{sorted(self.ns).index(n)}.log").read_text()[-400:] for n in names
        )

    def close(self) -> None:
        for proc in self.procs.values():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
        for ns in self.ns.values():
            subprocess.run(["ip", "netns", "delete", ns], capture_output=True, timeout=20, check=False)
        shutil.rmtree(self.workdir, ignore_errors=True)


def _count(doc: object) -> int:
    """Neighbours in a ``-f json0`` answer (json0 keeps one shape whatever the count: lldpcli(8))."""
    if not isinstance(doc, dict):
        return 0
    total = 0
    for block in doc.get("lldp", []):
        for itf in block.get("interface", []) if isinstance(block, dict) else []:
            total += 1 if isinstance(itf, dict) and itf.get("chassis") else 0
    return total
