"""The expected InfiniBand fabric as an ibnetdiscover / ibsim net file.

The file is what ``ibnetdiscover`` should print for the fabric as planned, in the subset of the
grammar that ibsim's parser also reads (linux-rdma/rdma-core infiniband-diags/ibnetdiscover.c;
linux-rdma/ibsim ibsim/sim_net.c), so one file serves three uses:
a human diff against the real dump, ``blueprint verify-cabling --discovered`` round-trips, and
``ibsim -s -n FILE`` simulates the fabric for OpenSM.

* Node descriptions are the plan's device names: a switch is described by its device name, an
  HCA by ``<hostname> <mlx5_N>`` (what rdma-core's ``rdma-ndd`` sets on real hosts).
* Every RDMA device (``mlx5_N``) is its own ``Ca`` record with its adapter's port count; a switch
  record declares the switch's logical ports (plus separate uplink ports when the plan uses them).
* Every link is written on both ends with the same width/speed comment (ibsim aborts on a link
  declared on one end only, and takes the enabled width/speed from the comment).
* ibsim 0.10 models speeds only up to HDR (a ``4xNDR`` link comes up as ``4xSDR``); pass
  ``sim_speed="HDR"`` to write that token instead, which the file then says in a comment line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from generator.findings import BlueprintError, Finding, Severity
from generator.fsutil import atomic_write_text
from generator.plan.model import Device, Endpoint, Plan
from generator.resolve import ResolvedCluster

NAME = "ibnetdiscover"

MAX_LINE = 255  # ibsim's parser reads lines into a 256-byte buffer (sim_net.c MAXLINE)
MAX_NODE_ID = 64  # ibsim node ids (sim_net.c NODEIDBASE); longer names get a numbered id
MAX_DESC = 63  # NodeDescription is 64 bytes on the wire; ibsim keeps 63 characters
_UNSAFE_ID = re.compile(r"[^A-Za-z0-9._:+=/-]")


class ExpectedLink(NamedTuple):
    """A planned cable as both ends should report it, with the rate ibnetdiscover should print (a
    NamedTuple: a 100k-GPU fabric makes 315,000 of them)."""

    id: str
    layer: str
    a: Endpoint
    b: Endpoint
    width: str | None  # "4x", "2x"; None when the plan gives no InfiniBand rate for the link
    speed: str | None  # "NDR", "HDR", ...

    @property
    def rate(self) -> str | None:
        return f"{self.width}{self.speed}" if self.width and self.speed else None


def applies(cluster: ResolvedCluster) -> bool:
    return any(f.kind == "infiniband" for f in cluster.fabrics.values())


def emit(cluster: ResolvedCluster, plan: Plan, out: Path) -> None:
    """Write ``<fabric>.net`` for every InfiniBand fabric that has cables."""
    for name, fabric in sorted(cluster.fabrics.items()):
        if fabric.kind == "infiniband" and plan.links_of(name):
            atomic_write_text(out / f"{name}.net", render_netfile(plan, name))


def _fabric_or_error(plan: Plan, fabric: str) -> None:
    fabrics = plan.cluster.fabrics
    if fabric not in fabrics:
        known = ", ".join(sorted(fabrics)) or "none"
        raise BlueprintError(
            [
                Finding(
                    "VER001",
                    Severity.ERROR,
                    f"the blueprint has no `{fabric}` fabric (it has: {known})",
                    ("fabrics",),
                )
            ]
        )
    if fabrics[fabric].kind != "infiniband":
        raise BlueprintError(
            [
                Finding(
                    "VER002",
                    Severity.ERROR,
                    f"the `{fabric}` fabric is {fabrics[fabric].technology}, not InfiniBand: there is "
                    "no ibnetdiscover view of it",
                    ("fabrics", fabric, "technology"),
                    "verify Ethernet/RoCE fabrics with LLDP (`lldpcli show neighbors -f json`)",
                )
            ]
        )


def link_rate(plan: Plan, fabric: str, speed_gbps: float) -> tuple[str, str] | None:
    """Width and speed token ibnetdiscover prints for a link of ``speed_gbps`` on ``fabric``.

    The fabric's own technology when the speeds agree; otherwise another InfiniBand technology of
    the catalogue with that speed, preferring the fabric's speed token (an NDR fabric's 200 Gb/s
    links are 2xNDR, not 4xHDR). None when the catalogue has no such rate.
    """
    tech = plan.cluster.fabrics[fabric].tech
    if tech.width is None or tech.speed_token is None:
        return None
    if not speed_gbps or speed_gbps == tech.speed_gbps:
        return tech.width, tech.speed_token
    same_speed = [
        (key, t)
        for key, t in sorted(plan.cluster.catalog.fabrics.items())
        if t.kind == "infiniband" and t.speed_gbps == speed_gbps and t.width and t.speed_token
    ]
    if not same_speed:
        return None
    same_speed.sort(key=lambda kt: kt[1].speed_token != tech.speed_token)
    best = same_speed[0][1]
    assert best.width is not None and best.speed_token is not None
    return best.width, best.speed_token


def expected_links(plan: Plan, fabric: str = "compute") -> list[ExpectedLink]:
    """The fabric's planned cables with the width/speed each should come up at (plan order)."""
    _fabric_or_error(plan, fabric)
    out: list[ExpectedLink] = []
    rates: dict[float, tuple[str, str] | None] = {}
    for link in plan.links_of(fabric):
        if link.speed_gbps not in rates:
            rates[link.speed_gbps] = link_rate(plan, fabric, link.speed_gbps)
        rate = rates[link.speed_gbps]
        out.append(
            ExpectedLink(
                link.id, link.layer, link.a, link.b, rate[0] if rate else None, rate[1] if rate else None
            )
        )
    return out


def rdma_device(ep: Endpoint) -> str:
    """``mlx5_3`` for a node endpoint ``mlx5_3/1``."""
    return ep.port.split("/", 1)[0]


def ca_description(host: str, rdma: str) -> str:
    return f"{host} {rdma}"


class _Ids:
    """Node ids for the net file: readable (``S-c-leaf-su1-r1``, ``H-dgx001-mlx5_0``) and unique."""

    def __init__(self) -> None:
        self._ids: dict[tuple[str, str], str] = {}
        self._used: set[str] = set()

    def get(self, kind: str, key: str) -> str:
        k = (kind, key)
        if k not in self._ids:
            base = f"{kind}-{_UNSAFE_ID.sub('_', key)}"
            if len(base) > MAX_NODE_ID or base in self._used:
                base = f"{kind}-n{len(self._ids) + 1:06d}"
            self._ids[k] = base
            self._used.add(base)
        return self._ids[k]


def _ca_ports(plan: Plan) -> dict[tuple[str, str], int]:
    """Port count of every RDMA device of every host (from the resolved pools' NIC ports)."""
    ports: dict[tuple[str, str], int] = {}
    for pool in plan.cluster.pools:
        per_dev: dict[str, int] = {}
        for p in pool.ports:
            if not p.has_rdma:  # the management / BMC NIC is plain Ethernet
                continue
            dev = p.plan_port.split("/", 1)[0]
            per_dev[dev] = max(per_dev.get(dev, 0), p.port)
        for host in pool.hostnames:
            for dev, n in per_dev.items():
                ports[(host, dev)] = n
    return ports


def _rdma_key(dev: str) -> tuple[int, str]:
    m = re.search(r"(\d+)$", dev)
    return (int(m.group(1)) if m else 1 << 30, dev)


class _Node(NamedTuple):
    """A net-file node (a switch, or one RDMA device of a host) and its port lines so far."""

    switch: bool
    id: str  # net-file node id
    desc: str  # node description (switch name, or "<host> <rdma device>")
    lines: dict[int, str]  # local port -> line


class _Nodes:
    """The nodes cable ends land on, made once each: a 100k-GPU fabric has 630,000 cable ends but
    113,000 nodes. Node ids are handed out in first-use order."""

    def __init__(self, devices: Mapping[str, Device]) -> None:
        self.devices = devices
        self.ids = _Ids()
        self.switches: dict[str, _Node] = {}
        self.cas: dict[tuple[str, str], _Node] = {}  # (host, rdma device)

    def of(self, ep: Endpoint, cable: str) -> _Node:
        dev = self.devices.get(ep.device)
        if dev is None:
            message = f"cable {cable} ends on `{ep.device}`, which is not a device of the plan"
            raise BlueprintError([Finding("VER003", Severity.ERROR, message)])
        if dev.kind == "switch":
            node = self.switches.get(ep.device)
            if node is None:
                node = self.switches[ep.device] = _Node(True, self.ids.get("S", ep.device), ep.device, {})
            return node
        key = (ep.device, rdma_device(ep))
        node = self.cas.get(key)
        if node is None:
            node_id = self.ids.get("H", f"{ep.device}-{key[1]}")
            node = self.cas[key] = _Node(False, node_id, ca_description(*key), {})
        return node

    def connect(
        self, local: _Node, ep: Endpoint, remote: _Node, remote_port: int, rate: str, cable: str
    ) -> None:
        """The line of ``local``'s port ``ep`` towards ``remote``; two cables on one port is VER004."""
        lport = ep.port_number
        if lport in local.lines:
            message = f"two cables use {ep.device} port {ep.port} (one is {cable})"
            raise BlueprintError([Finding("VER004", Severity.ERROR, message)])
        local.lines[lport] = (
            f'[{lport}]\t"{remote.id}"[{remote_port}]\t\t# "{remote.desc}" lid 0 {rate}'
            if local.switch
            else f'[{lport}]\t"{remote.id}"[{remote_port}]\t\t# lid 0 lmc 0 "{remote.desc}" lid 0 {rate}'
        )


def _netfile_header(
    plan: Plan, fabric: str, counts: tuple[int, int, int], descs: list[str], sim_speed: str | None
) -> list[str]:
    """The comment block: what the file is, its size, descriptions the fabric will cut, simulation speed."""
    rf = plan.cluster.fabrics[fabric]
    switches, cas, links = counts
    header = [
        "#",
        f"# Expected fabric: {plan.cluster.name} / {fabric} ({rf.technology}"
        + (f", {rf.tech.width}{rf.tech.speed_token}" if rf.tech.width and rf.tech.speed_token else "")
        + ")",
        "# Written by cluster-blueprint in ibnetdiscover / ibsim net-file form; node descriptions are "
        "plan device names.",
        f"# {switches} switches, {cas} CAs, {links} links",
    ]
    long_descs = sorted({d for d in descs if len(d) > MAX_DESC})
    if long_descs:
        header.append(
            f"# Warning: {len(long_descs)} node description(s) exceed {MAX_DESC} characters and will be cut "
            f"short by the fabric (first: {long_descs[0][:80]})"
        )
    if sim_speed:
        header.append(
            f"# Simulated at {sim_speed}: ibsim 0.10 models link speeds only up to HDR; "
            f"the planned fabric runs {rf.tech.width}{rf.tech.speed_token}."
        )
    header.append("#")
    return header


def render_netfile(plan: Plan, fabric: str = "compute", *, sim_speed: str | None = None) -> str:
    """The expected fabric in ibnetdiscover / ibsim net-file form (see the module docstring)."""
    _fabric_or_error(plan, fabric)
    rf = plan.cluster.fabrics[fabric]
    links = expected_links(plan, fabric)
    devices = plan.device_by_name
    nodes = _Nodes(devices)
    ids = nodes.ids
    for el in links:
        rate = f"{el.width or rf.tech.width or '4x'}{sim_speed or el.speed or rf.tech.speed_token or 'SDR'}"
        # ids are numbered in first-use order: the b end (remote of the first line) before the a end
        b, a = nodes.of(el.b, el.id), nodes.of(el.a, el.id)
        nodes.connect(a, el.a, b, el.b.port_number, rate, el.id)
        nodes.connect(b, el.b, a, el.a.port_number, rate, el.id)
    # switch name -> {port: line}; (host, rdma device) -> {port: line}
    switch_ports = {name: node.lines for name, node in nodes.switches.items()}
    ca_lines = {key: node.lines for key, node in nodes.cas.items()}

    ca_ports = _ca_ports(plan)
    descs = [*switch_ports, *(ca_description(h, r) for h, r in ca_lines)]
    out = _netfile_header(plan, fabric, (len(switch_ports), len(ca_lines), len(links)), descs, sim_speed)

    order = {d.name: i for i, d in enumerate(plan.devices)}
    for name in sorted(switch_ports, key=lambda n: (order.get(n, 1 << 30), n)):
        ports = switch_ports[name]
        dev = devices[name]
        nports = max(dev.ports, max(ports))
        out.append("")
        out.append(f'Switch\t{nports} "{ids.get("S", name)}"\t\t# "{name}" enhanced port 0 lid 0 lmc 0')
        out.extend(ports[p] for p in sorted(ports))
    for host, rdma in sorted(ca_lines, key=lambda k: (order.get(k[0], 1 << 30), k[0], _rdma_key(k[1]))):
        ports = ca_lines[(host, rdma)]
        nports = max(ca_ports.get((host, rdma), 1), max(ports))
        out.append("")
        out.append(f'Ca\t{nports} "{ids.get("H", f"{host}-{rdma}")}"\t\t# "{ca_description(host, rdma)}"')
        out.extend(ports[p] for p in sorted(ports))
    for line in out:
        if len(line) > MAX_LINE:
            raise BlueprintError(
                [
                    Finding(
                        "VER005",
                        Severity.ERROR,
                        f"net-file line longer than {MAX_LINE} characters (device names too long): "
                        f"{line[:80]}…",
                    )
                ]
            )
    return "\n".join(out) + "\n"
