"""The generated OpenSM pair as the site runs it: the master as a daemon, the partitions it set on each
HCA port, the standby entering STANDBY and taking over when the master dies.

* partitions: ``smpquery pkeys -G <port GUID> <port>`` (infiniband-diags; ``-G`` asks the SA for the LID,
  so the master must be running) per HCA port, compared with the plan's intent (``partitions.py``); at
  most ``MAX_PORTS`` ports are queried (evenly spread, every pool's first port included), the report says
  how many. The master's own port is not compared: OpenSM always makes it a full member of Default
  (opensm(8): "OpenSM's port will always have full membership in default partition").
* standby and takeover: the second member's ``opensm.conf`` (lower ``sm_priority``) started on its host
  enters STANDBY; the master is SIGKILLed (a crash, not a handover) and the standby must log "Entering
  MASTER state" and "SUBNET UP" within ``sminfo_polling_timeout`` x (``polling_retry_number`` + 2) + 30 s.
  A standby's poll timer fires every ``sminfo_polling_timeout`` ms; each tick sends one SMInfo request
  (``retry_number`` + 1, reset to 0 by the master's answer) and a tick that finds ``retry_number >
  polling_retry_number`` goes to DISCOVERING (linux-rdma/opensm opensm/osm_sm_state_mgr.c,
  ``osm_sm_state_mgr_polling_callback``, commit 0189deaac8025874038b62be52fcfee0da80b675). So the master
  is declared dead on the (``polling_retry_number`` + 2)-th tick after its death at the latest (the first
  tick falls up to one interval after it); the new master's heavy sweep is allowed 30 s, or twice what the
  one-shot OpenSM took on the same fabric and machine if that is more (a 4,096-HCA fabric sweeps in ~20 s).
* both daemons flush their log per line (``force_log_flush TRUE``, opensm.conf) so it can be followed.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from generator.rehearse import partitions, tools
from generator.rehearse.ibsim import Simulator

MAX_PORTS = 64
LABEL_PREFIX = "opensm "  # the reaper's label of an OpenSM daemon: this prefix and its host
TAKEOVER_MARGIN_S = 30.0  # the new master's heavy sweep, at least
SUBNET_UP_S = 120.0  # the master daemon's first sweep, at least
STANDBY_S = 60.0  # the standby's discovery of the master, at least
# the longest takeover the rehearsal waits for (the generated files give 10 s x (4 + 2) = 60 s): a policy,
# and a file asking more (4e9 retries: 1,268 years) is a finding rather than a wait
MAX_TAKEOVER_S = 600


@dataclass(frozen=True)
class Waits:
    """How long the daemons' steps may take on this fabric and machine: each a floor, or a multiple of what
    the one-shot OpenSM (a whole discovery and heavy sweep) took, whichever is more."""

    subnet_up_s: float
    standby_s: float
    sweep_margin_s: float


def waits(sweep_s: float) -> Waits:
    return Waits(
        max(SUBNET_UP_S, 3 * sweep_s), max(STANDBY_S, 3 * sweep_s), max(TAKEOVER_MARGIN_S, 2 * sweep_s)
    )


@dataclass
class Sm:
    host: str
    conf: Path  # relocated
    log: Path
    label: str


def conf_int(conf: Path, key: str, default: int) -> int:
    for line in conf.read_text(errors="replace").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == key and parts[1].isdigit():
            return int(parts[1])
    return default


def start(sim: Simulator, sm: Sm, sim_host: str) -> subprocess.Popen[bytes]:
    sm.log.unlink(missing_ok=True)
    env = sim.env(sim_host, sim.workdir / "state" / f"daemon-{sm.host}")
    with open(sim.workdir / f"{sm.label}.out", "wb") as out:
        return sim.reaper.spawn(sm.label, [tools.must("opensm"), "-F", str(sm.conf)], env=env,
                                cwd=sim.workdir, stdout=out, stderr=subprocess.STDOUT)  # fmt: skip


def wait_log(
    sim: Simulator, sm: Sm, needles: tuple[str, ...], timeout_s: float, after: int = 0
) -> float | None:
    """Seconds until every needle is in the log (past byte ``after``), or None (time up, or it died)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        text = sm.log.read_text(errors="replace")[after:] if sm.log.exists() else ""
        if all(n in text for n in needles):
            return time.monotonic() - t0
        proc = sim.reaper.procs.get(sm.label)
        if proc is None or proc.poll() is not None:
            return None
        time.sleep(0.2)
    return None


def pkeys(sim: Simulator, sim_host: str, guid: int, port: int) -> set[int] | None:
    argv = [tools.must("smpquery"), "pkeys", "-G", f"0x{guid:016x}", str(port)]
    proc = sim.client(sim_host, argv, 30)
    if proc.returncode != 0:
        return None
    # "0: 0xffff 0x800a 0x0000 ..." rows; 0x0000 is an empty slot
    return {int(v, 16) for v in re.findall(r"\b0x[0-9a-f]{4}\b", proc.stdout)} - {0}


def chosen(ports: dict[int, str], pool_of: dict[int, str]) -> list[int]:
    if len(ports) <= MAX_PORTS:
        return sorted(ports)
    order = sorted(ports, key=lambda g: ports[g])
    pick = {order[i * len(order) // MAX_PORTS] for i in range(MAX_PORTS)}
    firsts = {next(g for g in order if pool_of.get(g) == p) for p in set(pool_of.values())}
    return sorted(pick | firsts)


def port_tables(
    sim: Simulator, sim_host: str, ports: dict[int, tuple[str, int]], pool_of: dict[int, str], text: str
) -> tuple[list[str], str]:
    """(problems, detail) of the P_Key tables OpenSM set against the plan's partitions."""
    parts = partitions.parse(text)
    names = {g: d for g, (d, _) in ports.items()}
    asked = chosen(names, pool_of)
    got: dict[int, set[int]] = {}
    problems = [problem for part in parts for problem in part.problems]
    for g in asked:
        table = pkeys(sim, sim_host, g, ports[g][1])
        if table is None:
            problems.append(f"{names[g]} (0x{g:016x}): no LID from the SA (smpquery pkeys)")
        else:
            got[g] = table
    want = partitions.intended(parts, {g: names[g] for g in got}, pool_of)
    problems += partitions.table_problems(want, got, names, parts)
    shown = f"{len(asked)} of {len(ports)}" if len(asked) < len(ports) else f"every one of the {len(ports)}"
    return problems, (f"P_Key tables of {shown} HCA ports (smpquery pkeys) hold the plan's "
                      f"{len(partitions.names(parts))} partitions, as planned")  # fmt: skip


def takeover(
    sim: Simulator, master: tuple[Sm, str], standby: tuple[Sm, str], allowed: Waits
) -> tuple[list[str], str, float]:
    """(problems, detail, seconds from the master's death to the standby's SUBNET UP)."""
    (m, _), (s, s_host) = master, standby
    bound = (
        conf_int(s.conf, "sminfo_polling_timeout", 10000)
        / 1000
        * (conf_int(s.conf, "polling_retry_number", 4) + 2)
        + allowed.sweep_margin_s
    )
    if bound > MAX_TAKEOVER_S:  # before any daemon starts
        why = (
            f"{s.host}'s opensm.conf makes a takeover take up to {bound:,.0f} s (sminfo_polling_timeout x "
            f"(polling_retry_number + 2)): past {MAX_TAKEOVER_S} s the rehearsal does not wait for one, "
            "and a subnet that long without a master SM is no standby"
        )
        return [why], "", 0.0
    start(sim, s, s_host)
    if wait_log(sim, s, ("Entering STANDBY state",), allowed.standby_s) is None:
        return [f"{s.host}'s OpenSM never entered STANDBY (its log: {_tail(s)})"], "", 0.0
    size = s.log.stat().st_size
    _kill(sim, m.label)
    seconds = wait_log(sim, s, ("Entering MASTER state", "SUBNET UP"), bound, size)
    detail = f"{s.host} STANDBY, MASTER after {m.host}'s OpenSM was killed (bound {bound:.0f} s)"
    if seconds is None:
        return [f"{s.host}'s OpenSM did not take over within {bound:.0f} s of the master's death"], detail, 0
    return [], detail, seconds


def _kill(sim: Simulator, label: str) -> None:
    proc = sim.reaper.procs.pop(label, None)
    if proc is not None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def _tail(sm: Sm) -> str:
    return sm.log.read_text(errors="replace")[-300:] if sm.log.exists() else "none"
