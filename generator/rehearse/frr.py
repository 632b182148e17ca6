"""FRR (zebra + bgpd) in one network namespace per switch, wired with veth pairs as cabled.

Each switch gets a namespace (``cleanup.Reaper.namespace``); every wire becomes a veth pair created
directly in the two namespaces with the configured interface names (``ip link add NAME netns A type veth
peer name PEER netns B``, ip-link(8)), so names may repeat across switches. zebra and bgpd run in the
foreground as children of the rehearsal (killed by process group; a SIGKILLed one is seen by ``poll``),
each switch with its own FRR pathspace (``-N``), pid files and vty socket directory, dropping to user
frr as Debian's build expects (its vty sockets belong to group frrvty).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.foreign import ForeignInputError
from generator.rehearse import names, tools
from generator.rehearse.cleanup import FRR_RUN, Reaper, must, run
from generator.rehearse.expect import Wire

DAEMONS = ("zebra", "bgpd")
READY_S = 60.0  # every bgpd's vty socket open, at least
READY_S_PER_SWITCH = 0.5  # and this much a switch beyond 120 (sample.MAX_SWITCHES allows 400)


@dataclass
class FrrSwitch:
    name: str
    ns: str
    rundir: Path

    def vtysh(self, command: str, timeout_s: float = 15) -> str:
        return must([tools.must("vtysh"), "--vty_socket", str(self.rundir), "-c", command], timeout_s)

    def json(self, command: str) -> Any:
        """vtysh's JSON answer, or None while the daemon is not answering yet."""
        with contextlib.suppress(RuntimeError, subprocess.SubprocessError, ValueError):
            return json.loads(self.vtysh(command))
        return None


class FrrNetwork:
    def __init__(self, reaper: Reaper, workdir: Path) -> None:
        self.reaper = reaper
        self.workdir = workdir
        self.switches: dict[str, FrrSwitch] = {}

    def add_switch(self, name: str, frr_conf: str) -> FrrSwitch:
        ns = self.reaper.namespace()
        # forward IPv4 as a switch does; no reverse-path filter: ECMP brings replies back over another port
        must(["ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1",
              "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0"])  # fmt: skip
        rundir = self.workdir / ns
        rundir.mkdir(parents=True)
        (rundir / "frr.conf").write_text(frr_conf)
        pathspace = self.reaper.directory(FRR_RUN / ns)
        pathspace.mkdir(parents=True, exist_ok=True)
        for path in (rundir, pathspace):  # the daemons run as user frr: their files must be theirs
            shutil.chown(path, "frr", "frr")
        sw = FrrSwitch(name, ns, rundir)
        self.switches[name] = sw
        return sw

    def wire(self, wires: list[Wire]) -> None:
        """Every veth pair in one ``ip -batch`` (thousands of ``ip`` runs cost seconds), then each
        namespace's links up in one batch per namespace."""
        lines = [
            f"link add name {w.a_if} netns {self.switches[w.a].ns} type veth "
            f"peer name {w.b_if} netns {self.switches[w.b].ns}"
            for w in wires
        ]
        batch([], lines)
        ups: dict[str, list[str]] = {sw.ns: ["link set lo up"] for sw in self.switches.values()}
        for w in wires:
            ups[self.switches[w.a].ns].append(f"link set {w.a_if} up")
            ups[self.switches[w.b].ns].append(f"link set {w.b_if} up")
        for ns, cmds in ups.items():
            batch(["-n", ns], cmds)

    def host_ports(self, dummies: list[tuple[str, str]], veths: list[tuple[str, str, str, str]]) -> None:
        """A switch's host-facing ports: ``dummies`` (switch, interface) exist with carrier, ``veths``
        (switch, interface, host namespace, host interface) reach a host namespace (hosts.py)."""
        ups: dict[str, list[str]] = {}
        lines = []
        # a veth whose peer stays in the switch's namespace: carrier without a far end (the dummy driver
        # is not in every kernel); the peers are named cbp<n>, a name no switch configuration uses
        for n, (name, ifname) in enumerate(dummies):
            ns = self.switches[name].ns
            lines.append(f"link add name {ifname} netns {ns} type veth peer name cbp{n} netns {ns}")
            ups.setdefault(ns, []).append(f"link set cbp{n} up")
        for name, ifname, host_ns, host_if in veths:
            ns = self.switches[name].ns
            lines.append(f"link add name {ifname} netns {ns} type veth peer name {host_if} netns {host_ns}")
            ups.setdefault(ns, [])
        batch([], lines)
        for name, ifname in dummies:
            ups[self.switches[name].ns].append(f"link set {ifname} up")
        for name, ifname, _, _ in veths:
            ups[self.switches[name].ns].append(f"link set {ifname} up")
        for ns, cmds in ups.items():
            batch(["-n", ns], cmds)

    def start(self) -> None:
        """zebra everywhere first (bgpd connects to it), then bgpd."""
        for daemon in DAEMONS:
            for sw in self.switches.values():
                argv = [
                    "ip", "netns", "exec", sw.ns, tools.must(daemon), "-N", sw.ns,
                    "-f", str(sw.rundir / "frr.conf"), "-i", str(sw.rundir / f"{daemon}.pid"),
                    "--vty_socket", str(sw.rundir), "-u", "frr", "-g", "frr", "-P", "0",
                    "--log", f"file:{sw.rundir / daemon}.log",
                ]  # fmt: skip
                log = open(sw.rundir / f"{daemon}.out", "wb")  # noqa: SIM115 - the child keeps it
                self.reaper.spawn(f"{daemon} of {sw.name}", argv, stdout=log, stderr=subprocess.STDOUT)
                log.close()

    def fail(self, name: str) -> None:
        """A switch dies: its daemons stop and its ports lose carrier, so its peers see the links go."""
        sw = self.switches[name]
        for daemon in DAEMONS:
            self.reaper.stop(f"{daemon} of {name}")
        out = run(["ip", "-n", sw.ns, "-o", "link", "show"]).stdout
        names = [ln.split(":")[1].strip().split("@")[0] for ln in out.splitlines() if ":" in ln]
        batch(["-n", sw.ns], [f"link set {n} down" for n in names if n != "lo"])

    def wait_ready(self) -> list[str]:
        """Switches whose bgpd does not answer on its vty socket in time: 60 s, or half a second a switch
        where there are more (two daemons a switch start on this machine's cores: up to 800 of them)."""
        deadline = time.monotonic() + max(READY_S, READY_S_PER_SWITCH * len(self.switches))
        pending = set(self.switches)
        while pending and time.monotonic() < deadline and not self.reaper.dead():
            pending = {n for n in pending if not (self.switches[n].rundir / "bgpd.vty").exists()}
            time.sleep(0.2)
        return sorted(pending)


def batch(prefix: list[str], commands: list[str]) -> None:
    """``ip [prefix] -batch -`` of ``commands``; raises with ip's error when one fails."""
    if not commands:
        return
    lines = "\n".join(names.batch_lines(commands)) + "\n"
    proc = subprocess.run(
        ["ip", *prefix, "-batch", "-"], input=lines, capture_output=True, text=True, timeout=600, check=False
    )
    if proc.returncode != 0:  # names and shapes were checked where read: what is left is a build that
        # contradicts itself (an address and its gateway, a port's two roles); refused, not an internal error
        raise ForeignInputError(
            f"ip {' '.join(prefix)} -batch".replace("  ", " "),
            f"{proc.stderr.strip()[-600:]}: the build's cables or addresses contradict each other (edited?); "
            "regenerate it",
        )
