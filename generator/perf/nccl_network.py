"""The network an nccl-tests run's NCCL used, as its output records it.

NCCL_DEBUG=INFO names the network NCCL loaded (src/init.cc: ``INFO(NCCL_INIT, "Using network %s", ...)``):
``IB``, its InfiniBand / RoCE verbs transport (src/transport/net_ib.cc ``ncclNetIb``), ``Socket``, its TCP
transport (src/transport/net_socket.cc ``ncclNetSocket``), or a net plugin's own name. It then prints every
connection a channel makes to another node (src/transport/net.cc ``sendSetup``: ``Channel %02d/%d : %d[%d] ->
%d[%d] [send] via NET/%s/%d%s%s%s``; releases before 2.12 print ``Channel %02d : %d[%lx] -> %d[%lx]``): the
network's name, the device, and ``/GDRDMA`` when the NIC reads and writes the GPU's memory directly
(GPUDirect RDMA); without it NCCL stages the data through host memory. NCCL's IB transport also names, once
a process, the ports it will use (``NET/IB : Using [0]mlx5_0:1/IB ...``, see ``_IB_PREFIX``), with the
host the line was printed on. A -J file has no log, only the
environment: ``NCCL_NET`` ("Forces NCCL to use a specific network"; "Internal network names are "IB"
(generic IB verbs) and "Socket" (TCP/IP sockets)", matched case-insensitively: NCCL's environment
variables reference).

Every line is foreign input: the names are bounded printable ASCII, a run naming more networks than any NCCL
loads is refused where the extra one stands, and counts only grow by one a line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from generator.foreign import ForeignInputError, host_name_problem
from generator.limits import MAX_NODES

SOCKET = "Socket"  # NCCL's TCP transport (net_socket.cc ncclNetSocket)
# InfiniBand / RoCE verbs transports: NCCL's own (net_ib.cc ncclNetIb, "IB") and NVIDIA's verbs plugin of
# HPC-X, Mellanox/nccl-rdma-sharp-plugins src/ib_plugin.c (commit 728d4e88): "IBext_v8" to "IBext_v5", one
# name a net API version
_VERBS_RE = re.compile(r"IB|IBext_v\d{1,2}", re.ASCII)
# Networks one run may name: NCCL loads one, and ranks of a misconfigured run may differ (one falls back to
# sockets, NVIDIA/nccl-tests #29); more than this is no output NCCL writes.
MAX_NETWORKS = 8
_NAME = r"[!-.0-~](?:[ -.0-~]{0,62}[!-.0-~])?"  # printable ASCII, no slash, no space at either end
_USING_RE = re.compile(rf"NCCL INFO Using network ({_NAME})\s*$", re.ASCII)
_RANK = r"[^\[]{1,12}\[[0-9a-fA-Fx]{1,16}\]"  # a rank and its device (bus id before 2.12): 0[0], 8[1b000]
_SEND_RE = re.compile(
    rf"NCCL INFO Channel \d{{1,3}}(?:/\d{{1,3}})? : {_RANK} -> {_RANK} \[send\] via "
    rf"NET/({_NAME})/\d{{1,4}}(?:\(\d{{1,7}}\))?(/GDRDMA)?",
    re.ASCII,
)

# NCCL's IB transport names, once a process, the ports it will use (NVIDIA/nccl src/transport/net_ib.cc
# ncclIbInit, commit 48bb7fec): only ports whose state is IBV_PORT_ACTIVE and that NCCL_IB_HCA selects, each
# " [%d]%s:%d/%s" (index, device, port, "IB" or "RoCE"; ports NCCL_IB_MERGE_NICS merged print
# " [%d]={[%d] %s:%d/%s, ...}"), in "NET/IB : Using%s %s; OOB %s:%s"; with none it prints "NET/IB : No device
# found.". NCCL_DEBUG=INFO prefixes each line with src/debug.cc's "%s:%d:%d [%d] NCCL INFO " (host, pid, tid,
# CUDA device): the host is the one the line was printed on (NCCL cuts its name at the first dot).
_IB_PREFIX = (
    r"(?<![A-Za-z0-9.-])([A-Za-z0-9][A-Za-z0-9-]{0,62}):\d{1,10}:\d{1,10} \[\d{1,4}\] NCCL INFO NET/IB : "
)
_IB_PREFIX_RE = re.compile(_IB_PREFIX, re.ASCII)
_IB_LIST = 2047  # NCCL's list of ports: char line[2048]
_IB_USING, _IB_OOB, _IB_NONE = "Using", "; OOB ", "No device found."
# The longest network line NCCL prints: src/debug.cc's prefix (timestamp, host:pid:tid, "[dev] NCCL INFO ",
# formatted with the call's format into a 1024-byte buffer) and the message, of which the longest is the
# IB port list above with its OOB interface and address: under 4 KiB. A line naming NCCL's network past
# twice that is none of NCCL's and is refused before any pattern runs over it: a 60 MB line of repeated
# `NET/IB : Using` prefixes took 40 s of regex backtracking.
MAX_NET_LINE_CHARS = 8192
_NET_MARKERS = ("NCCL INFO NET/IB : ", "NCCL INFO Using network ", "[send] via NET/")
_IB_PORT_RE = re.compile(r"\[\d{1,4}\] ?([A-Za-z0-9_.-]{1,64}):(\d{1,4})/(IB|RoCE)(?![A-Za-z])", re.ASCII)
MAX_IB_PORTS = 256  # ports one host's processes list together: more than any server has


def is_verbs(network: str) -> bool:
    """Whether ``network`` is an InfiniBand / RoCE verbs transport (NCCL's IB, HPC-X's IBext_vN)."""
    return _VERBS_RE.fullmatch(network) is not None


@dataclass(frozen=True)
class Connections:
    """The connections to other nodes one network carried, as the log prints them."""

    network: str
    count: int
    without_gdr: int  # printed without /GDRDMA: staged through host memory
    first_at: str  # file:line of the first
    first_without_gdr_at: str | None = None


@dataclass(frozen=True)
class IbPort:
    """A port NCCL's IB transport found active and may use: the RDMA device, its port and link layer."""

    device: str
    port: int
    link: str  # IB | RoCE

    def __str__(self) -> str:
        return f"{self.device}:{self.port}/{self.link}"


@dataclass(frozen=True)
class HostPorts:
    """The ports NCCL's IB transport listed on one host: every port any of its processes listed (ranks of
    one host may select different ones, NCCL_IB_HCA set per local rank), where the host's first list is."""

    host: str
    ports: tuple[IbPort, ...]
    first_at: str


@dataclass(frozen=True)
class NetworkUse:
    """What a run's output says of the network NCCL used; empty when it says nothing (no NCCL_DEBUG=INFO)."""

    loaded: tuple[tuple[str, str], ...] = ()  # (network, file:line) as `Using network` names each
    connections: tuple[Connections, ...] = ()
    forced: tuple[str, str] | None = None  # NCCL_NET from a -J file's environment, with where it stands
    ib_ports: tuple[HostPorts, ...] = ()  # per host, the ports NCCL's IB transport listed

    def uses(self, network: str) -> str | None:
        """Where the output shows NCCL used ``network`` (case-insensitive, as NCCL_NET matches): a connection
        over it, else the network NCCL loaded or was told to use; None when it shows no such thing."""
        name = network.casefold()
        for c in self.connections:
            if c.network.casefold() == name:
                return c.first_at
        if self.connections:  # the connections say what carried the traffic
            return None
        for loaded, where in self.loaded:
            if loaded.casefold() == name:
                return where
        if self.forced and self.forced[0].casefold() == name:
            return self.forced[1]
        return None

    def as_dict(self) -> dict[str, object]:
        """Under the report's JSON key ``network``, when the output says anything of it (else nothing): the
        networks ranks said they loaded, the one NCCL_NET forced, per network the connections to other
        nodes and how many lacked GPUDirect RDMA, and per host the ports NCCL's IB transport listed."""
        if not (self.loaded or self.connections or self.forced or self.ib_ports):
            return {}
        return {
            "network": {
                "loaded": [name for name, _ in self.loaded],
                "forced": self.forced[0] if self.forced else None,
                "connections": [
                    {"network": c.network, "count": c.count, "without_gdrdma": c.without_gdr}
                    for c in self.connections
                ],
                "ib_ports": {h.host: [str(p) for p in h.ports] for h in self.ib_ports},
            }
        }


@dataclass
class _Tally:
    """One network's connection lines so far (Connections once the pass ends)."""

    first_at: str
    count: int = 0
    without_gdr: int = 0
    first_without_gdr_at: str | None = None


@dataclass
class NetworkLines:
    """What one pass over a text output has found of the network so far."""

    loaded: dict[str, str] = field(default_factory=dict)
    tallies: dict[str, _Tally] = field(default_factory=dict)
    # host -> (its ports in first-seen order, where its first list is)
    hosts: dict[str, tuple[dict[IbPort, None], str]] = field(default_factory=dict)

    def read(self, line: str, where: str) -> bool:
        """Take ``line`` when it is one of NCCL's network lines; False when it is not. A line longer than NCCL
        prints (``MAX_NET_LINE_CHARS``) is refused where it stands when it names NCCL's network, and no
        pattern is run over it either way."""
        if len(line) > MAX_NET_LINE_CHARS:
            if any(marker in line for marker in _NET_MARKERS):
                raise ForeignInputError(
                    where,
                    f"a line of {len(line):,} characters naming NCCL's network: longer than any NCCL prints "
                    f"({MAX_NET_LINE_CHARS:,})",
                )
            return False
        if "NCCL INFO NET/IB : " in line and self._ib_line(line, where):
            return True
        if "NCCL INFO Using network " in line and (m := _USING_RE.search(line)):
            self._name(m.group(1), where)
            self.loaded.setdefault(m.group(1), where)
            return True
        if "[send] via NET/" in line and (m := _SEND_RE.search(line)):
            name = m.group(1)
            self._name(name, where)
            tally = self.tallies.setdefault(name, _Tally(where))
            tally.count += 1
            if m.group(2) is None:
                tally.without_gdr += 1
                tally.first_without_gdr_at = tally.first_without_gdr_at or where
            return True
        return False

    def _ib_line(self, line: str, where: str) -> bool:
        """NCCL's IB transport's `Using <ports>; OOB ...` or `No device found.` after the first NCCL prefix
        naming NET/IB: the list is cut at its first `; OOB ` within NCCL's 2047 characters, found by one
        bounded string search (no pattern scans the list)."""
        m = _IB_PREFIX_RE.search(line)
        if m is None:
            return False
        rest = line[m.end() : m.end() + len(_IB_USING) + _IB_LIST + len(_IB_OOB)]
        if rest.startswith(_IB_USING):
            end = rest.find(_IB_OOB, len(_IB_USING))
            if end < 0:
                return False
            self._ports(m.group(1), _IB_PORT_RE.findall(rest, len(_IB_USING), end), where)
            return True
        if rest.startswith(_IB_NONE):
            self._ports(m.group(1), [], where)
            return True
        return False

    def _ports(self, host: str, found: list[tuple[str, str, str]], where: str) -> None:
        """One process's list of ports on ``host``, added to what the host's other processes listed."""
        problem = host_name_problem(host)
        if problem is not None:
            raise ForeignInputError(where, f"NET/IB line of host `{host}`: {problem}")
        if host not in self.hosts and len(self.hosts) >= MAX_NODES:
            raise ForeignInputError(where, f"NET/IB lines of more than {MAX_NODES:,} hosts in one run")
        ports, _ = self.hosts.setdefault(host, ({}, where))
        for device, number, link in found:
            port = int(number)
            if not 1 <= port <= 255:  # NCCL lists ports 1 to ibv_device_attr.phys_port_cnt, a uint8_t
                raise ForeignInputError(where, f"NET/IB port `{device}:{number}`: no port number (1-255)")
            ports.setdefault(IbPort(device, port, link), None)
            if len(ports) > MAX_IB_PORTS:
                raise ForeignInputError(where, f"host {host}: more than {MAX_IB_PORTS} ports listed")

    def _name(self, name: str, where: str) -> None:
        known = self.loaded.keys() | self.tallies.keys()
        if name not in known and len(known) >= MAX_NETWORKS:
            raise ForeignInputError(where, f"network `{name}`: more than {MAX_NETWORKS} networks in one run")

    def use(self) -> NetworkUse:
        return NetworkUse(
            tuple(self.loaded.items()),
            tuple(
                Connections(name, t.count, t.without_gdr, t.first_at, t.first_without_gdr_at)
                for name, t in self.tallies.items()
            ),
            ib_ports=tuple(HostPorts(host, tuple(ports), at) for host, (ports, at) in self.hosts.items()),
        )


def forced_network(value: str | None, where: str) -> NetworkUse:
    """A -J file's ``NCCL_NET``: the network the run forced NCCL to use, refused where it stands when it is no
    network name."""
    if value is None:
        return NetworkUse()
    if not re.fullmatch(_NAME, value, re.ASCII):
        shown = f"`{value[:64]}`" if value.isascii() and value.isprintable() else "its value"
        raise ForeignInputError(where, f"NCCL_NET {shown} is no network name (printable ASCII, no slash)")
    return NetworkUse(forced=(value, where))
