"""Parse what ``ibnetdiscover`` prints: the default topology format and the ``-p`` ports report.

Grammar and quirks: linux-rdma/rdma-core infiniband-diags/ibnetdiscover.c. The parser is line-based and
tolerant: it skips every line it does not recognise (stderr noise, comments, ``-g`` chassis lines), accepts
tabs or single spaces, records with or without blank lines between them, node descriptions that contain
quotes, ``#`` or runs of spaces, GUIDs with or without leading zeros, port lines with or without the
width/speed comment, and ibsim's shorthand (no descriptions, ``[rp]`` omitted = port 1). The SHARP
aggregation node (devid 0xcf09, "Mellanox Technologies Aggregation Node", hanging off a switch's last port)
is not a cable and is left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from generator.verify.model import (
    DiscoveryError,
    IbDiscovery,
    SeenLink,
    SeenNode,
    long_line,
    read_bounded,
)

# Linear-time patterns: numbers bounded (a 5,000-digit port count never reaches int()), GUIDs 64-bit, no
# two adjacent optional whitespace runs, and at most one greedy `.*` whose backtracking is a single scan.
# Lines are at most MAX_LINE characters (checked first), so even a failing match is cheap.
_SW = re.compile(r'^Switch\s+(\d{1,6})\s+"([SHR?])-([^"]*)"(?:\s*#\s*"(.*)"(.*))?\s*$')
_CA = re.compile(r'^(Ca|Hca|Rt)\s+(\d{1,6})\s+"([SHR?])-([^"]*)"(?:\s*#\s*"(.*)"(.*))?\s*$')
_PORT = re.compile(
    r"^\[(\d{1,6})\](?:\[ext \d{1,6}\])?\s*(?:\(([0-9a-fA-F]{1,16})\)\s*)?"  # local port, CA port GUID
    r'"([SHR?])-([^"]*)"(?:\[(\d{1,6})\])?(?:\[ext \d{1,6}\])?\s*'  # remote node id and port
    r"(?:\(([0-9a-fA-F]{1,16})\)\s*)?(.*)$"  # remote port GUID (peer not a switch), rest
)
_COMMENT = re.compile(
    r'#\s*(?:lid\s+\d{1,6}\s+lmc\s+\d{1,3}\s+)?"(.*)"\s+lid\s+(\d{1,6})'
    r"(?:\s+(\d{1,3}[xX]|\?\?)\s*([A-Za-z][A-Za-z0-9]{0,15}|\?\?\?))?"
)
_GUID = re.compile(r"^(switchguid|caguid|rtguid|sysimgguid)=0x([0-9a-fA-F]{1,16})\b")
_DEVID = re.compile(r"^devid=0x([0-9a-fA-F]{1,8})\b")
_P_HEAD = re.compile(
    r"^(SW|CA|RT)\s+(\d{1,6})\s+(\d{1,6})\s+0x([0-9a-fA-F]{1,16})\s+(\d{1,3}[xX]|\?\?)\s+(\S+)\s+-\s+"
    r"(SW|CA|RT)\s+(\d{1,6})\s+(\d{1,6})\s+0x([0-9a-fA-F]{1,16})\s+\(\s*'"
)
_P_DESCS = re.compile(r"(.*)'\s+-\s+'")  # the last `' - '` splits the two descriptions (greedy, one scan)
_P_FREE = re.compile(r"^(SW|CA|RT)\s+\d{1,6}\s+(\d{1,6})\s+0x([0-9a-fA-F]{1,16})\s+\S+\s+\S+\s+'(.*)'\s*$")
# descriptions printed without quotes (the tail of the header/port comment is then the rest of the line)
_SW_BARE = re.compile(
    r'^Switch\s+(\d{1,6})\s+"([SHR?])-([^"]*)"\s*#\s*(.*?)\s+((?:enhanced|base)\s+port\s.*)$'
)
_CA_BARE = re.compile(r'^(Ca|Hca|Rt)\s+(\d{1,6})\s+"([SHR?])-([^"]*)"\s*#\s*(.*?)()\s*$')
_COMMENT_BARE = re.compile(
    r"#\s*(?:lid\s+\d{1,6}\s+lmc\s+\d{1,3}\s+)?([^\"]*?)\s+lid\s+(\d{1,6})"
    r"(?:\s+(\d{1,3}[xX]|\?\?)\s*([A-Za-z][A-Za-z0-9]{0,15}|\?\?\?))?"
)

_KIND_BY_LETTER = {"S": "switch", "H": "ca", "R": "router", "?": "unknown"}
_KIND_BY_P = {"SW": "switch", "CA": "ca", "RT": "router"}
SHARP_DEVID = 0xCF09  # SHARP Aggregation Node NodeInfo device id (as ibnetdiscover reports it)
SHARP_DESC = "aggregation node"


def _node_key(node_id: str) -> tuple[str, int | None]:
    """``"0x0002c903008f8700"`` for a GUID-based id (any number of digits), else the raw id."""
    if 0 < len(node_id) <= 16 and all(c in "0123456789abcdefABCDEF" for c in node_id):
        guid = int(node_id, 16)
        return f"0x{guid:016x}", guid
    return f"id:{node_id}", None


def _width(w: str | None) -> str | None:
    return w.lower() if w else None


def is_sharp_node(node: SeenNode) -> bool:
    return node.kind == "ca" and (node.devid == SHARP_DEVID or SHARP_DESC in node.desc.lower())


class _Builder:
    def __init__(self, source: str, fmt: str) -> None:
        self.source = source
        self.fmt = fmt
        self.nodes: dict[str, SeenNode] = {}
        self.links: dict[frozenset[tuple[str, int]], SeenLink] = {}
        self.peer: dict[tuple[str, int], tuple[str, int]] = {}
        self.warnings: list[str] = []

    def node(
        self,
        key: str,
        kind: str,
        desc: str,
        guid: int | None,
        nports: int = 0,
        devid: int | None = None,
        header: bool = False,
    ) -> None:
        old = self.nodes.get(key)
        if old is None or header:
            if old is not None and header:
                desc = desc if desc or not old.desc else old.desc
            self.nodes[key] = SeenNode(key, kind, desc, guid, nports, devid)

    def link(
        self, a: tuple[str, int], b: tuple[str, int], width: str | None, speed: str | None, line: int
    ) -> None:
        for x, y in ((a, b), (b, a)):
            known = self.peer.get(x)
            if known is not None and known != y:
                self.warnings.append(
                    f"{self.source}:{line}: port {x[1]} of {x[0]} is reported connected to "
                    f"{y[0]}[{y[1]}] here and to {known[0]}[{known[1]}] elsewhere"
                )
            self.peer.setdefault(x, y)
        key = frozenset((a, b))
        old = self.links.get(key)
        if old is None:
            self.links[key] = SeenLink(a[0], a[1], b[0], b[1], _width(width), speed, line)
        elif old.width is None and width is not None:
            self.links[key] = SeenLink(
                old.a_node, old.a_port, old.b_node, old.b_port, _width(width), speed, old.line
            )

    def result(self) -> IbDiscovery:
        excluded = sorted(k for k, n in self.nodes.items() if is_sharp_node(n))
        drop = set(excluded)
        links = [ln for ln in self.links.values() if ln.a_node not in drop and ln.b_node not in drop]
        links.sort(key=lambda ln: ln.line)
        nodes = {k: n for k, n in self.nodes.items() if k not in drop}
        return IbDiscovery(self.source, self.fmt, nodes, links, self.warnings, excluded)


@dataclass
class _Record:
    """Where the default-format parser is: the node whose port lines follow, and the ids read before
    its header line (``switchguid=``/``caguid=``/``devid=`` precede ``Switch``/``Ca``)."""

    current: str | None = None
    current_kind: str = ""
    pending_guid: int | None = None
    pending_devid: int | None = None

    def close(self) -> None:
        self.current = None
        self.current_kind = ""


class _Header(NamedTuple):
    """A ``Switch``/``Ca``/``Hca``/``Rt`` record's first line."""

    kind: str
    nports: int
    node_id: str
    desc: str


class _PortLine(NamedTuple):
    """``[lport] "S-<remote id>"[rport] # "remote desc" lid N 4xNDR``, the comment optional."""

    lport: int
    remote_letter: str
    remote_id: str
    rport: int
    remote_desc: str | None
    width: str | None
    speed: str | None


def _header(line: str) -> _Header | None:
    m = _SW.match(line) or _CA.match(line) or _SW_BARE.match(line) or _CA_BARE.match(line)
    if m is None:
        return None
    if line.startswith("Switch"):
        return _Header("switch", int(m.group(1)), m.group(3), m.group(4) or "")
    kind = "router" if m.group(1) == "Rt" else "ca"
    return _Header(kind, int(m.group(2)), m.group(4), m.group(5) or "")


def _port_line(line: str) -> _PortLine | None:
    m = _PORT.match(line)
    if m is None:
        return None
    rest = m.group(7)
    hash_at = rest.find("#")
    c = (_COMMENT.match(rest, hash_at) or _COMMENT_BARE.match(rest, hash_at)) if hash_at >= 0 else None
    return _PortLine(
        lport=int(m.group(1)),
        remote_letter=m.group(3),
        remote_id=m.group(4),
        rport=int(m.group(5) or 1),
        remote_desc=c.group(1) if c else None,
        width=c.group(3) if c else None,
        speed=c.group(4) if c else None,
    )


def _read_ids(record: _Record, line: str) -> bool:
    """A ``...guid=`` or ``devid=`` line, kept for the next header; False for any other line."""
    if m := _GUID.match(line):
        if m.group(1) != "sysimgguid":
            record.pending_guid = int(m.group(2), 16)
        return True
    if m := _DEVID.match(line):
        record.pending_devid = int(m.group(1), 16)
        return True
    return False


def _open_record(b: _Builder, record: _Record, header: _Header) -> None:
    key, guid = _node_key(header.node_id)
    guid = guid if guid is not None else record.pending_guid
    b.node(key, header.kind, header.desc, guid, header.nports, record.pending_devid, header=True)
    record.current, record.current_kind = key, header.kind
    record.pending_guid = record.pending_devid = None


def _add_port(b: _Builder, record: _Record, line: str, no: int) -> None:
    """A port line of the current record: the remote node (as far as the line names it) and the link."""
    port = _port_line(line)
    current = record.current
    if port is None or current is None:
        if line.startswith("[") and current is None:
            b.warnings.append(f"{b.source}:{no}: port line outside a node record ignored")
        return
    rkey, rguid = _node_key(port.remote_id)
    b.node(rkey, _KIND_BY_LETTER[port.remote_letter], port.remote_desc or "", rguid)
    if (current, port.lport) == (rkey, port.rport):
        b.warnings.append(f"{b.source}:{no}: port {port.lport} of {current} is connected to itself")
        return
    b.link((current, port.lport), (rkey, port.rport), port.width, port.speed, no)


def _parse_default(lines: list[str], source: str) -> IbDiscovery:
    b = _Builder(source, "ibnetdiscover")
    record = _Record()
    for no, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or _read_ids(record, line):
            continue
        if (header := _header(line)) is not None:
            _open_record(b, record, header)
        elif line.startswith(("[", "@")):
            _add_port(b, record, line, no)
        elif record.current_kind and not line.startswith("#"):
            record.close()  # any other line ends a record (ibsim does the same)
    return b.result()


def _parse_ports(lines: list[str], source: str) -> IbDiscovery:
    b = _Builder(source, "ibnetdiscover -p")
    for no, raw in enumerate(lines, 1):
        m = _p_link(raw.strip())
        if not m:
            if free := _P_FREE.match(raw.strip()):  # an unconnected port still names its node
                guid = int(free.group(3), 16)
                b.node(f"0x{guid:016x}", _KIND_BY_P[free.group(1)], free.group(4), guid)
            continue
        ltype, lport, lguid, width, speed = (
            m.group(1),
            int(m.group(3)),
            int(m.group(4), 16),
            m.group(5),
            m.group(6),
        )
        rtype, rport, rguid = m.group(7), int(m.group(9)), int(m.group(10), 16)
        ldesc, rdesc = m.group(11), m.group(12)
        lkey, rkey = f"0x{lguid:016x}", f"0x{rguid:016x}"
        b.node(lkey, _KIND_BY_P[ltype], ldesc, lguid, header=True)
        b.node(rkey, _KIND_BY_P[rtype], rdesc, rguid)
        b.link((lkey, lport), (rkey, rport), width, speed, no)
    return b.result()


class _PLink:
    """A matched ``ibnetdiscover -p`` link line: the head's groups 1-10, then the two descriptions."""

    def __init__(self, head: re.Match[str], ldesc: str, rdesc: str) -> None:
        self._groups = (*head.groups(), ldesc, rdesc)

    def group(self, i: int) -> str:
        return self._groups[i - 1]


def _p_link(line: str) -> _PLink | None:
    """``... ( 'left desc' - 'right desc' )`` in linear time (what one regex with two `.*` did slowly)."""
    head = _P_HEAD.match(line)
    if head is None:
        return None
    tail = line[head.end() :].rstrip()
    if not tail.endswith(")"):
        return None
    tail = tail[:-1].rstrip()
    if not tail.endswith("'"):
        return None
    descs = _P_DESCS.match(tail[:-1])
    if descs is None:
        return None
    return _PLink(head, descs.group(1), tail[descs.end() : -1])


def parse_ibnetdiscover(text: str, source: str = "<ibnetdiscover>") -> IbDiscovery:
    """Parse a dump in the default or the ``-p`` format (detected from its lines)."""
    lines = text.splitlines()
    long_line(lines, source)
    default_hits = sum(
        1
        for ln in lines
        if _SW.match(ln.strip())
        or _CA.match(ln.strip())
        or _SW_BARE.match(ln.strip())
        or _CA_BARE.match(ln.strip())
    )
    port_hits = sum(1 for ln in lines if _p_link(ln.strip()) or _P_FREE.match(ln.strip()))
    if not default_hits and not port_hits:
        raise DiscoveryError(
            f"{source}: no ibnetdiscover records found (expected `Switch`/`Ca` records or "
            "`ibnetdiscover -p` port lines)"
        )
    if port_hits > default_hits:
        return _parse_ports(lines, source)
    return _parse_default(lines, source)


def read_ibnetdiscover(path: str | Path) -> IbDiscovery:
    p = Path(path)
    data = read_bounded(p)
    if b"\0" in data[:4096]:
        raise DiscoveryError(
            f"{p}: binary file (an `ibnetdiscover --cache` file? print it with "
            "`ibnetdiscover --load-cache FILE`)"
        )
    return parse_ibnetdiscover(data.decode("utf-8", errors="replace"), str(p))
