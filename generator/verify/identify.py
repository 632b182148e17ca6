"""Tie discovered nodes and ports to plan devices and ports.

InfiniBand: by NodeDescription. Switches are found by their description (or the hostname inside
NVIDIA's ``MF0;<hostname>:<part>/U1`` convention), HCAs by ``<hostname> <rdma device>`` (what
``rdma-ndd`` sets), hostnames matched exactly, then case-insensitively, then by their short
name (before the first dot). A GUID → name map (``ibnetdiscover --node-name-map`` format) can
name nodes whose descriptions were never set. An HCA token the blueprint declares as a port's site
label (``pools[].ports[].label``: ``gpu001 HCA-5``) is read as that port's RDMA device. Anything else —
firmware-default descriptions such as ``MT4129 ConnectX7   Mellanox Technologies`` — stays
*unidentified*, labelled by GUID.

LLDP: the local device is the file's name, the remote device is the chassis SysName; switch
interfaces are tied to the plan's logical ports by their number (``swp17``, ``Ethernet17``,
``Eth1/17`` → 17; Cumulus breakouts ``swp9s1`` → cage 9 sub-port 2), host interfaces by netdev. A
switch's other interfaces (``eth0``, ``mgmt0``, ``bond0``…) are no cabling of the plan: what a switch
sees on them is left out, with a note. A host port whose reported name is none the plan gives it (lldpd
sends the MAC) is read from the switch side, with a note.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import NamedTuple

from generator.foreign import ByteBudget, ForeignInputError, read_foreign_text
from generator.plan.model import Endpoint, Plan
from generator.platform.ports import label_devices, site_labels
from generator.safetext import inline
from generator.verify.model import (
    MAX_KEPT_WARNINGS,
    MAX_LINE,
    DiscoveryError,
    End,
    FoundLink,
    IbDiscovery,
    LldpNeighbor,
    SeenNode,
)

_MF0 = re.compile(r"^[^;]*;([^:;]+):")  # "MF0;A09-P1-IBLEAF-04-04:MQM9701/U1"
_NAME_MAP_LINE = re.compile(r'^\s*(0x[0-9a-fA-F]{1,16})\s+"(.*)"')
# the other common forms: an unquoted name, and the topology file's node ids ("H-<guid>", "S-<guid>"): the key
# by this pattern, the name by _map_entry (a lazy name before `"?\s*$` retried the blanks to the line's end
# at each of its characters: 300 lines of a name with 4,080 blanks in it took 56 s)
_NAME_MAP_KEY = re.compile(r'\s*"?(?:0x|[SHR]-)([0-9a-fA-F]{1,16})"?(?=\s)')
# firmware-default NodeDescriptions: nobody set a host name (rdma-ndd not running)
_FIRMWARE_DESC = re.compile(r"^(?:MT\d{4,5}\b|.*\bMellanox Technologies\s*$)")
# Front-panel interface names, the only switch interfaces that are ports of the plan: Cumulus Linux
# swp<N> and its breakouts swp<N>s<M> (what generator/emit/lldp.py writes), Onyx Eth<slot>/<N>. Anything
# else is the switch's own: on Cumulus Linux and SONiC eth0 is the management port, where LLDP sees the
# out-of-band switch (NVIDIA NVUE reference, `nv show interface lldp`: "eth0 ... oob-mgmt-switch swp10").
# ASCII digits, at most 9 (a 4,300-digit number is an error to int()).
_BREAKOUT = re.compile(r"swp([0-9]{1,9})s([0-9]{1,9})")
_FRONT_PANEL = re.compile(r"(?:swp|Eth[0-9]{1,9}/)([0-9]{1,9})")
# SONiC's Ethernet<N> numbers the port's first SerDes lane, not its front-panel position: the platform's
# port_config.ini maps them (sonic-buildimage device/mellanox/x86_64-mlnx_msn2700-r0/ACS-MSN2700/
# port_config.ini: "Ethernet0 ... etp1 1", "Ethernet4 ... etp2 2"), and the plan cannot know that table.
SONIC_PORT = re.compile(r"Ethernet[0-9]{1,9}")
SONIC_REFUSAL = (
    "names a SONiC port (Ethernet<N>): SONiC numbers ports by their first SerDes lane, which the platform's "
    "port_config.ini maps to the front panel (the SN2700's Ethernet4 is port 2), and verify-cabling reads "
    "Cumulus Linux (swp<N>) and Onyx (Eth<slot>/<N>) names only; give the switch's LLDP output with "
    "front-panel names"
)


def cage_of(port: int, ports_per_cage: int) -> tuple[int, int]:
    """(cage, sub-port), both from 1, of a switch's logical port on cages of ``ports_per_cage`` ports: the
    plan numbers a split cage's sub-ports consecutively (cage = (port + 1) // 2 on twin-port cages,
    generator/plan/model.py Endpoint.cage)."""
    return (port - 1) // ports_per_cage + 1, (port - 1) % ports_per_cage + 1


def logical_port(cage: int, sub_port: int, ports_per_cage: int) -> int:
    """The logical port of ``cage``'s ``sub_port`` (both from 1): the inverse of ``cage_of``."""
    return (cage - 1) * ports_per_cage + sub_port


def front_panel(ifname: str) -> bool:
    """Whether ``ifname`` names a switch's front-panel port (numbered from 1)."""
    m = _BREAKOUT.fullmatch(ifname) or _FRONT_PANEL.fullmatch(ifname)
    return m is not None and int(m.group(1)) >= 1


class PlanIndex:
    """Look-ups from discovered names to the plan, for one fabric."""

    def __init__(self, plan: Plan, fabric: str) -> None:
        self.plan = plan
        self.fabric = fabric
        self.devices = plan.device_by_name
        self._lower = {name.lower(): name for name in self.devices}
        self.notes: dict[str, str] = {}  # device → what identification had to assume about it
        # (device, plan port) → its plan endpoint; the other look-ups are built from it when first asked
        self._endpoint: dict[tuple[str, str], Endpoint] = {}
        endpoint = self._endpoint
        for link in plan.links_of(fabric):
            endpoint[(link.a.device, link.a.port)], endpoint[(link.b.device, link.b.port)] = link.a, link.b
        self._labelled: dict[tuple[str, str, str], End] = {}  # end()'s ends, one per (device, port, kind)
        self._declared_hca: dict[str, dict[str, str]] = {}  # pool → site label (case-folded) → RDMA device
        self.site: dict[tuple[str, str], str] = {}  # (host, plan port) → the adapter's declared site label
        self._site_labels()

    @cached_property
    def ports(self) -> dict[str, set[str]]:
        """device → its plan ports in this fabric."""
        out: dict[str, set[str]] = {}
        for device, port in self._endpoint:
            out.setdefault(device, set()).add(port)
        return out

    @cached_property
    def peer(self) -> dict[tuple[str, str], tuple[str, str]]:
        """(device, port) → the planned (device, port) at the other end of its cable."""
        out: dict[tuple[str, str], tuple[str, str]] = {}
        for link in self.plan.links_of(self.fabric):
            ka, kb = (link.a.device, link.a.port), (link.b.device, link.b.port)
            out[ka], out[kb] = kb, ka
        return out

    @cached_property
    def _other_host_ports(self) -> dict[tuple[str, str], str]:
        """(non-switch device, plan port or netdev) → the other fabric that cables it (switches are known by
        their own fabric)."""
        out: dict[tuple[str, str], str] = {}
        for link in self.plan.links:
            if link.fabric == self.fabric:
                continue
            for ep in (link.a, link.b):
                if self.kind(ep.device) != "switch":
                    out.setdefault((ep.device, ep.port), link.fabric)
                    if ep.netdev:
                        out.setdefault((ep.device, ep.netdev), link.fabric)
        return out

    def _fabric_of(self, end: End) -> str | None:
        """The fabric the plan puts ``end`` in (a switch's, or the one cabling a host port), if any."""
        if not end.known:
            return None
        if self.has_port(end.device, end.port):
            return self.fabric
        d = self.devices.get(end.device)
        if d is not None and d.kind == "switch":
            return d.fabric
        return self._other_host_ports.get((end.device, end.port))

    def other_fabric(self, a: End, b: End) -> str | None:
        """The other fabric a link between ``a`` and ``b`` belongs to: neither end is a switch or a plan port
        of this fabric, and one is of another fabric. A link with an end in this fabric is compared, so a
        cable of this fabric landed in another fabric's switch is still reported."""
        fa, fb = self._fabric_of(a), self._fabric_of(b)
        if self.fabric in (fa, fb):
            return None
        return fa or fb

    def has_port(self, device: str, port: str) -> bool:
        """Whether the plan cables ``device``'s ``port`` into this fabric."""
        return (device, port) in self._endpoint

    @cached_property
    def netdev(self) -> dict[tuple[str, str], str]:
        """(host, netdev) → plan port (LLDP names host ports by interface)."""
        return {(ep.device, ep.netdev): ep.port for ep in self._endpoint.values() if ep.netdev}

    @cached_property
    def cage(self) -> dict[tuple[str, int, int], str]:
        """(switch, cage, sub-port) → plan port (LLDP names breakout ports ``swp9s1``)."""
        return {
            (ep.device, ep.cage, ep.cage_port): ep.port
            for ep in self._endpoint.values()
            if ep.cage is not None and ep.cage_port is not None
        }

    def _site_labels(self) -> None:
        """The adapters' site labels the blueprint declares (``pools[].ports[].label``): they name the host
        ends on the report, as on the cable labels, and read ``<host> HCA-5`` as the declared device."""
        pools = getattr(self.plan.cluster, "pools", None) or ()
        self._declared_hca = label_devices(pools)
        named = site_labels(pools)
        if not named:
            return
        for device, port in self._endpoint:
            d = self.devices.get(device)
            label = named.get(d.pool or "", {}).get(port) if d is not None and d.kind == "node" else None
            if label is not None:
                self.site[(device, port)] = label

    def declared_hca(self, device: str, token: str | None) -> str | None:
        """The plan's RDMA device for the site label ``token`` the blueprint declares for ``device``'s pool
        (``HCA-5`` → ``mlx5_4``); any other token unchanged."""
        if token is None or not self._declared_hca:
            return token
        d = self.devices.get(device)
        return self._declared_hca.get(d.pool or "", {}).get(token.casefold(), token) if d else token

    def device(self, text: str | None) -> str | None:
        if not text:
            return None
        text = text.strip()
        for candidate in (text, text.split(".", 1)[0]):
            if candidate in self.devices:
                return candidate
            if (hit := self._lower.get(candidate.lower())) is not None:
                return hit
        return None

    def sheet_label(self, end: End) -> End:
        """``end`` with the port as the cabling sheet labels it (cage/sub-port on twin-port cages) and, on a
        host, the site's label for its adapter where the blueprint declares one. One End per distinct end:
        the planned and the discovered view of a port share it (a 100k-GPU fabric has ~600k of them)."""
        if not end.known:
            return end
        if not end.sheet and not end.site:
            return self.end(end.device, end.port, end.kind)
        return self._sheet_label(end)

    def end(self, device: str, port: str, kind: str) -> End:
        """The plan end ``device``/``port`` as the sheet labels it: ``sheet_label(End(device, port, kind))``,
        built once per end."""
        key = (device, port, kind)
        hit = self._labelled.get(key)
        if hit is None:
            labels = self._labels(device, port)
            hit = self._labelled[key] = (
                End(device, port, kind, True, *labels) if labels else End(device, port, kind)
            )
        return hit

    def _sheet_label(self, end: End) -> End:
        labels = self._labels(end.device, end.port)
        if labels is None:
            return end  # not a plan device: left as it is
        return End(end.device, end.port, end.kind, True, labels[0], labels[1] or end.site)

    def _labels(self, device: str, port: str) -> tuple[str, str] | None:
        """(the port as the cabling sheet labels it, the site's label for its adapter or ""); None for a
        device the plan does not have."""
        site = self.site.get((device, port)) if self.site else None
        if site is not None:
            return site, site
        ep = self._endpoint.get((device, port))
        if ep is not None:
            return ep.label_port, ""
        d = self.devices.get(device)
        if d is None:
            return None
        if d.kind == "switch" and port.isdigit():
            n, ppc = int(port), d.ports_per_cage
            cage, sub = cage_of(n, ppc)
            return (f"P{cage:02d}/{sub}" if ppc > 1 and n <= d.ports else f"P{n}"), ""
        if d.kind == "switch" and d.ports_per_cage > 1 and (m := _FRONT_PANEL.fullmatch(port)):
            return f"P{int(m.group(1)):02d}", ""  # a whole, unsplit cage (switch_port)
        return port, ""

    def kind(self, device: str) -> str:
        d = self.devices.get(device)
        return d.kind if d else ""

    # -- Ethernet interface names ------------------------------------------------------------

    def switch_port(self, device: str, ifname: str) -> str | None:
        """The logical port of a front-panel interface (``swp17`` → "17"; ``swp9s1`` → the plan's port on
        cage 9 sub-port 2, else the logical port of that sub-port: ``logical_port``); None for a breakout
        the switch cannot have and for any other interface (``eth0``).

        On a switch of split cages (``ports_per_cage`` > 1) the logical ports are sub-ports, and ``swpN``
        names cage N itself, not split (NVIDIA Cumulus Linux user guide, "Switch Port Attributes": swp is
        a front-panel port, and a port broken out is swp<N>s0, swp<N>s1...): it is no logical port, kept by
        its own name, so a cable in an unsplit cage 5 never passes for logical port 5 (cage 3 sub-port 1)."""
        d = self.devices.get(device)
        ppc = d.ports_per_cage if d is not None else 1
        if m := _BREAKOUT.fullmatch(ifname):
            cage, sub = int(m.group(1)), int(m.group(2)) + 1  # Cumulus numbers sub-ports from s0
            planned = self.cage.get((device, cage, sub)) if cage >= 1 else None
            if planned is not None or d is None or cage < 1 or ppc <= 1 or sub > ppc:
                return planned
            n = logical_port(cage, sub, ppc)
            return str(n) if n <= d.ports else None
        m = _FRONT_PANEL.fullmatch(ifname)
        if m is None or int(m.group(1)) < 1:
            return None
        return ifname if ppc > 1 else str(int(m.group(1)))

    @cached_property
    def host_names(self) -> dict[str, set[str]]:
        """non-switch device → every name the plan gives its ports, in any fabric (plan ports, netdevs): a
        name among them that LLDP reports on another port is a swap, not a name the plan does not know."""
        out: dict[str, set[str]] = {}
        for link in self.plan.links:
            for ep in (link.a, link.b):
                if self.kind(ep.device) != "switch":
                    out.setdefault(ep.device, set()).update((ep.port, ep.netdev) if ep.netdev else (ep.port,))
        return out

    def node_port(self, device: str, name: str) -> str | None:
        if (hit := self.netdev.get((device, name))) is not None:
            return hit
        if name in self.ports.get(device, ()):
            return name  # already the plan's form (mlx5_0/1)
        return None

    def port(self, device: str, *names: str | None) -> str | None:
        for name in names:
            if not name:
                continue
            hit = (
                self.switch_port(device, name)
                if self.kind(device) == "switch"
                else self.node_port(device, name)
            )
            if hit is not None:
                return hit
        return None


class NodeNameMap(NamedTuple):
    names: dict[int, str]  # GUID → name
    warnings: list[str]  # lines that are none of the accepted forms, located
    source: str = ""  # the map file, as named on the command line
    lines: dict[int, int] | None = None  # GUID → the line its name was read from (the last, as in names)


MAX_NAME_MAP_BYTES = 64 * 1024 * 1024  # one line per device: ~40 bytes x 1M ports of the largest design


def read_node_name_map(path: str | Path, budget: ByteBudget | None = None) -> NodeNameMap:
    """GUID → name lines: ``0x<guid> "name"`` (``ibnetdiscover --node-name-map``), the same with the name
    unquoted, or keyed by the topology file's node ids ``H-<guid>`` / ``S-<guid>`` / ``R-<guid>`` (quoted
    or not). Blank lines and ``#`` comments are skipped; any other line is reported, not guessed at."""
    p = Path(path)
    try:
        text = read_foreign_text(p, MAX_NAME_MAP_BYTES, budget)
    except ForeignInputError as exc:
        raise DiscoveryError(str(exc)) from None
    out: dict[int, str] = {}
    lines: dict[int, int] = {}
    warnings: list[str] = []
    unread = 0
    # lines end at LF (a CR before it dropped), as the tools read the map (opensm complib/cl_nodenamemap.c,
    # fgets): str.splitlines() also breaks at VT, FF, \x1c-\x1e, NEL, U+2028, and misnumbers the lines after
    for no, raw in enumerate(text.split("\n"), 1):
        line = raw.removesuffix("\r")
        if len(line) > MAX_LINE:
            raise DiscoveryError(f"{p}:{no}: line of {len(line):,} characters; the limit is {MAX_LINE:,}")
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        entry = _map_entry(line)
        if entry is None:
            unread += 1
            if unread <= MAX_KEPT_WARNINGS:
                warnings.append(f"{p}:{no}: not a node-name map line (0x<guid> name, H-<guid> name), ignored")
            continue
        guid, name = entry
        out[guid], lines[guid] = name, no
    if unread > MAX_KEPT_WARNINGS:  # 64 MiB of one-character lines: 33 million warnings, several GB
        warnings.append(
            f"{p}: {unread - MAX_KEPT_WARNINGS:,} more lines that are no node-name map line, ignored"
        )
    return NodeNameMap(out, warnings, str(p), lines)


def _map_entry(line: str) -> tuple[int, str] | None:
    """A map line's GUID and name, None when it is no map line or names nothing. A quoted name runs to the
    last quote (_NAME_MAP_LINE); otherwise the key is followed by blanks and the name, which may be quoted
    by a `"` at either end, but hold none, and is taken without the blanks around it. The same lines and
    names as the one pattern ``^\\s*"?(?:0x|[SHR]-)([0-9a-fA-F]{1,16})"?\\s+"?([^"]*?)"?\\s*$`` gave
    (tests/verify/test_name_map_linear.py compares them), in one pass: str.strip removes what \\s matches."""
    if m := _NAME_MAP_LINE.match(line):
        guid, name = m.group(1), m.group(2).strip()
    elif m := _NAME_MAP_KEY.match(line):
        guid, rest = m.group(1), line[m.end() :].strip()
        rest = rest.removeprefix('"')
        name = (rest[:-1] if rest[-1:] == '"' else rest).strip()
        if '"' in name:
            return None
    else:
        return None
    return (int(guid, 16), name) if name else None


# -- one identification of discovered InfiniBand nodes (verify-cabling and sm-guids) ------------------


class Described(NamedTuple):
    """What a NodeDescription says: a name (switch or host), the HCA token after a host name, the form."""

    name: str | None
    hca: str | None
    form: str  # empty | mf0 | firmware | localhost | name


def describe(desc: str) -> Described:
    """Read a NodeDescription in the forms real fabrics print:
    ``MF0;<name>:<model>/U1`` (managed NVIDIA switches), ``<name>``, ``<host> HCA-N`` / ``<host> mlx5_N``
    (rdma-ndd: "%h %d", rdma-core rdma-ndd(8)), firmware defaults (``MT4129 ConnectX7   Mellanox
    Technologies``, ``SwitchIB Mellanox Technologies``) and ``localhost …`` (rdma-ndd ran before the host
    name was set): the last two name nothing."""
    text = desc.strip()
    if not text:
        return Described(None, None, "empty")
    if m := _MF0.match(text):
        return Described(m.group(1).strip(), None, "mf0")
    if _FIRMWARE_DESC.match(text):
        return Described(None, None, "firmware")
    tokens = text.split()
    hca = tokens[1] if len(tokens) > 1 else None
    if tokens[0].split(".", 1)[0].lower() == "localhost":
        return Described(None, hca, "localhost")
    return Described(tokens[0], hca, "name")


@dataclass
class NodeIdentity:
    """A discovered node tied to a plan device, and how: ``guid`` (the site's node-name map),
    ``description`` or ``position`` (on the planned port of an identified switch)."""

    device: str
    how: str
    hca: str | None = None  # the HCA token of a CA's description ("mlx5_0", "HCA-1")
    ports: dict[int, str] = field(default_factory=dict)  # CA port → plan port, when read from position


def _named(text: str, node: SeenNode, index: PlanIndex, how: str) -> NodeIdentity | None:
    """The plan device ``text`` (a description or a recorded name) names, if it is of the node's kind."""
    d = describe(text)
    whole = index.device(text) if node.kind == "switch" else None
    dev = whole or index.device(d.name)
    if dev is None or (index.kind(dev) == "switch") != (node.kind == "switch"):
        return None
    return NodeIdentity(dev, how, None if node.kind == "switch" else index.declared_hca(dev, d.hca))


def _by_name(node: SeenNode, index: PlanIndex, recorded: str | None) -> NodeIdentity | None:
    """GUIDs first (what the site recorded), then the node's own description. A recorded name that is no
    plan device (the site's own "r01-dgx-a HCA-1") falls back to the description: left unidentified, the
    node was placed by position, and two swapped HCAs whose descriptions named each other's ports were
    each placed on the port they sat on, and called ok."""
    for text, how in ((recorded, "guid"), (node.desc, "description")):
        if text and (hit := _named(text, node, index, how)) is not None:
            return hit
    return None


def recorded_names(disc: IbDiscovery, names: dict[int, str]) -> dict[str, str]:
    """node key → the name the site recorded for it: by node GUID (what ibnetdiscover and opensm look up,
    and sm-guids writes), else by a port GUID of the node (the one GUID `ibnetdiscover -p` prints for an
    HCA, which is then its key; what sm-guids wrote before): both formats of a dump read a map alike."""
    return {key: names[guid] for key, guid in _recorded_guids(disc, names).items()}


def _recorded_guids(disc: IbDiscovery, names: dict[int, str]) -> dict[str, int]:
    """node key → the GUID of the map entry recorded_names takes for it."""
    if not names:
        return {}
    nodes = disc.nodes
    out = {key: n.guid for key, n in nodes.items() if n.guid is not None and n.guid in names}
    for (key, _), guid in disc.port_guids.items():
        if key not in out and key in nodes and guid in names:
            out[key] = guid
    return out


def name_map_warnings(
    disc: IbDiscovery, index: PlanIndex, name_map: NodeNameMap, ident: dict[str, NodeIdentity]
) -> list[str]:
    """What verify-cabling and sm-guids both say of a --node-name-map: its entries naming no plan device of
    their node's kind (unplanned_map_entries), then the lines it is not read from."""
    return unplanned_map_entries(disc, index, name_map, ident) + name_map.warnings


def unplanned_map_entries(
    disc: IbDiscovery, index: PlanIndex, name_map: NodeNameMap, ident: dict[str, NodeIdentity]
) -> list[str]:
    """One warning per map entry that names a node of the dump but no plan device of the node's kind (a typo,
    the site's own name for it): the entry is not used, and the node is identified by its description or
    position instead, or not at all (_by_name). Said at the map's line: passed over without a word, a typo
    in the map was invisible."""
    out = []
    for key, guid in _recorded_guids(disc, name_map.names).items():
        node, name = disc.nodes[key], name_map.names[guid]
        if _named(name, node, index, "guid") is not None:
            continue
        what = "switch" if node.kind == "switch" else "HCA"
        dev = index.device(name) or index.device(describe(name).name)
        says = (
            "names no device of the plan" if dev is None else f"names {dev}, which is no {what} in the plan"
        )
        n = ident.get(key)
        if n is None:
            then = f"the {what} is left unidentified"
        elif n.how == "position":
            then = f"the {what} is placed by position, as {n.device}"
        else:
            then = f"the {what} is identified by its node description, as {n.device}"
        line = (name_map.lines or {}).get(guid)
        where = f"{name_map.source}:{line}" if line else name_map.source
        out.append(
            f"{where}: node-name map entry 0x{guid:016x} {inline(name)!r} {says}: not used; {then} (correct "
            "the entry to the plan's name)"
        )
    return out


def check_ports_map(
    disc: IbDiscovery, index: PlanIndex, names: dict[int, str], recorded: dict[str, str]
) -> None:
    """Refuse a map naming plan hosts that no HCA of an `ibnetdiscover -p` dump matches: -p prints an HCA's
    port GUID only (infiniband-diags ibnetdiscover.c, dump_ports_report: ``port->guid``), so a map keyed by
    node GUIDs (ibnetdiscover's and sm-guids' form) named none of them, and two unnamed HCAs it showed
    swapped were placed by position and called ok, where the default format of the fabric said MISWIRED."""
    if disc.format != "ibnetdiscover -p" or not names:
        return
    if any(disc.nodes[key].kind != "switch" for key in recorded):
        return  # keyed by port GUIDs: it names this dump's HCAs
    hosts = sorted(
        (guid, name)
        for guid, name in names.items()
        if (dev := index.device(describe(name).name)) is not None and index.kind(dev) != "switch"
    )
    if hosts:
        shown = ", ".join(f"0x{g:016x} {inline(n)!r}" for g, n in hosts[:3])
        raise DiscoveryError(
            f"{disc.source}: an `ibnetdiscover -p` dump names each HCA by its port GUID only, and the "
            f"node-name map's {len(hosts):,} host entries ({shown}{', ...' if len(hosts) > 3 else ''}) match "
            "none of them (node GUIDs?): give the default format (`ibnetdiscover > fabric.topo`) or let "
            "ibnetdiscover apply the map (`ibnetdiscover -p --node-name-map FILE`)"
        )


def _neighbours(disc: IbDiscovery) -> dict[str, list[tuple[int, str, int]]]:
    """node → [(its port, peer node, peer port)]."""
    out: dict[str, list[tuple[int, str, int]]] = {}
    for ln in disc.links:
        out.setdefault(ln.a_node, []).append((ln.a_port, ln.b_node, ln.b_port))
        out.setdefault(ln.b_node, []).append((ln.b_port, ln.a_node, ln.a_port))
    return out


def _planned_here(
    key: str, ident: dict[str, NodeIdentity], index: PlanIndex, nbrs: dict[str, list[tuple[int, str, int]]]
) -> dict[int, tuple[str, str]]:
    """port of ``key`` → the plan (device, port) that the identified neighbours expect there: a switch by its
    port, a host named by its description (``dgx001 mlx5_0``) by the HCA port the plan cables to it. A leaf
    with two of its four uplinks crossed is then still placed by the hosts below it, which agree."""
    out: dict[int, tuple[str, str]] = {}
    for port, peer, pport in nbrs.get(key, []):
        n = ident.get(peer)
        if n is None:
            continue
        if index.kind(n.device) == "switch":
            planned = index.peer.get((n.device, str(pport)))
        else:
            host_port = n.ports.get(pport) or (f"{n.hca}/{pport}" if n.hca else None)
            planned = index.peer.get((n.device, host_port)) if host_port else None
        if planned is not None:
            out[port] = planned
    return out


def _position(
    node: SeenNode, planned: dict[int, tuple[str, str]], index: PlanIndex, taken: set[tuple[str, str]]
) -> NodeIdentity | None:
    """The plan device every identified neighbour expects on this node's ports (port numbers agreeing)."""
    want_switch = node.kind == "switch"
    fits: dict[int, tuple[str, str]] = {}
    for port, (dev, dport) in planned.items():
        is_switch = index.kind(dev) == "switch"
        same_port = dport == str(port) if is_switch else dport.rsplit("/", 1)[-1] == str(port)
        # an appliance's HCA port names are not published (plan ports p1, p2): where it sits is what counts
        same_port = same_port or index.kind(dev) == "appliance"
        if is_switch == want_switch and same_port and (dev, dport) not in taken:
            fits[port] = (dev, dport)
    devices = {dev for dev, _ in fits.values()}
    # one device, expected by most of the identified neighbours (a crossed uplink does not hide a leaf)
    if len(devices) != 1 or 2 * len(fits) <= len(planned):
        return None
    (dev,) = devices
    return NodeIdentity(dev, "position", ports={} if want_switch else {p: dp for p, (_, dp) in fits.items()})


def identify_nodes(
    disc: IbDiscovery, index: PlanIndex, names: dict[int, str]
) -> tuple[dict[str, NodeIdentity], dict[str, list[str]]]:
    """Every node of ``disc`` that can be tied to a plan device: by recorded GUID, by description, then by
    position (switches first, so HCAs can hang on a leaf that was itself placed by position); and the plan
    switch names two or more switches claim, with their node keys. Such a name identifies none of them:
    which one is the plan's switch is for position to say, if it can."""
    ident: dict[str, NodeIdentity] = {}
    recorded = recorded_names(disc, names)
    check_ports_map(disc, index, names, recorded)
    for key, node in disc.nodes.items():
        if (hit := _by_name(node, index, recorded.get(key))) is not None:
            ident[key] = hit
    duplicates = _claimed_twice(disc, ident, index)
    for keys in duplicates.values():
        for key in keys:
            del ident[key]
    nbrs: dict[str, list[tuple[int, str, int]]] | None = None  # built when a node is left to place
    for kind in ("switch", "switch", "ca"):  # two passes: a spine placed by position can place a leaf
        taken: set[tuple[str, str]] | None = None  # what the names claimed when this pass began
        for key, node in disc.nodes.items():
            if key in ident or node.kind != kind:
                continue
            nbrs = _neighbours(disc) if nbrs is None else nbrs
            taken = _taken(ident, index) if taken is None else taken
            if (hit := _position(node, _planned_here(key, ident, index, nbrs), index, taken)) is not None:
                ident[key] = hit
                taken |= {(hit.device, p) for p in hit.ports.values()} | {(hit.device, "")}
    return ident, duplicates


def _claimed_twice(
    disc: IbDiscovery, ident: dict[str, NodeIdentity], index: PlanIndex
) -> dict[str, list[str]]:
    """Plan switch → the keys of the discovered switches that claim its name, where more than one does."""
    claims: dict[str, list[str]] = {}
    for key, n in ident.items():
        if index.kind(n.device) == "switch" and disc.nodes[key].kind == "switch":
            claims.setdefault(n.device, []).append(key)
    return {name: keys for name, keys in claims.items() if len(keys) > 1}


def duplicate_notes(
    disc: IbDiscovery, ident: dict[str, NodeIdentity], duplicates: dict[str, list[str]]
) -> list[str]:
    """One finding per plan switch name several switches claim (a name claimed twice is trusted for neither,
    as generator/verify/trust.py does for HCA ports): their GUIDs, and where position placed each."""
    out = []
    for name, keys in sorted(duplicates.items()):
        ids = [_node_id(disc.nodes[k]) for k in keys]
        placed = [
            f"{i} is {ident[k].device}" if k in ident else f"{i} is not placed"
            for i, k in zip(ids, keys, strict=True)
        ]
        out.append(
            f"{name}: {len(keys)} switches claim this name ({', '.join(ids)}): "
            f"{'neither' if len(keys) == 2 else 'none'} is identified by it; by position {', '.join(placed)} "
            "(correct the node description or node-name map entry of the wrong one)"
        )
    return out


def _node_id(node: SeenNode) -> str:
    return node.key if node.guid is None else f"0x{node.guid:016x}"


def _taken(ident: dict[str, NodeIdentity], index: PlanIndex) -> set[tuple[str, str]]:
    """Plan switches and host ports already claimed by a name, which position may not give again."""
    out: set[tuple[str, str]] = set()
    for n in ident.values():
        if index.kind(n.device) == "switch":
            out |= {(n.device, p) for p in index.ports.get(n.device, ())} | {(n.device, "")}
        elif n.hca is not None:
            out |= {(n.device, p) for p in index.ports.get(n.device, ()) if p.split("/")[0] == n.hca}
        out |= {(n.device, p) for p in n.ports.values()}
    return out


def position_notes(
    disc: IbDiscovery, ident: dict[str, NodeIdentity], index: PlanIndex | None = None
) -> list[str]:
    """One finding per device placed by position only: where it is (host ports by the site's adapter labels
    where the blueprint declares them), and that its description is not set."""
    site = index.site if index is not None else {}
    out = []
    for key, n in ident.items():
        if n.how != "position":
            continue
        node = disc.nodes[key]
        what = "switch" if node.kind == "switch" else "HCA"
        guid = f"0x{node.guid:016x}" if node.guid is not None else key
        shown = repr(node.desc.strip()) if node.desc.strip() else "empty"
        shown_ports = sorted(
            f"{site[(n.device, p)]} = {p}" if (n.device, p) in site else p for p in n.ports.values()
        )
        ports = f" ({', '.join(shown_ports)})" if n.ports else ""
        why, fix = _why_position(node)
        out.append(
            f"{n.device}{ports}: {what} {guid} identified by position only: {why} (it reads {shown}); {fix} "
            "(rdma-ndd on hosts, hostname on managed switches)"
        )
    return sorted(out)


def _why_position(node: SeenNode) -> tuple[str, str]:
    """(why a node placed by position was not identified by its description, what to do): a switch that
    says ``dgx001`` has a description, which names no plan switch (telling the technician it was "not set"
    sent them looking for a missing setting rather than a wrong one)."""
    if describe(node.desc).form in ("name", "mf0"):
        plan_kind = "switch" if node.kind == "switch" else "host"
        return f"its node description names no plan {plan_kind}", "set it to the plan's name"
    return "its node description is not set", "set it"


def _unidentified(node: SeenNode) -> str:
    kind = {"switch": "switch", "ca": "CA", "router": "router"}.get(node.kind, "node")
    return f"unidentified {kind} {_node_id(node)}" + (f' "{node.desc}"' if node.desc.strip() else "")


class IbFound(NamedTuple):
    links: list[FoundLink]
    unidentified: list[str]  # labels of nodes that matched no plan device, with where they hang
    identity: dict[str, NodeIdentity]  # node key → plan device
    ends: dict[tuple[str, int], End]  # (node key, port) → the plan end it was read as (if asked for)
    duplicates: dict[str, list[str]]  # plan switch name → the node keys of the switches that all claim it


def ib_found_links(
    disc: IbDiscovery, index: PlanIndex, names: dict[int, str] | None = None, *, with_ends: bool = False
) -> IbFound:
    """Discovered links as plan ends, and the labels of nodes that matched no plan device; ``with_ends``:
    also each discovered port's end (sm-guids reads them; verify-cabling does not keep 600k of them)."""
    ident, duplicates = identify_nodes(disc, index, names or {})
    labels: dict[str, str] = {}  # one label string per unidentified node, shared by all its links
    switch_of = {key: n.device for key, n in ident.items() if index.kind(n.device) == "switch"}

    def end(key: str, port: int) -> End:
        if (switch := switch_of.get(key)) is not None:
            return index.end(switch, str(port), "switch")
        n = ident.get(key)
        if n is None:
            node = disc.nodes[key]
            label = labels.get(key) or labels.setdefault(key, _unidentified(node))
            return End(label, str(port), "switch" if node.kind == "switch" else "", known=False)
        return index.end(n.device, n.ports.get(port) or f"{n.hca or '?'}/{port}", "node")

    found = [
        FoundLink(end(ln.a_node, ln.a_port), end(ln.b_node, ln.b_port), ln.rate, f"{disc.source}:{ln.line}")
        for ln in disc.links
    ]
    found = site_hca_names(found, index)
    ends: dict[tuple[str, int], End] = {}
    for ln, fl in (
        zip(disc.links, found, strict=True) if with_ends else ()
    ):  # the order is kept, link for link
        ends[(ln.a_node, ln.a_port)], ends[(ln.b_node, ln.b_port)] = fl.a, fl.b
    on_switch: dict[str, list[str]] = {k: [] for k in labels}  # unidentified nodes with links
    for ln in disc.links if on_switch else ():
        for mine, peer, port in ((ln.a_node, ln.b_node, ln.b_port), (ln.b_node, ln.a_node, ln.a_port)):
            sw = ident.get(peer)
            if mine in on_switch and sw is not None and index.kind(sw.device) == "switch":
                on_switch[mine].append(index.end(sw.device, str(port), "switch").text())
    unidentified = sorted(_describe_unidentified(disc.nodes[k], v) for k, v in on_switch.items())
    claimed = {k for keys in duplicates.values() for k in keys}  # said by duplicate_notes, not as unset names
    placed = {k: n for k, n in ident.items() if k not in claimed}
    index.notes.update({f"position:{i}": note for i, note in enumerate(position_notes(disc, placed, index))})
    index.notes.update(
        {f"duplicate:{i}": note for i, note in enumerate(duplicate_notes(disc, ident, duplicates))}
    )
    return IbFound(found, unidentified, ident, ends, duplicates)


def _site_hca_end(link: FoundLink, index: PlanIndex) -> tuple[End, End, tuple[str, str]] | None:
    """(host end, switch end, planned host port) of a link whose host end names an HCA the plan does not
    know (``HCA-1`` rather than ``mlx5_0``), on a switch port the plan gives to that same host."""
    for node, other in ((link.a, link.b), (link.b, link.a)):
        if node.kind != "node" or not node.known or index.has_port(node.device, node.port):
            continue
        hca = node.port.split("/")[0]
        if any("/" in p and p.split("/")[0] == hca for p in index.ports.get(node.device, ())):
            # a planned HCA cabled on another of its ports: a wrong port, not a site HCA name (plan ports
            # without a port number, such as an appliance's p1, name no HCA and are matched from the switch)
            continue
        if other.kind != "switch" or not other.known:
            continue
        planned = index.peer.get((other.device, other.port))
        if planned is not None and planned[0] == node.device:
            return node, other, planned
    return None


def learn_hca_names(found: list[FoundLink], index: PlanIndex) -> dict[str, str]:
    """The site's HCA name → the plan's RDMA device (``HCA-1`` → ``mlx5_0``), learned from where each named
    HCA sits: kept when more than half of the hosts agree, so one host with two rails crossed is an
    exception to the rule and not the rule."""
    return _learned(_site_hca_ends(found, index), index)


def _site_hca_ends(
    found: list[FoundLink], index: PlanIndex
) -> list[tuple[int, tuple[End, End, tuple[str, str]]]]:
    """(position, _site_hca_end) of every link that has one."""
    return [(i, hit) for i, link in enumerate(found) if (hit := _site_hca_end(link, index)) is not None]


def _learned(hits: list[tuple[int, tuple[End, End, tuple[str, str]]]], index: PlanIndex) -> dict[str, str]:
    votes: dict[str, Counter[str]] = {}
    for _, (node, _, planned) in hits:
        if index.kind(node.device) != "appliance":
            votes.setdefault(node.port.split("/")[0], Counter())[planned[1].split("/")[0]] += 1
    learned: dict[str, str] = {}
    for label, c in votes.items():
        (best, n), *_ = c.most_common(1)
        if 2 * n > sum(c.values()):
            learned[label] = best
    if len(set(learned.values())) != len(learned):
        return {}  # two site names for one device: no rule to learn
    return learned


def site_hca_names(found: list[FoundLink], index: PlanIndex) -> list[FoundLink]:
    """Links whose host end uses the site's HCA names, rewritten to the plan's RDMA devices: by the learned
    rule (a host that breaks it is reported miswired), else from the switch side with a note that the HCA
    names of that host were not checked."""
    hits = _site_hca_ends(found, index)
    learned = _learned(hits, index)
    if not learned:  # no rule: only the links with a site HCA end change, each as the loop below does it
        out = list(found)
        for i, hit in hits:
            out[i] = _matched_from_switch(out[i], hit, index)
        return out
    rule = ", ".join(f"{k}={v}" for k, v in sorted(learned.items()))
    index.notes["hca-names"] = (
        f"HCA names read as the plan's RDMA devices by the rule the hosts follow: {rule}"
    )
    out = []
    for link in found:
        for node in (link.a, link.b):
            label, _, num = node.port.partition("/")
            appliance = index.kind(node.device) == "appliance"  # plan ports p1, p2: no HCA names to map
            if node.kind == "node" and node.known and label in learned and not appliance:
                fixed = index.end(node.device, f"{learned[label]}/{num}", node.kind)
                link = link._replace(a=fixed) if node is link.a else link._replace(b=fixed)
        at_switch = _site_hca_end(link, index)
        out.append(link if at_switch is None else _matched_from_switch(link, at_switch, index))
    return out


def _matched_from_switch(
    link: FoundLink, hit: tuple[End, End, tuple[str, str]], index: PlanIndex
) -> FoundLink:
    """``link`` with its host end read as the port the plan cables to its switch end, and a note saying so."""
    node, _, planned = hit
    # an appliance's HCA names are not published (plan ports p1, p2): where it sits is what counts
    if index.kind(node.device) != "appliance":
        index.notes.setdefault(
            node.device,
            f"{node.device}: HCA name {node.port.split('/')[0]!r} is not one of the plan's RDMA "
            "devices; its ports were matched from the switch side (HCA names not checked)",
        )
    fixed = index.end(node.device, planned[1], node.kind)
    return link._replace(a=fixed) if node is link.a else link._replace(b=fixed)


def _describe_unidentified(node: SeenNode, on_switch: list[str]) -> str:
    """The unidentified node, said plainly when its description is the firmware default (no host name
    was ever set), with the plan switch ports it hangs on: where to go and look."""
    text = _unidentified(node)
    if node.kind == "ca" and _FIRMWARE_DESC.match(node.desc.strip()):
        text = f"unnamed HCA 0x{node.guid or 0:016x} (firmware-default description {node.desc.strip()!r})"
    return text + (f" on {', '.join(sorted(on_switch))}" if on_switch else "")


def lldp_found_links(neighbors: list[LldpNeighbor], index: PlanIndex) -> tuple[list[FoundLink], list[str]]:
    """LLDP neighbour entries as plan ends (one link per entry; the diff merges both ends' views). What a
    plan switch sees on an interface that is no front-panel port is left out, with one note per switch;
    a link between ports of other fabrics (a host's management port on its management leaf, in the host's
    file) is left out, with one counted note."""
    unidentified: set[str] = set()
    found: list[FoundLink] = []
    off_panel: dict[str, list[str]] = {}  # switch → "eth0 (oob-mgmt-switch swp10)" entries left out
    elsewhere: Counter[str] = Counter()  # other fabric → its links left out
    for n in neighbors:
        local_dev = index.device(n.local_device)
        id_port = n.port_id if n.port_id_type in ("ifname", "local", "ifalias", None) else None
        raw_port = id_port or n.port_descr or n.port_id or "?"
        local_switch = local_dev is not None and index.kind(local_dev) == "switch"
        if local_switch and SONIC_PORT.fullmatch(n.local_port):  # a plan switch that runs SONiC
            raise DiscoveryError(f"{n.where} {SONIC_REFUSAL}")
        if local_dev is not None and local_switch and not front_panel(n.local_port):
            off_panel.setdefault(local_dev, []).append(
                f"{n.local_port} ({n.chassis_name or n.chassis_id or '?'} {raw_port})"
            )
            continue
        if local_dev is None:
            local = End(f"unidentified device {n.local_device!r}", n.local_port, known=False)
        else:
            lp = index.port(local_dev, n.local_port)
            local = End(local_dev, lp if lp is not None else n.local_port, index.kind(local_dev))
        remote = _lldp_remote(n, id_port, raw_port, index)
        link = _host_port_from_switch(FoundLink(local, remote, None, n.where), index)
        other = index.other_fabric(link.a, link.b)
        if other is not None:
            elsewhere[other] += 1
            continue
        if local_dev is None:
            unidentified.add(f"unidentified device {n.local_device!r} (file name)")
        if not remote.known:
            unidentified.add(remote.device)
        found.append(link)
    _lldp_notes(index, off_panel, elsewhere)
    return found, sorted(unidentified)


def _lldp_remote(n: LldpNeighbor, id_port: str | None, raw_port: str, index: PlanIndex) -> End:
    """The end an LLDP entry's neighbour names: its chassis as a plan device, else unidentified."""
    remote_dev = index.device(n.chassis_name)
    if remote_dev is None:
        label = (
            f"unidentified LLDP chassis {n.chassis_name!r}"
            if n.chassis_name
            else f"unidentified LLDP chassis id {n.chassis_id or '?'}"
        )
        return End(label, raw_port, known=False)
    if index.kind(remote_dev) == "switch" and SONIC_PORT.fullmatch(id_port or n.port_descr or ""):
        raise DiscoveryError(f"{n.where} {SONIC_REFUSAL}")  # a plan switch seen running SONiC
    rp = index.port(remote_dev, id_port, n.port_descr)
    return End(remote_dev, rp if rp is not None else raw_port, index.kind(remote_dev))


def _lldp_notes(index: PlanIndex, off_panel: dict[str, list[str]], elsewhere: Counter[str]) -> None:
    for switch, seen in off_panel.items():
        index.notes[f"off-panel:{switch}"] = inline(
            f"{switch}: LLDP neighbours on interfaces that are not front-panel ports left out (not cables of "
            f"the plan): {', '.join(sorted(seen))}"
        )
    if elsewhere:
        each = ", ".join(f"{fabric}: {count:,}" for fabric, count in sorted(elsewhere.items()))
        index.notes["other-fabrics"] = inline(
            f"{sum(elsewhere.values()):,} LLDP neighbour entries between ports of other fabrics left out "
            f"({each}); verify those with --fabric"
        )


def _host_port_from_switch(link: FoundLink, index: PlanIndex) -> FoundLink:
    """``link`` with its host end read as the port the plan cables to its switch end, when the host's
    reported port is none of the names the plan gives that host's ports: lldpd sends a port's MAC as its
    id unless told otherwise (lldpcli(8), ``configure lldp portidsubtype``), and no interface is called
    ``mlx5_0/1`` where the plan publishes no netdev. As _matched_from_switch does for InfiniBand HCA names,
    with one note per host. A name the plan does give the host stays where it was reported: a swap."""
    for host, switch in ((link.a, link.b), (link.b, link.a)):
        if not host.known or host.kind in ("", "switch") or index.has_port(host.device, host.port):
            continue
        if switch.kind != "switch" or not switch.known:
            continue
        planned = index.peer.get((switch.device, switch.port))
        if planned is None or planned[0] != host.device:
            continue
        if host.port in index.host_names.get(host.device, ()):
            continue  # the plan's name of another of its ports: reported as it is
        index.notes.setdefault(
            host.device,
            inline(
                f"{host.device}: LLDP port name '{host.port}' is none of the plan's names for its ports; its "
                "ports were matched from the switch side (port names not checked)"
            ),
        )
        fixed = index.end(host.device, planned[1], host.kind)
        return link._replace(a=fixed) if host is link.a else link._replace(b=fixed)
    return link
