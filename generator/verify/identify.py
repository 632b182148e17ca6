"""Tie discovered nodes and ports to plan devices and ports.

InfiniBand: by NodeDescription. Switches are found by their description (or the hostname inside
NVIDIA's ``MF0;<hostname>:<part>/U1`` convention), HCAs by ``<hostname> <rdma device>`` (what
``rdma-ndd`` sets), hostnames matched exactly, then case-insensitively, then by their short
name (before the first dot). A GUID → name map (``ibnetdiscover --node-name-map`` format) can
name nodes whose descriptions were never set. Anything else — firmware-default descriptions such
as ``MT4129 ConnectX7   Mellanox Technologies`` — stays *unidentified*, labelled by GUID.

LLDP: the local device is the file's name, the remote device is the chassis SysName; switch
interfaces are tied to the plan's logical ports by their number (``swp17``, ``Ethernet17``,
``Eth1/17`` → 17; Cumulus breakouts ``swp9s1`` → cage 9 sub-port 2), host interfaces by netdev.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

from generator.foreign import ByteBudget, ForeignInputError, read_foreign_text
from generator.plan.model import Plan
from generator.verify.model import (
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
# the other common forms: an unquoted name, and the topology file's node ids ("H-<guid>", "S-<guid>")
_NAME_MAP_ANY = re.compile(r'^\s*"?(?:0x|[SHR]-)([0-9a-fA-F]{1,16})"?\s+"?([^"]*?)"?\s*$')
# firmware-default NodeDescriptions: nobody set a host name (rdma-ndd not running)
_FIRMWARE_DESC = re.compile(r"^(?:MT\d{4,5}\b|.*\bMellanox Technologies\s*$)")
_BREAKOUT = re.compile(r"^swp(\d+)s(\d+)$")
_TRAILING_NUMBER = re.compile(r"(\d+)$")


class PlanIndex:
    """Look-ups from discovered names to the plan, for one fabric."""

    def __init__(self, plan: Plan, fabric: str) -> None:
        self.plan = plan
        self.fabric = fabric
        self.devices = plan.device_by_name
        self._lower = {name.lower(): name for name in self.devices}
        self.netdev: dict[tuple[str, str], str] = {}  # (host, netdev) → plan port
        self.cage: dict[tuple[str, int, int], str] = {}  # (switch, cage, sub-port) → plan port
        self.ports: dict[str, set[str]] = {}
        self.sheet: dict[tuple[str, str], str] = {}  # (device, plan port) → cabling sheet label
        self.peer: dict[tuple[str, str], tuple[str, str]] = {}  # (device, port) → planned (device, port)
        self.notes: dict[str, str] = {}  # device → what identification had to assume about it
        for link in plan.links_of(fabric):
            self.peer[(link.a.device, link.a.port)] = (link.b.device, link.b.port)
            self.peer[(link.b.device, link.b.port)] = (link.a.device, link.a.port)
            for ep in (link.a, link.b):
                self.ports.setdefault(ep.device, set()).add(ep.port)
                self.sheet[(ep.device, ep.port)] = ep.label_port
                if ep.netdev:
                    self.netdev[(ep.device, ep.netdev)] = ep.port
                if ep.cage is not None and ep.cage_port is not None:
                    self.cage[(ep.device, ep.cage, ep.cage_port)] = ep.port

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
        """``end`` with the port as the cabling sheet labels it (cage/sub-port on twin-port cages)."""
        if not end.known:
            return end
        label = self.sheet.get((end.device, end.port))
        if label is None:
            d = self.devices.get(end.device)
            if d is None:
                return end
            label = end.port
            if d.kind == "switch" and end.port.isdigit():
                n = int(end.port)
                ppc = d.ports_per_cage
                label = (
                    f"P{(n - 1) // ppc + 1:02d}/{(n - 1) % ppc + 1}" if ppc > 1 and n <= d.ports else f"P{n}"
                )
        return replace(end, sheet=label)

    def kind(self, device: str) -> str:
        d = self.devices.get(device)
        return d.kind if d else ""

    # -- Ethernet interface names ------------------------------------------------------------

    def switch_port(self, device: str, ifname: str) -> str | None:
        if m := _BREAKOUT.match(ifname):
            return self.cage.get((device, int(m.group(1)), int(m.group(2)) + 1))
        if m := _TRAILING_NUMBER.search(ifname):
            return str(int(m.group(1)))
        return None

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
    warnings: list[str] = []
    for no, line in enumerate(text.splitlines(), 1):
        if len(line) > MAX_LINE:
            raise DiscoveryError(f"{p}:{no}: line of {len(line):,} characters; the limit is {MAX_LINE:,}")
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        m = _NAME_MAP_LINE.match(line) or _NAME_MAP_ANY.match(line)
        name = (m.group(2) if m else "").strip()
        if m is None or not name:
            warnings.append(f"{p}:{no}: not a node-name map line (0x<guid> name, H-<guid> name), ignored")
            continue
        out[int(m.group(1), 16)] = name
    return NodeNameMap(out, warnings)


def _ib_identity(node: SeenNode, index: PlanIndex, names: dict[int, str]) -> tuple[str | None, str | None]:
    """(plan device, rdma device for CAs) or (None, None)."""
    desc = names.get(node.guid, node.desc) if node.guid is not None else node.desc
    desc = desc.strip()
    if not desc:
        return None, None
    if node.kind == "switch":
        candidates = [desc]
        if m := _MF0.match(desc):
            candidates.append(m.group(1))
        candidates.append(desc.split()[0])
        for c in candidates:
            if (dev := index.device(c)) is not None:
                return dev, None
        return None, None
    tokens = desc.split()
    dev = index.device(tokens[0])
    if dev is None:
        return None, None
    return dev, tokens[1] if len(tokens) > 1 else None


def _unidentified(node: SeenNode) -> str:
    kind = {"switch": "switch", "ca": "CA", "router": "router"}.get(node.kind, "node")
    ident = node.key if node.guid is None else f"0x{node.guid:016x}"
    return f"unidentified {kind} {ident}" + (f' "{node.desc}"' if node.desc.strip() else "")


def ib_found_links(
    disc: IbDiscovery,
    index: PlanIndex,
    names: dict[int, str] | None = None,
) -> tuple[list[FoundLink], list[str]]:
    """Discovered links as plan ends, and the labels of nodes that matched no plan device."""
    names = names or {}
    ident: dict[str, tuple[str | None, str | None]] = {
        k: _ib_identity(n, index, names) for k, n in disc.nodes.items()
    }
    unidentified: set[str] = set()
    labels: dict[str, str] = {}  # one label string per unidentified node, shared by all its links

    def end(key: str, port: int) -> End:
        node = disc.nodes[key]
        dev, rdma = ident[key]
        if dev is None:
            unidentified.add(key)
            label = labels.get(key) or labels.setdefault(key, _unidentified(node))
            return End(label, str(port), "switch" if node.kind == "switch" else "", known=False)
        if index.kind(dev) == "switch":
            return End(dev, str(port), "switch")
        return End(dev, f"{rdma or '?'}/{port}", "node")

    found = [
        _site_hca_names(
            FoundLink(
                end(ln.a_node, ln.a_port), end(ln.b_node, ln.b_port), ln.rate, f"{disc.source}:{ln.line}"
            ),
            index,
        )
        for ln in disc.links
    ]
    on_switch: dict[str, list[str]] = {k: [] for k in unidentified}  # node → plan switch ports it hangs on
    for ln in disc.links:
        for mine, peer, port in ((ln.a_node, ln.b_node, ln.b_port), (ln.b_node, ln.a_node, ln.a_port)):
            dev = ident[peer][0]
            if mine in on_switch and dev is not None and index.kind(dev) == "switch":
                on_switch[mine].append(index.sheet_label(End(dev, str(port), "switch")).text())
    return found, sorted(_describe_unidentified(disc.nodes[k], on_switch[k]) for k in unidentified)


def _site_hca_names(link: FoundLink, index: PlanIndex) -> FoundLink:
    """A host identified by name whose HCA the site calls something the plan does not (``HCA-1`` rather
    than ``mlx5_0``): its port is read from the switch side when the plan has this host on that switch
    port. Recorded in ``index.notes``: two such HCAs of one host swapped between leaves of the same host
    would not be told apart, so the report says the HCA names were not checked."""
    for node, other in ((link.a, link.b), (link.b, link.a)):
        if node.kind != "node" or not node.known or node.port in index.ports.get(node.device, ()):
            continue
        if other.kind != "switch" or not other.known:
            continue
        planned = index.peer.get((other.device, other.port))
        if planned is not None and planned[0] == node.device:
            index.notes.setdefault(
                node.device,
                f"{node.device}: HCA name {node.port.split('/')[0]!r} is not one of the plan's RDMA devices; "
                "its ports were matched from the switch side (HCA names not checked)",
            )
            fixed = replace(node, port=planned[1])
            return replace(link, a=fixed) if node is link.a else replace(link, b=fixed)
    return link


def _describe_unidentified(node: SeenNode, on_switch: list[str]) -> str:
    """The unidentified node, said plainly when its description is the firmware default (no host name
    was ever set), with the plan switch ports it hangs on: where to go and look."""
    text = _unidentified(node)
    if node.kind == "ca" and _FIRMWARE_DESC.match(node.desc.strip()):
        text = f"unnamed HCA 0x{node.guid or 0:016x} (firmware-default description {node.desc.strip()!r})"
    return text + (f" on {', '.join(sorted(on_switch))}" if on_switch else "")


def lldp_found_links(neighbors: list[LldpNeighbor], index: PlanIndex) -> tuple[list[FoundLink], list[str]]:
    """LLDP neighbour entries as plan ends (one link per entry; the diff merges both ends' views)."""
    unidentified: set[str] = set()
    found: list[FoundLink] = []
    for n in neighbors:
        local_dev = index.device(n.local_device)
        if local_dev is None:
            unidentified.add(f"unidentified device {n.local_device!r} (file name)")
            local = End(f"unidentified device {n.local_device!r}", n.local_port, known=False)
        else:
            lp = index.port(local_dev, n.local_port)
            local = End(local_dev, lp if lp is not None else n.local_port, index.kind(local_dev))
        remote_dev = index.device(n.chassis_name)
        id_port = n.port_id if n.port_id_type in ("ifname", "local", "ifalias", None) else None
        raw_port = id_port or n.port_descr or n.port_id or "?"
        if remote_dev is None:
            label = (
                f"unidentified LLDP chassis {n.chassis_name!r}"
                if n.chassis_name
                else f"unidentified LLDP chassis id {n.chassis_id or '?'}"
            )
            unidentified.add(label)
            remote = End(label, raw_port, known=False)
        else:
            rp = index.port(remote_dev, id_port, n.port_descr)
            remote = End(remote_dev, rp if rp is not None else raw_port, index.kind(remote_dev))
        found.append(FoundLink(local, remote, None, n.where))
    return found, sorted(unidentified)
