"""Hosts on their leaves: the generated host fabric addresses placed in namespaces and pinged across leaves.

Where the build has host fabric addresses (``cb_fabric_addresses`` of ``ansible/inventory.yml``: interface
-> ``address/prefix``, written by ``generate`` for on-prem targets when the platform's port map names the
interfaces), each host port is paired with its cable of ``cabling/cables.csv`` (the host end's
``*_netdev`` is the interface; the switch end's port and cage give the leaf interface as the switch
configuration names it) and its rail (the ``rail`` column). On a routed fabric each host port is a /31 with
its leaf port: the gateway is the host's ``cb_fabric_gateways`` entry and the networks it reaches through it
are its pool's ``host_fabric_interfaces[].routes`` (``ansible/group_vars/<pool group>.yml``), all from the
one address plan (generator/deploy/addresses.py) that also writes the leaves' addresses.

Before FRR starts (``place_hosts``), every addressed host-facing port of a leaf exists in the leaf's
namespace: a veth to a namespace of its own for a sampled host port (the host interface with the generated
address and routes), a dummy interface for the others, so that each leaf announces every host network it
is configured with. Switch namespaces forward IPv4 as a switch does (``net.ipv4.ip_forward``; reverse-path
filtering off, since ECMP returns packets over another uplink). After the fabric converged
(``check_hosts``):

* ``host subnets routed``: every host address is in a network its leaf announces;
* ``host reachability``: per rail, every sampled host port pings every sampled host port behind another
  leaf of the rail (both directions), through the leaves and spines as cabled. A rail without such a pair
  is a note; no pair on any rail fails the check (0 pings would prove nothing);
* ``host reachability (after --fail X)``: after each ``--fail`` (``check_hosts_after_fail``) the same
  matrix without the pairs that have an end behind a failed leaf; those host ports (every one behind the
  leaf, not only the sampled) are named as expected down, every other pair must still reply.

Larger builds are sampled: the first ``PORTS_PER_LEAF`` host ports (by host name) of the first
``LEAVES_PER_RAIL`` leaves (by name, leaves outside scalable units first: a storage fabric's storage-server
leaves) of each rail, which crosses leaves on every rail; a sampled leaf that ``--fail`` takes down brings
in the rail's next leaf that stays up.
"""

from __future__ import annotations

import ipaddress
import subprocess
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.foreign import ForeignInputError, read_foreign_text
from generator.rehearse import tools
from generator.rehearse.build_input import MAX_FILE, Build
from generator.rehearse.frr import FrrNetwork, batch
from generator.rehearse.nvue import SwitchConfig, load_yaml
from generator.rehearse.sample import in_unit
from generator.rehearse.verdict import FabricVerdict

LEAVES_PER_RAIL = 2  # the sample: two leaves of each rail are enough for a cross-leaf pair
PORTS_PER_LEAF = 2  # host ports per sampled leaf: 2 x 2 cross-leaf pairs per rail and direction
PING_WAIT_S = 3
PING_TRIES = 2  # a first packet may wait for neighbour discovery on a busy machine
PING_PACKAGE = "iputils-ping"  # Debian's package of /usr/bin/ping (packages.debian.org file list)


@dataclass(frozen=True)
class HostPort:
    host: str
    interface: str
    address: str  # address/prefix as generated
    rail: str
    leaf: str
    leaf_if: str
    cable: str


@dataclass(frozen=True)
class HostRouting:
    gateway: str | None  # cb_fabric_gateways (routed fabrics)
    routes: tuple[str, ...]  # host_fabric_interfaces[].routes of the host's pool


@dataclass(frozen=True)
class PlacedHost:
    port: HostPort
    ns: str
    routing: HostRouting


@dataclass(frozen=True)
class HostSample:
    placed: list[PlacedHost]  # the sampled host ports, in their namespaces
    ports: list[HostPort]  # every addressed host port on the rehearsed leaves: who a failed leaf takes down


def host_addresses(root: Path) -> dict[str, dict[str, str]]:
    """host -> interface -> address/prefix, from ``ansible/inventory.yml`` (empty when it has none)."""
    return {h: {i: v[0] for i, v in ifs.items()} for h, ifs in _inventory(root).items()}


def _inventory(root: Path) -> dict[str, dict[str, tuple[str, str | None, str]]]:
    """host -> interface -> (address/prefix, gateway or None, the host's group)."""
    path = root / "ansible" / "inventory.yml"
    if not path.is_file():
        return {}
    doc = load_yaml(read_foreign_text(path, MAX_FILE), str(path))
    out: dict[str, dict[str, tuple[str, str | None, str]]] = {}
    _collect(doc, "", out, str(path))
    return out


def _children(node: dict[str, Any], key: str) -> dict[str, Any]:
    value = node.get(key)
    return value if isinstance(value, dict) else {}


def _collect(
    node: Any, group: str, out: dict[str, dict[str, tuple[str, str | None, str]]], where: str
) -> None:
    if not isinstance(node, dict):
        return
    for host, hv in _children(node, "hosts").items():
        named = hv.get("cb_fabric_addresses") if isinstance(hv, dict) else None
        if isinstance(named, dict):
            gateways = hv.get("cb_fabric_gateways") if isinstance(hv.get("cb_fabric_gateways"), dict) else {}
            out[str(host)] = {
                str(k): (
                    _address(str(v), f"{where}: {host}.cb_fabric_addresses.{k}"),
                    _gateway(gateways.get(k), f"{where}: {host}.cb_fabric_gateways.{k}"),
                    group,
                )
                for k, v in named.items()
            }
    for name, child in _children(node, "children").items():
        _collect(child, str(name), out, where)
    if "all" in node:
        _collect(node["all"], group, out, where)


def _address(value: str, where: str) -> str:
    try:
        return str(ipaddress.ip_interface(value))
    except ValueError:
        raise ForeignInputError(where, f"{value!r} is not an address/prefix") from None


def _gateway(value: Any, where: str) -> str | None:
    if value is None:
        return None
    try:
        return str(ipaddress.ip_address(str(value)))
    except ValueError:
        raise ForeignInputError(where, f"{value!r} is not an address") from None


def _group_routes(root: Path, group: str) -> dict[str, tuple[str, ...]]:
    """interface -> routes of ``host_fabric_interfaces`` in ``ansible/group_vars/<group>.yml``."""
    path = root / "ansible" / "group_vars" / f"{group}.yml"
    if not group or not path.is_file():
        return {}
    text = read_foreign_text(path, MAX_FILE).replace("!unsafe ", "")  # Ansible's "never template" tag
    doc = load_yaml(text, str(path))
    out: dict[str, tuple[str, ...]] = {}
    for nic in (doc.get("host_fabric_interfaces") or []) if isinstance(doc, dict) else []:
        if isinstance(nic, dict) and isinstance(nic.get("routes"), list):
            where = f"{path}: host_fabric_interfaces {nic.get('interface')}"
            out[str(nic.get("interface"))] = tuple(
                str(ipaddress.ip_network(_net(r, where))) for r in nic["routes"]
            )
    return out


def _net(value: Any, where: str) -> str:
    try:
        return str(ipaddress.ip_network(str(value)))
    except ValueError:
        raise ForeignInputError(where, f"{value!r} is not a network") from None


def host_routing(root: Path) -> dict[tuple[str, str], HostRouting]:
    """(host, interface) -> its gateway and routes, as generated for the hosts."""
    inventory = _inventory(root)
    groups = {g for ifs in inventory.values() for _, _, g in ifs.values()}
    routes = {g: _group_routes(root, g) for g in groups}
    return {
        (host, ifname): HostRouting(gw, routes[group].get(ifname, ()))
        for host, ifs in inventory.items()
        for ifname, (_, gw, group) in ifs.items()
    }


def _leaf_if(cfg: SwitchConfig, port: str, cage: str, cage_port: str) -> str:
    if cage.isdigit() and cage_port.isdigit() and f"swp{cage}s{int(cage_port) - 1}" in cfg.interfaces:
        return f"swp{cage}s{int(cage_port) - 1}"
    return f"swp{port}"


def host_ports(
    build: Build, fabric: str, configs: dict[str, SwitchConfig], addrs: dict[str, dict[str, str]]
) -> list[HostPort]:
    """Every addressed host port of ``fabric`` cabled to a switch of ``configs``."""
    out = []
    for c in build.cables_of(fabric):
        for host, netdev, leaf, port, cage, cage_port in (
            (c.a, c.a_netdev, c.b, c.b_port, c.b_cage, c.b_cage_port),
            (c.b, c.b_netdev, c.a, c.a_port, c.a_cage, c.a_cage_port),
        ):
            address = addrs.get(host, {}).get(netdev)
            if address and leaf in configs:
                ifname = _leaf_if(configs[leaf], port, cage, cage_port)
                out.append(HostPort(host, netdev, address, c.rail, leaf, ifname, c.id))
    return out


def sampled(ports: list[HostPort], fail: Collection[str] = ()) -> tuple[list[HostPort], str]:
    """The first ``PORTS_PER_LEAF`` host ports of the first ``LEAVES_PER_RAIL`` leaves of each rail, and
    the note saying so ("" if that is all of them). A sampled leaf that ``--fail`` takes down brings in
    the rail's next leaf that stays up, so the rail keeps a cross-leaf pair after the failure where it
    has one."""
    leaves: dict[str, set[str]] = defaultdict(set)
    for p in ports:
        leaves[p.rail].add(p.leaf)
    # leaves outside scalable units first: on a storage fabric those hold the storage servers, so the
    # sampled pings cross from GPU nodes to storage whatever the storage pool is named
    first = {r: sorted(ls, key=lambda n: (in_unit(n), n)) for r, ls in leaves.items()}
    keep = {r: set(ls[:LEAVES_PER_RAIL]) for r, ls in first.items()}
    extra = {r: _live_stand_ins(ls, fail) for r, ls in first.items()}
    per_leaf: dict[str, list[HostPort]] = defaultdict(list)
    for p in sorted(ports, key=lambda p: (p.host, p.interface)):
        if p.leaf in keep[p.rail] | extra[p.rail] and len(per_leaf[p.leaf]) < PORTS_PER_LEAF:
            per_leaf[p.leaf].append(p)
    out = [p for p in ports if p in per_leaf[p.leaf]]
    if len(out) == len(ports):
        return out, ""
    more = sorted(n for ls in extra.values() for n in ls)
    return out, (f"hosts sampled: the first {PORTS_PER_LEAF} host ports of the first {LEAVES_PER_RAIL} "
                 f"leaves of each of {len(keep)} rails"
                 + (f", and of {', '.join(more)} (standing in for a sampled leaf --fail takes down)"
                    if more else "")
                 + f" ({len(out)} of {len(ports)} host ports)")  # fmt: skip


def _live_stand_ins(ordered: list[str], fail: Collection[str]) -> set[str]:
    """The rail's next leaves that stay up, one per sampled leaf that ``--fail`` takes down."""
    gone = sum(1 for n in ordered[:LEAVES_PER_RAIL] if n in fail)
    return set([n for n in ordered[LEAVES_PER_RAIL:] if n not in fail][:gone])


def routing_problems(ports: list[HostPort], configs: dict[str, SwitchConfig]) -> list[str]:
    """Host ports whose address no network of their leaf holds: the leaf cannot route them."""
    out = []
    for p in ports:
        addr = ipaddress.ip_interface(p.address).ip
        nets = configs[p.leaf].networks
        if not any(addr in ipaddress.ip_network(n, strict=False) for n in nets):
            out.append(f"{p.host} {p.interface} ({p.address}, rail {p.rail}) on {p.leaf} {p.leaf_if} "
                       f"({p.cable}): {p.leaf} announces only {', '.join(nets) or 'nothing'}, no network "
                       "holding the host's address: the generated leaf configuration does not route host "
                       "subnets")  # fmt: skip
    return out


def place_hosts(
    build: Build,
    fabric: str,
    configs: dict[str, SwitchConfig],
    net: FrrNetwork,
    verdict: FabricVerdict,
    fail: Collection[str] = (),
) -> HostSample:
    """Before FRR starts: the sampled host ports in namespaces on veths to their leaf ports, the leaves'
    other addressed ports as dummies. Notes why no host is placed when there is none."""
    addrs = host_addresses(build.root)
    every = host_ports(build, fabric, configs, addrs) if addrs else []
    ports, note = sampled(every, fail)
    if not addrs:
        verdict.notes.append("hosts: the build has no host fabric addresses (no cb_fabric_addresses in "
                             "ansible/inventory.yml), so no host is placed on its leaf")  # fmt: skip
    elif not ports:
        why = "cables.csv names no host interface with a cb_fabric_addresses entry"
        verdict.notes.append(f"hosts: no addressed host port is cabled to a switch of {fabric} ({why})")
    if note:
        verdict.notes.append(note)
    routing = host_routing(build.root) if ports else {}
    placed = [PlacedHost(p, net.reaper.namespace(), routing[(p.host, p.interface)]) for p in ports]
    taken = {(h.port.leaf, h.port.leaf_if) for h in placed}
    dummies = [
        (name, ifname)
        for name, cfg in configs.items()
        for ifname in cfg.addresses
        if (name, ifname) not in taken and ifname not in cfg.neighbors  # a BGP port is a veth already
    ]
    net.host_ports(dummies, [(h.port.leaf, h.port.leaf_if, h.ns, h.port.interface) for h in placed])
    for h in placed:
        batch(["-n", h.ns], _host_commands(h))
    return HostSample(placed, every)


def _host_commands(h: PlacedHost) -> list[str]:
    cmds = ["link set lo up", f"address add {h.port.address} dev {h.port.interface}"]
    cmds.append(f"link set {h.port.interface} up")
    if h.routing.gateway:
        cmds += [
            f"route replace {r} via {h.routing.gateway} dev {h.port.interface}" for r in h.routing.routes
        ]
    return cmds


def check_hosts(
    build: Build,
    fabric: str,
    configs: dict[str, SwitchConfig],
    verdict: FabricVerdict,
    sample: HostSample,
) -> None:
    """Record ``host subnets routed`` and ``host reachability`` with every device up (nothing when no host
    is placed)."""
    if not sample.placed:
        return
    ports = [h.port for h in sample.placed]
    rails = sorted({p.rail for p in ports})
    verdict.add("host subnets routed", routing_problems(ports, configs),
                f"{len(ports)} host ports on {len({p.leaf for p in ports})} leaves ({len(rails)} rails): "
                "each address is in a network its leaf announces")  # fmt: skip
    check_reachability(verdict, sample, set(), "")


def check_hosts_after_fail(verdict: FabricVerdict, sample: HostSample, device: str, down: set[str]) -> None:
    """``host reachability (after --fail DEVICE)``: every pair whose ends both stay up still pings; the host
    ports behind a failed leaf are named as expected down (nothing when no host is placed)."""
    if sample.placed:
        check_reachability(verdict, sample, down, f" (after --fail {device})")


@dataclass(frozen=True)
class PingPlan:
    pairs: list[tuple[PlacedHost, PlacedHost]]  # to ping: same rail, different leaves, both leaves up
    skipped: int  # pairs with an end behind a failed leaf: expected unreachable, not pinged
    lonely: list[str]  # per rail with sampled host ports but no pair to ping: why


def ping_plan(placed: list[PlacedHost], down: Collection[str]) -> PingPlan:
    """The cross-leaf pairs of each rail among the host ports whose leaf is up, and why a rail has none."""
    every = matrix(placed)
    pairs = [(a, b) for a, b in every if a.port.leaf not in down and b.port.leaf not in down]
    lonely = []
    for rail in sorted({h.port.rail for h in placed}):
        if any(a.port.rail == rail for a, _ in pairs):
            continue
        here = [h.port for h in placed if h.port.rail == rail]
        live = sorted({p.leaf for p in here if p.leaf not in down})
        dead = sorted({p.leaf for p in here if p.leaf in down})
        why = f"rail {rail or '(none)'}: {len(here)} sampled host ports, " + (
            f"the live ones all behind {live[0]}" if live else "none behind a leaf that is up"
        )
        why += (
            f" ({', '.join(dead)} failed)" if dead else " (the rehearsed switches have no other leaf on it)"
        )
        lonely.append(why + ": no cross-leaf pair to ping")
    return PingPlan(pairs, len(every) - len(pairs), lonely)


def expected_down(ports: list[HostPort], down: Collection[str]) -> list[str]:
    """Per failed leaf, every addressed host port behind it (host interface, cable), by host."""
    out = []
    for leaf in sorted({p.leaf for p in ports if p.leaf in down}):
        behind = sorted((p for p in ports if p.leaf == leaf), key=lambda p: (p.host, p.interface))
        out.append(f"{len(behind)} host ports behind failed {leaf}: "
                   + ", ".join(f"{p.host} {p.interface} ({p.cable})" for p in behind))  # fmt: skip
    return out


def check_reachability(verdict: FabricVerdict, sample: HostSample, down: set[str], suffix: str) -> None:
    """Ping the plan's pairs; a fabric with host ports where no pair can be formed fails (all up) or says
    that only failed leaves are to blame (after ``--fail``)."""
    name = "host reachability" + suffix
    plan = ping_plan(sample.placed, down)
    gone = expected_down(sample.ports, down)
    verdict.notes += [f"{name}: {why}" for why in plan.lonely]
    verdict.notes += [f"{name}: expected down: {g}" for g in gone]
    rails = len({a.port.rail for a, _ in plan.pairs})
    n_gone = sum(1 for p in sample.ports if p.leaf in down)
    spared = (f"; {n_gone} host ports behind failed leaves expected down "
              f"(named in the notes), {plan.skipped} sampled pairs with such an end not pinged"
              if gone else "")  # fmt: skip
    if not plan.pairs and not down:
        verdict.add(name, ["no pair of sampled host ports on one rail behind different leaves to ping: "
                           + "; ".join(plan.lonely)], "cross-leaf pings between host ports")  # fmt: skip
        return
    if not plan.pairs:
        verdict.add(name, [], f"0 pings: every cross-leaf pair has an end behind a failed leaf{spared}")
        return
    if tools.tool("ping") is None:
        verdict.add(name, [tools.install_hint([("ping", PING_PACKAGE)])], "ping is installed")
        return
    verdict.add(name, ping_all(plan.pairs),
                f"{len(plan.pairs)} pings between host ports behind different leaves of the same rail "
                f"({rails} rails), through the fabric as cabled{spared}")  # fmt: skip


def matrix(placed: list[PlacedHost]) -> list[tuple[PlacedHost, PlacedHost]]:
    """Every ordered pair of sampled host ports on the same rail behind different leaves."""
    return [
        (a, b) for a in placed for b in placed if a.port.rail == b.port.rail and a.port.leaf != b.port.leaf
    ]


def ping_all(pairs: list[tuple[PlacedHost, PlacedHost]]) -> list[str]:
    """One ping per pair, all at once; the failed ones are tried again (``PING_TRIES``)."""
    todo = pairs
    for _ in range(PING_TRIES):
        procs = [(a, b, _ping(a, b)) for a, b in todo]
        todo = [(a, b) for a, b, proc in procs if not _replied(proc)]
        if not todo:
            return []
    return [
        f"{a.port.host} {a.port.interface} ({a.port.address}, {a.port.leaf}) -> {b.port.host} "
        f"{b.port.interface} ({b.port.address}, {b.port.leaf}), rail {a.port.rail}: no reply"
        for a, b in todo
    ]


def _replied(proc: subprocess.Popen[bytes]) -> bool:
    """Whether the ping got its reply; one still running long after its -W is killed and counts as none."""
    try:
        return proc.wait(timeout=PING_WAIT_S + 30) == 0
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return False


def _ping(a: PlacedHost, b: PlacedHost) -> subprocess.Popen[bytes]:
    dst = str(ipaddress.ip_interface(b.port.address).ip)
    argv = [
        "ip",
        "netns",
        "exec",
        a.ns,
        tools.must("ping"),
        "-n",
        "-q",
        "-c",
        "1",
        "-W",
        str(PING_WAIT_S),
        dst,
    ]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
