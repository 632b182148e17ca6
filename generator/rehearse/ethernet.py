"""Rehearse a routed Ethernet/RoCE fabric: FRR from the generated configuration, wired as cabled.

Checks (each with the switches, interfaces and cables it is about when it fails):

* configuration: every BGP port has a cable in ``cabling/cables.csv`` reaching the peer its description
  names; ASN and loopback agree with ``switches/asn-plan.csv``;
* bgp sessions: every configured session whose cable exists is Established;
* reachability: every leaf (every router where there are no leaves) has a selected, installed BGP route
  to every other switch's announced networks;
* ecmp: the next-hop interfaces of each of those routes are exactly the plan's equal-cost first hops
  (``expect.first_hops`` over the cable graph).

Then the hosts on their leaves (``hosts.py``: host subnets routed, the per-rail ping matrix) and the same
switch checks and ping matrix after each ``--fail`` device, cumulatively (the first stays down when the second
fails; the host ports behind a failed leaf are expected down, every other pair must still ping).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from generator.rehearse.build_input import Build, Cable
from generator.rehearse.cleanup import WORK_PREFIX, Reaper
from generator.rehearse.expect import Wire, adjacency, first_hops
from generator.rehearse.frr import FrrNetwork
from generator.rehearse.hosts import check_hosts, check_hosts_after_fail, place_hosts
from generator.rehearse.nvue import SwitchConfig
from generator.rehearse.verdict import FabricVerdict

POLL_S = 1.0


def _ifname(cfg: SwitchConfig, port: str, cage: str, cage_port: str) -> str | None:
    """The configured interface a cable end lands on: swp<cage>s<n> on a split cage, else swp<port>."""
    candidates = [f"swp{port}"]
    if cage.isdigit() and cage_port.isdigit():
        candidates.insert(0, f"swp{cage}s{int(cage_port) - 1}")
    return next((c for c in candidates if c in cfg.interfaces), None)


def wiring(cables: list[Cable], configs: dict[str, SwitchConfig]) -> tuple[list[Wire], list[str]]:
    """Veth pairs for the switch-to-switch cables, and the cables that land on unconfigured ports."""
    wires, problems = [], []
    for c in cables:
        if c.a not in configs or c.b not in configs:
            continue
        a_if = _ifname(configs[c.a], c.a_port, c.a_cage, c.a_cage_port)
        b_if = _ifname(configs[c.b], c.b_port, c.b_cage, c.b_cage_port)
        if a_if is None or b_if is None:
            end, port = (c.a, c.a_port) if a_if is None else (c.b, c.b_port)
            problems.append(
                f"cable {c.id} lands on {end} port {port}, which its configuration does not configure"
            )
            continue
        wires.append(Wire(c.id, c.a, a_if, c.b, b_if))
    return wires, problems


def configuration_problems(build: Build, configs: dict[str, SwitchConfig], wires: list[Wire]) -> list[str]:
    """Configured sessions without their cable, cables to another peer than described, ASN plan drift
    (sessions to switches outside a sample are not expected)."""
    cabled = {(w.a, w.a_if): (w.cable, w.b, w.b_if) for w in wires}
    cabled |= {(w.b, w.b_if): (w.cable, w.a, w.a_if) for w in wires}
    out = []
    for cfg in configs.values():
        for ifname in cfg.neighbors:
            planned = cfg.planned_peer(ifname)
            found = cabled.get((cfg.name, ifname))
            if planned and planned[1] not in configs:
                continue
            if found is None:
                want = f" (configured for {planned[0]} to {planned[1]} {planned[2]})" if planned else ""
                out.append(
                    f"{cfg.name} {ifname}: BGP session configured{want}, but no cable in cabling/cables.csv"
                )
            elif planned and (planned[1], planned[2]) != found[1:]:
                out.append(f"{cfg.name} {ifname}: configured for {planned[1]} {planned[2]}, cabled to "
                           f"{found[1]} {found[2]} ({found[0]})")  # fmt: skip
        out += _asn_plan_problems(build, cfg)
    return out


def _asn_plan_problems(build: Build, cfg: SwitchConfig) -> list[str]:
    entry = build.asn_plan.get(cfg.name)
    if entry is None:
        return [f"{cfg.name}: not in switches/asn-plan.csv"] if build.asn_plan else []
    out = []
    if entry.asn != cfg.asn:
        out.append(
            f"{cfg.name}: {Path(cfg.source).name} has ASN {cfg.asn}, switches/asn-plan.csv {entry.asn}"
        )
    if f"{entry.loopback}/32" not in cfg.loopbacks:
        out.append(
            f"{cfg.name}: loopback {entry.loopback}/32 of switches/asn-plan.csv is not configured on lo"
        )
    return out


def sources(build: Build, configs: dict[str, SwitchConfig]) -> list[str]:
    """Leaves, by the ASN plan's role (names otherwise); every switch when the fabric has no leaves."""
    leaves = [n for n in configs if (build.asn_plan[n].role if n in build.asn_plan else "") == "leaf"]
    return sorted(leaves or [n for n in configs if "-leaf-" in n] or configs)


class Expectation:
    def __init__(self, configs: dict[str, SwitchConfig], wires: list[Wire], srcs: list[str], down: set[str]):
        self.configs, self.down = configs, down
        alive = [n for n in configs if n not in down]
        self.hops = first_hops(adjacency(wires), [s for s in srcs if s not in down], alive, down)
        self.sessions = {(w.a, w.a_if): w for w in wires if w.a not in down and w.b not in down} | {
            (w.b, w.b_if): w for w in wires if w.a not in down and w.b not in down
        }


def _sessions(net: FrrNetwork, exp: Expectation) -> list[str]:
    out = []
    states: dict[str, dict[str, Any]] = {}
    for name in sorted({k[0] for k in exp.sessions}):
        doc = net.switches[name].json("show bgp summary json") or {}
        states[name] = (doc.get("ipv4Unicast") or {}).get("peers") or {}
    for (name, ifname), w in sorted(exp.sessions.items()):
        state = (states[name].get(ifname) or {}).get("state", "not configured")
        if state != "Established":
            peer = w.b if w.a == name else w.a
            out.append(f"{name} {ifname} ({w.cable} to {peer}): {state}")
    return out


# what a missing route says when the plan has no path either: nothing more can converge for that pair
PARTITIONED = "; the plan has no path either (partitioned)"


def _routes(net: FrrNetwork, exp: Expectation) -> tuple[list[str], list[str]]:
    """(reachability problems, ecmp problems)."""
    unreachable, ecmp = [], []
    for src, dests in sorted(exp.hops.items()):
        table = net.switches[src].json("show ip route json") or {}
        for dst, want in sorted(dests.items()):
            for prefix in exp.configs[dst].networks:
                got = _bgp_hops(table.get(prefix) or [])
                if got is None:
                    why = PARTITIONED if want is None else ""
                    unreachable.append(f"{src} -> {dst} {prefix}: no installed BGP route{why}")
                elif want is not None and got != want:
                    miss, extra = sorted(want - got), sorted(got - want)
                    ecmp.append(f"{src} -> {dst} {prefix}: {len(got)} next hops, the plan {len(want)}"
                                + (f"; missing via {', '.join(miss)}" if miss else "")
                                + (f"; unplanned via {', '.join(extra)}" if extra else ""))  # fmt: skip
    return unreachable, ecmp


def _bgp_hops(entries: list[dict[str, Any]]) -> frozenset[str] | None:
    for e in entries:
        if e.get("protocol") == "bgp" and e.get("selected") and e.get("installed"):
            hops = e.get("nexthops") or []
            return frozenset(str(h.get("interfaceName")) for h in hops if h.get("active"))
    return None


def observe(net: FrrNetwork, exp: Expectation) -> dict[str, list[str]]:
    dead = net.reaper.dead()
    if dead:
        return {"daemons": [f"{d} stopped during the rehearsal" for d in dead]}
    unreachable, ecmp = _routes(net, exp)
    return {"bgp sessions": _sessions(net, exp), "reachability": unreachable, "ecmp": ecmp}


def converge(net: FrrNetwork, exp: Expectation, timeout_s: float) -> tuple[dict[str, list[str]], float]:
    """Poll until every check holds (or a daemon died, or time is up, or all that is left is pairs the plan
    itself has no path for, which no more waiting changes): (problems by check, seconds)."""
    t0 = time.monotonic()
    while True:
        found = observe(net, exp)
        if (
            not any(found.values())
            or "daemons" in found
            or _settled(found)
            or time.monotonic() - t0 > timeout_s
        ):
            return found, time.monotonic() - t0
        time.sleep(POLL_S)


def _settled(found: dict[str, list[str]]) -> bool:
    """Every session up and every planned path as planned; only the plan's own partitions lack a route."""
    rest = [problem for check, problems in found.items() if check != "reachability" for problem in problems]
    return not rest and all(r.endswith(PARTITIONED) for r in found.get("reachability", []))


def _record(verdict: FabricVerdict, step: str, found: dict[str, list[str]], seconds: float, n: int) -> None:
    suffix = f" ({step})" if step != "all up" else ""
    verdict.converge_s[step] = seconds
    details = {
        "daemons": "an FRR daemon died",
        "bgp sessions": "every configured session with a cable Established",
        "reachability": f"{n} source switches reach every other switch's networks",
        "ecmp": "next hops equal the plan's equal-cost first hops",
    }
    for name, reasons in found.items():
        verdict.add(name + suffix, reasons, details[name])


def rehearse_ethernet(
    build: Build,
    fabric: str,
    reaper: Reaper,
    fail: list[str],
    timeout_s: float,
    verdict: FabricVerdict,
    keep: set[str] | None = None,
) -> None:
    """Run the fabric (only the switches in ``keep`` when sampled) and record its checks in ``verdict``."""
    configs = {n: c for n, c in build.switches[fabric].items() if keep is None or n in keep}
    wires, problems = wiring(build.cables_of(fabric), configs)
    problems += configuration_problems(build, configs, wires)
    verdict.add("configuration", problems, "BGP ports cabled as described; ASNs and loopbacks as planned")
    srcs = sources(build, configs)
    work = reaper.directory(Path(tempfile.mkdtemp(prefix=f"{WORK_PREFIX}{reaper.tag[3:]}-")))
    work.chmod(0o755)  # zebra/bgpd run as user frr and read their files here
    net = FrrNetwork(reaper, work)
    for name, cfg in sorted(configs.items()):
        net.add_switch(name, cfg.frr_conf)
    net.wire(wires)
    hosts = place_hosts(build, fabric, configs, net, verdict, fail)
    net.start()
    slow = net.wait_ready()
    if slow or reaper.dead():
        gone = [f"{d} stopped during the rehearsal" for d in reaper.dead()]  # as observe() says it later on
        verdict.add("daemons", [f"bgpd of {n} never opened its vty socket" for n in slow] + gone,
                    "zebra and bgpd started on every switch")  # fmt: skip
        return
    down: set[str] = set()
    found, seconds = converge(net, Expectation(configs, wires, srcs, down), timeout_s)
    _record(verdict, "all up", found, seconds, len(srcs))
    if "daemons" not in found:
        check_hosts(build, fabric, configs, verdict, hosts)
    for device in fail:
        if "daemons" in found:
            return
        net.fail(device)
        down.add(device)
        found, seconds = converge(net, Expectation(configs, wires, srcs, down), timeout_s)
        _record(verdict, f"after --fail {device}", found, seconds, len([s for s in srcs if s not in down]))
        if "daemons" not in found:
            check_hosts_after_fail(verdict, hosts, device, down)
