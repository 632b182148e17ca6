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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from generator.foreign import ByteBudget, ForeignInputError, read_foreign
from generator.limits import MAX_LINKS
from generator.verify.model import (
    MAX_KEPT_WARNINGS,
    MAX_LINE,
    DiscoveryError,
    IbDiscovery,
    SeenLink,
    SeenNode,
)

# The dump of the largest fabric this tool plans (102,400 GPUs, 315,392 links; benchmarks/synthetic.py) is
# ~44 MB in net-file form and ~60 MB as ibnetdiscover prints it with GUIDs: the limit leaves room for that.
MAX_DUMP_BYTES = 64 * 1024 * 1024
# One fabric of the largest design has ~315k links (generator/limits.py: 800k for all fabrics together);
# a dump with more links or nodes than half of that limit is not of a fabric this tool planned.
MAX_SEEN = MAX_LINKS // 2
# IBA: PortNum is an 8-bit field (SMP attribute modifiers, PortInfo:LocalPortNum), so a switch has at
# most 254 external ports plus port 0; anything larger is not a port number.
MAX_PORT = 255
# On a record-looking line the parser did not match: a number no field can hold (GUIDs are 64 bits = at
# most 16 hex digits; port numbers at most 3 digits). The description (after `#` or `'`) is not searched.
_OVERSIZE = re.compile(r"[0-9A-Fa-f]{17,}|\[\d{4,}\]")
_RECORD_START = (
    "[",
    "Switch",
    "Ca",
    "Hca",
    "Rt",
    "SW",
    "CA",
    "RT",
    "switchguid",
    "caguid",
    "rtguid",
    "sysimg",
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
# What ibnetdiscover prints (libibmad's IBWARN, on stderr) when a node does not answer its SMP, e.g.
# "src/query_smp.c:195; umad (DR path slid 0; dlid 0; 0,1,1,31 Attr 0x11:0) bad status 110; Connection
# timed out" (tests/verify/fixtures/real/ibtopotool-3.topo, line 1): the directed route ends at a port whose
# link is up but whose peer is missing from the dump. The header names the node the route starts from.
_DR_FAIL = re.compile(
    r"DR path slid \d{1,5}; dlid \d{1,5}; (\d{1,3}(?:,\d{1,3}){0,63})\b[^)]{0,80}\)(.{0,200})"
)
_INITIATED = re.compile(r"^#\s*Initiated from node ([0-9a-fA-F]{1,16})\b")
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

# The lines as ibnetdiscover prints them (infiniband-diags/ibnetdiscover.c), read in place over the whole
# text: one match reads a port line, another a record's head (its blank lines, vendid/devid/sysimgguid/
# <kind>guid lines and the Switch/Ca line). Each narrows the per-line patterns above to lines they read the
# same way (\s inside a line is [^\S\n]; no whitespace around the line, which the per-line path strips; no
# quote inside a description; width and speed present); every field is bounded, so no line they match is
# longer than MAX_LINE. Any other line takes the per-line path, in its place.
_W0, _W1 = r"[^\S\n]{0,64}", r"[^\S\n]{1,64}"
# The record kinds, one pattern for every reader of the default format (sm_guids.py too): ibnetdiscover
# prints `Ca`, ibsim net files also say `Hca` (generator/rehearse/ibsim.py reads both); a kind one reader
# took and the other skipped made `sm-guids` write an empty cn_guids.conf for a dump verify-cabling read.
NODE_KINDS = "Switch|Ca|Hca|Rt"
KIND_OF_HEADER = {"Switch": "switch", "Ca": "ca", "Hca": "ca", "Rt": "router"}
_FAST_PORT = re.compile(
    rf"\[(\d{{1,3}})\]{_W0}(?:\(([0-9a-fA-F]{{1,16}})\){_W0})?"  # local port, CA port GUID
    rf'"([SHR?])-([^"\n]{{0,256}})"\[(\d{{1,3}})\]{_W0}(?:\(([0-9a-fA-F]{{1,16}})\){_W0})?'  # remote id, port
    rf"#{_W0}(?:lid{_W1}\d{{1,6}}{_W1}lmc{_W1}\d{{1,3}}{_W1})?"  # the comment, as _COMMENT reads it
    rf'"([^"\n]{{0,1024}})"{_W1}lid{_W1}\d{{1,6}}{_W1}(\d{{1,3}}[xX]|\?\?){_W0}([A-Za-z][A-Za-z0-9]{{0,15}}|\?\?\?)$',
    re.M,
)
# empty or blank lines (a CRLF dump ends its lines in \r), each at most MAX_LINE long like any other line.
# Possessive (Python 3.11 re): a line's blanks can only end at its \n, so giving none back matches the same
# run, and the engine keeps no backtracking state per line (8 MiB of empty lines held ~1 GB of it)
BLANK_RUN = re.compile(rf"(?:[^\S\n]{{0,{MAX_LINE}}}+\n)++")
# the leading empty lines a record head may have are bounded: at a long run of them an unbounded \n* took
# the whole run at every line before failing (40,000 empty lines: 45 s)
_FAST_HEAD = re.compile(
    r"(\n{0,8})(?:vendid=0x[0-9a-fA-F]{1,16}\ndevid=0x([0-9a-fA-F]{1,8})\nsysimgguid=0x[0-9a-fA-F]{1,16}\n"
    r"(?:switchguid|caguid|rtguid)=0x([0-9a-fA-F]{1,16})(?:\([0-9a-fA-F]{1,16}\))?\n)?"
    rf'({NODE_KINDS}){_W1}(\d{{1,6}}){_W1}"([SHR?])-([^"\n]{{0,256}})"'
    rf'(?:{_W0}#{_W0}"([^"\n]{{0,1024}})"([^"\n]{{0,1024}}))?(?<!\s)$',
    re.M,
)

_KIND_BY_LETTER = {"S": "switch", "H": "ca", "R": "router", "?": "unknown"}
_KIND_BY_P = {"SW": "switch", "CA": "ca", "RT": "router"}
SHARP_DEVID = 0xCF09  # SHARP Aggregation Node NodeInfo device id (as ibnetdiscover reports it)
SHARP_DESC = "aggregation node"


_HEX_ID = re.compile(r"[0-9a-fA-F]+")


def id_guid(node_id: str) -> int | None:
    """The node GUID a record id (``S-<id>`` without its letter) stands for, one rule for every reader
    (sm_guids.py too, which took only 16 digits and failed a record verify-cabling read): hex digits,
    with or without the leading zeros ibnetdiscover prints (``"%016" PRIx64``, infiniband-diags
    ibnetdiscover.c); None for an id that is a name (ibsim net files, ``S-leaf1``); ValueError past 16
    digits, which no 64-bit GUID has (such an id was taken for a name: a node apart from its GUID's)."""
    if not _HEX_ID.fullmatch(node_id):
        return None
    if len(node_id) > 16:
        raise ValueError(
            f"node id {node_id[:40]!r} is {len(node_id)} hex digits: GUIDs are 64-bit (at most 16)"
        )
    return int(node_id, 16)


def _node_key(b: _Builder, node_id: str, no: int) -> tuple[str, int | None]:
    """``"0x0002c903008f8700"`` for a GUID id, else the raw id; refused (at line ``no``) per id_guid."""
    try:
        guid = id_guid(node_id)
    except ValueError as exc:
        raise DiscoveryError(f"{b.source}:{no}: {exc}") from None
    if guid is not None:
        return f"0x{guid:016x}", guid
    return f"id:{node_id}", None


def is_sharp_node(node: SeenNode) -> bool:
    return node.kind == "ca" and (node.devid == SHARP_DEVID or SHARP_DESC in node.desc.lower())


class _Builder:
    def __init__(self, source: str, fmt: str) -> None:
        self.source = source
        self.fmt = fmt
        self.nodes: dict[str, SeenNode] = {}
        self.links: dict[tuple[tuple[str, int], tuple[str, int]], SeenLink] = {}
        self.peer: dict[tuple[str, int], tuple[str, int]] = {}
        self.warnings: list[str] = []
        self.unsaid = 0  # warnings past MAX_KEPT_WARNINGS, counted, not kept
        self.words: dict[str, str] = {}  # width/speed tokens, one object each (1M links share a few)
        self.ids: dict[str, str] = {}  # a remote node id as printed → its node's key (the node exists)
        # port GUID → (node, port, line) and (node, port) → port GUID: each port GUID names one port and each
        # port has one (IBA: a GUID per port, EUI-64). Filled only for the ends of recorded links, so both
        # are bounded by MAX_SEEN as the links are.
        self.port_of: dict[int, tuple[str, int, int]] = {}
        self.guid_of: dict[tuple[str, int], int] = {}
        self.records = 0  # record headers read (what _format_votes counts for the default format)
        # node GUID → line of its record header: ibnetdiscover prints each node once, so a second record with
        # a node GUID merged two switches into one (their links crossed, verify-cabling read past it). By the
        # GUID, not the node key: a record keyed by a name (`S-leaf6`, ibsim) whose GUID line repeats another
        # record's GUID was read as a node of its own, where sm-guids (keyed by GUID) refused it
        self.headed: dict[int, int] = {}
        self.p_lines = 0  # lines that may be `ibnetdiscover -p` port lines (_format_votes' other count)

    def node(
        self,
        key: str,
        kind: str,
        desc: str,
        guid: int | None,
        nports: int = 0,
        devid: int | None = None,
        header: bool = False,
        line: int = 0,
    ) -> str:
        """Record a node; returns its key as stored (one string object per node, shared by its links)."""
        old = self.nodes.get(key)
        if old is None and len(self.nodes) >= MAX_SEEN:
            raise DiscoveryError(f"{self.source}:{line}: more than {MAX_SEEN:,} nodes: no fabric this large")
        if old is not None:
            key = old.key
        if old is None or header:
            if old is not None and header:
                desc = desc if desc or not old.desc else old.desc
            self.nodes[key] = SeenNode(key, kind, desc, guid, nports, devid)
        return key

    def link(
        self, a: tuple[str, int], b: tuple[str, int], width: str | None, speed: str | None, line: int
    ) -> None:
        peer = self.peer
        known = peer.get(a)
        if known is None:
            peer[a] = b
        elif known != b:
            self._conflict(a, b, known, line)
        known = peer.get(b)
        if known is None:
            peer[b] = a
        elif known != a:
            self._conflict(b, a, known, line)
        key = (a, b) if a <= b else (b, a)
        old = self.links.get(key)
        if old is not None and (old.width is not None or not width):
            return  # the link seen from its other end, with nothing to add
        words = self.words  # width/speed tokens as one object each
        width = words.setdefault(w, w) if width and (w := width.lower()) else None
        speed = None if speed is None else words.setdefault(speed, speed)
        if old is not None:  # the width/speed its first sighting lacked
            self.links[key] = SeenLink(old.a_node, old.a_port, old.b_node, old.b_port, width, speed, old.line)
        elif len(self.links) >= MAX_SEEN:
            raise DiscoveryError(
                f"{self.source}:{line}: more than {MAX_SEEN:,} links: larger than any fabric this tool "
                "plans (generator/limits.py)"
            )
        else:
            self.links[key] = SeenLink(a[0], a[1], b[0], b[1], width, speed, line)

    def port_guid(self, guid_text: str | None, end: tuple[str, int], line: int) -> None:
        """A port GUID the dump prints for ``end`` (a CA's own port line, or a switch's line to it): 0, or one
        that names two ports or differs from what another line says, is refused at its line - `sm-guids`
        wrote such GUIDs into cn_guids.conf and partitions.conf (one port a full member of two tenants'
        partitions), and verify-cabling read past them."""
        if guid_text is None:
            return
        guid = int(guid_text, 16)
        where = f"{self.source}:{line}: port {end[1]} of {end[0]}"
        if guid == 0:
            raise DiscoveryError(f"{where} has port GUID 0, which names no port: not a dump to trust")
        known = self.guid_of.setdefault(end, guid)
        if known != guid:
            raise DiscoveryError(
                f"{where} has port GUID 0x{guid:016x} here and 0x{known:016x} on another line"
            )
        node, port, first = self.port_of.setdefault(guid, (end[0], end[1], line))
        if (node, port) != end:
            raise DiscoveryError(
                f"{where} has port GUID 0x{guid:016x}, which line {first} gives to port {port} of {node}: "
                "a port GUID names one port"
            )

    def warn(self, text: str) -> None:
        """Keep the first MAX_KEPT_WARNINGS warnings and count the rest: a dump of millions of damaged lines
        is not a report of millions of lines (16 MB of stray port lines made 4 million warnings, 1.3 GB)."""
        if len(self.warnings) < MAX_KEPT_WARNINGS:
            self.warnings.append(text)
        else:
            self.unsaid += 1

    def _conflict(self, x: tuple[str, int], y: tuple[str, int], known: tuple[str, int], line: int) -> None:
        self.warn(
            f"{self.source}:{line}: port {x[1]} of {x[0]} is reported connected to "
            f"{y[0]}[{y[1]}] here and to {known[0]}[{known[1]}] elsewhere"
        )

    def result(self) -> IbDiscovery:
        excluded = sorted(k for k, n in self.nodes.items() if is_sharp_node(n))
        drop = set(excluded)
        # in line order already: a link is stored where it is first seen, and a later sighting keeps its place
        links = [ln for ln in self.links.values() if ln.a_node not in drop and ln.b_node not in drop]
        nodes = {k: n for k, n in self.nodes.items() if k not in drop}
        more = [f"{self.source}: {self.unsaid:,} more warnings like these left out"] if self.unsaid else []
        said = self.warnings + more
        return IbDiscovery(self.source, self.fmt, nodes, links, said, excluded, self.guid_of)


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
    lguid: str | None
    remote_letter: str
    remote_id: str
    rport: int
    remote_desc: str | None
    width: str | None
    speed: str | None
    rguid: str | None


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
        lguid=m.group(2),
        remote_letter=m.group(3),
        remote_id=m.group(4),
        rport=int(m.group(5) or 1),
        remote_desc=c.group(1) if c else None,
        width=c.group(3) if c else None,
        speed=c.group(4) if c else None,
        rguid=m.group(6),
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


def _open_record(b: _Builder, record: _Record, header: _Header, no: int) -> None:
    key, guid = _node_key(b, header.node_id, no)
    pending = record.pending_guid
    if guid is not None and pending is not None and guid != pending:
        # sm-guids took the GUID line, verify-cabling the id: each passed what the other refused
        raise DiscoveryError(
            f"{b.source}:{no}: record {header.node_id} follows a GUID line of 0x{pending:016x}: the two "
            "disagree, so which node it is cannot be told"
        )
    guid = guid if guid is not None else pending
    first = b.headed.setdefault(guid, no) if guid is not None else no
    if first != no:
        raise DiscoveryError(
            f"{b.source}:{no}: record {header.node_id} has node GUID 0x{guid:016x}, which the record at line "
            f"{first} has too: a node GUID names one node"
        )
    key = b.node(key, header.kind, header.desc, guid, header.nports, record.pending_devid, True, no)
    record.current, record.current_kind = key, header.kind
    record.pending_guid = record.pending_devid = None
    b.records += 1


def _port_number(b: _Builder, port: int, no: int) -> int:
    if port > MAX_PORT:
        raise DiscoveryError(
            f"{b.source}:{no}: port {port}: InfiniBand port numbers are 8-bit (at most {MAX_PORT})"
        )
    return port


def _add_port(b: _Builder, record: _Record, line: str, no: int) -> None:
    """A port line of the current record: the remote node (as far as the line names it) and the link."""
    port = _port_line(line)
    current = record.current
    if port is None or current is None:
        _unparsed(b, line, no)
        if line.startswith("[") and current is None:
            b.warn(f"{b.source}:{no}: port line outside a node record ignored")
        return
    lport, rport = _port_number(b, port.lport, no), _port_number(b, port.rport, no)
    if _port_zero(b, lport, rport, no):
        return
    rkey, rguid = _node_key(b, port.remote_id, no)
    rkey = b.node(rkey, _KIND_BY_LETTER[port.remote_letter], port.remote_desc or "", rguid, line=no)
    if (current, lport) == (rkey, rport):
        b.warn(f"{b.source}:{no}: port {lport} of {current} is connected to itself")
        return
    b.link((current, lport), (rkey, rport), port.width, port.speed, no)
    b.port_guid(port.lguid, (current, lport), no)
    b.port_guid(port.rguid, (rkey, rport), no)


def _port_zero(b: _Builder, lport: int, rport: int, no: int) -> bool:
    """Whether a link line names port 0, which no cable ends at (a switch's port 0 is its internal management
    port in the IBA; CA ports are numbered from 1): warned and left out, as a port connected to itself is,
    rather than read as a cable of the fabric."""
    if lport and rport:
        return False
    b.warn(f"{b.source}:{no}: a link at port 0, which no cable ends at (a switch's management port): ignored")
    return True


def _unparsed(b: _Builder, line: str, no: int) -> None:
    """A record-looking line that did not parse: refused when it holds a number no field can hold (it would
    otherwise be skipped, and its cable reported missing rather than the dump as damaged)."""
    if not line.startswith(_RECORD_START):
        return
    cut = min((i for i in (line.find("#"), line.find("'")) if i >= 0), default=len(line))
    if _OVERSIZE.search(line, 0, cut):
        raise DiscoveryError(
            f"{b.source}:{no}: a number longer than any ibnetdiscover field (GUIDs are 64-bit, at most 16 "
            f"hex digits; port numbers at most {MAX_PORT})"
        )


def _parse_default(text: str, source: str) -> _Builder:
    """The default format, line by line in order: a line as ibnetdiscover prints it is read by one match in
    place (_FAST_PORT, _FAST_HEAD); any other line, and a port line the fast reading leaves, by _read_line.
    Line numbers are counted as dump_lines counts them; a line longer than MAX_LINE is refused (line_at)."""
    b = _Builder(source, "ibnetdiscover")
    record = _Record()
    unreached: list[tuple[int, list[int], str]] = []
    start: list[str] = []
    port_at, head_at, blanks_at = _FAST_PORT.match, _FAST_HEAD.match, BLANK_RUN.match
    pos, no, end = 0, 0, len(text)
    while pos < end:
        if (m := port_at(text, pos)) is not None and _fast_port(b, record, m, no + 1):
            no, pos = no + 1, m.end() + 1
        elif (m := head_at(text, pos)) is not None:
            no = _fast_head(b, record, m, no)
            pos = m.end() + 1
        elif (m := blanks_at(text, pos)) is not None:  # blank lines say nothing: a run of them in one step
            no, pos = no + text.count("\n", pos, m.end()), m.end()
        else:
            no += 1
            line, pos = line_at(text, pos, source, no)
            _read_line(b, record, line.strip(), no, unreached, start)
    for no, route, why in unreached:
        b.warn(_unreached_warning(b, start, no, route, why))
    return b


def _fast_port(b: _Builder, record: _Record, m: re.Match[str], no: int) -> bool:
    """A port line _FAST_PORT matched, as _add_port reads it; False leaves it to _add_port (a line outside a
    record, or a port number above MAX_PORT: the warning or the refusal is said there)."""
    current = record.current
    lport_text, lguid, letter, remote_id, rport_text, rguid, desc, width, speed = m.groups()
    lport, rport = int(lport_text), int(rport_text)
    if current is None or not 0 < lport <= MAX_PORT or not 0 < rport <= MAX_PORT:
        return False
    rkey = b.ids.get(remote_id)
    if rkey is None:
        key, guid = _node_key(b, remote_id, no)
        rkey = b.ids[remote_id] = b.node(key, _KIND_BY_LETTER[letter], desc, guid, line=no)
    if current == rkey and lport == rport:
        b.warn(f"{b.source}:{no}: port {lport} of {current} is connected to itself")
    else:
        b.link((current, lport), (rkey, rport), width, speed, no)
        b.port_guid(lguid, (current, lport), no)
        b.port_guid(rguid, (rkey, rport), no)
    return True


def _fast_head(b: _Builder, record: _Record, m: re.Match[str], no: int) -> int:
    """A record head _FAST_HEAD matched, as its lines read one by one (vendid ends the open record, devid and
    the node GUID wait for the header, sysimgguid is skipped); returns the header's line number."""
    blank, devid, guid, kind, nports, _letter, node_id, desc, _tail = m.groups()
    no += len(blank) + 1
    if devid is not None:
        record.close()
        record.pending_devid, record.pending_guid = int(devid, 16), int(guid, 16)
        no += 4
    header = _Header(KIND_OF_HEADER[kind], int(nports), node_id, desc or "")
    _open_record(b, record, header, no)
    return no


def _read_line(
    b: _Builder,
    record: _Record,
    line: str,
    no: int,
    unreached: list[tuple[int, list[int], str]],
    start: list[str],
) -> None:
    """One stripped line of the default format, whatever it holds."""
    if not line or _read_ids(record, line):
        return
    if (header := _header(line)) is not None:
        _open_record(b, record, header, no)
    elif line.startswith(("[", "@")):
        _add_port(b, record, line, no)
    else:
        b.p_lines += line.startswith(("SW", "CA", "RT"))
        _note_unreached(line, no, unreached, start)
        _unparsed(b, line, no)
        if record.current_kind and not line.startswith("#"):
            record.close()  # any other line ends a record (ibsim does the same)


def _note_unreached(
    line: str, no: int, unreached: list[tuple[int, list[int], str]], start: list[str]
) -> None:
    """Keep a failed directed route (stderr noise in the dump) and the node the discovery started from."""
    if m := _INITIATED.match(line):
        start.append(f"0x{int(m.group(1), 16):016x}")
    elif m := _DR_FAIL.search(line):
        why = m.group(2).strip(" ;") or "no answer"
        unreached.append((no, [int(p) for p in m.group(1).split(",")], why))


def _unreached_warning(b: _Builder, start: list[str], no: int, route: list[int], why: str) -> str:
    """The port a failed directed route ends at, followed from the start node over the dump's links."""
    node: str | None = start[0] if start else None
    for port in route[1:-1]:
        hop = b.peer.get((node, port)) if node is not None else None
        node = hop[0] if hop is not None else None
    text = f"DR path {','.join(map(str, route))}"
    if node is not None and len(route) > 1:
        seen = b.nodes.get(node)
        desc = f' "{seen.desc}"' if seen is not None and seen.desc else ""
        text = f"port {route[-1]} of {node}{desc} ({text})"
    return (
        f"{b.source}:{no}: ibnetdiscover got no answer through {text}: {why}; whatever is cabled there is "
        "not in the dump"
    )


def _parse_ports(text: str, source: str) -> IbDiscovery:
    b = _Builder(source, "ibnetdiscover -p")
    for no, raw in dump_lines(text, source):
        line = raw.strip()
        m = _p_link(line)
        if not m:
            if free := _P_FREE.match(line):  # an unconnected port still names its node
                guid = int(free.group(3), 16)
                b.node(f"0x{guid:016x}", _KIND_BY_P[free.group(1)], free.group(4), guid, line=no)
            else:
                _unparsed(b, line, no)
            continue
        lport, rport = _port_number(b, int(m.group(3)), no), _port_number(b, int(m.group(9)), no)
        if _port_zero(b, lport, rport, no):
            continue
        lguid, rguid = int(m.group(4), 16), int(m.group(10), 16)
        if not lguid or not rguid:  # the port GUIDs the nodes are keyed by: 0 names no port
            raise DiscoveryError(f"{source}:{no}: port GUID 0, which names no port: not a dump to trust")
        lkey = b.node(f"0x{lguid:016x}", _KIND_BY_P[m.group(1)], m.group(11), lguid, header=True, line=no)
        rkey = b.node(f"0x{rguid:016x}", _KIND_BY_P[m.group(7)], m.group(12), rguid, line=no)
        if (lkey, lport) == (rkey, rport):  # as the default format's reader does: no cable, a damaged line
            b.warn(f"{b.source}:{no}: port {lport} of {lkey} is connected to itself")
            continue
        b.link((lkey, lport), (rkey, rport), m.group(5), m.group(6), no)
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


def dump_lines(text: str, source: str) -> Iterator[tuple[int, str]]:
    """(line number, line) one at a time: a list of every line of a 64 MB dump of 2-byte lines would
    take ~2 GB of string objects."""
    pos, no, end = 0, 0, len(text)
    while pos < end:
        no += 1
        line, pos = line_at(text, pos, source, no)
        yield no, line


def line_at(text: str, pos: int, source: str, no: int) -> tuple[str, int]:
    """Line ``no``, which starts at ``pos``, and where the next one starts. A line longer than MAX_LINE is
    refused before it is sliced."""
    end = text.find("\n", pos)
    end = len(text) if end < 0 else end
    if end - pos > MAX_LINE:
        raise DiscoveryError(f"{source}:{no}: line of {end - pos:,} characters; the limit is {MAX_LINE:,}")
    return text[pos:end], end + 1


def _format_votes(text: str, source: str) -> tuple[int, int]:
    """(default-format record headers, ``-p`` port lines): which of the two formats the dump is in. Only
    the lines that can vote are visited (a Python step per line took 13 s over 8 MiB of empty lines); the
    first line past MAX_LINE is refused as dump_lines refuses it."""
    if (long := _LONG_LINE.search(text)) is not None:
        start = text.rfind("\n", 0, long.start()) + 1
        line_at(text, start, source, text.count("\n", 0, start) + 1)  # raises, located
    default_hits = port_hits = 0
    for m in _VOTER.finditer(text):
        line = m.group().strip()
        if line.startswith(("Switch", "Ca", "Hca", "Rt")):
            default_hits += _header(line) is not None
        elif line.startswith(("SW", "CA", "RT")):
            port_hits += bool(_p_link(line) or _P_FREE.match(line))
    return default_hits, port_hits


_LONG_LINE = re.compile(rf"^[^\n]{{{MAX_LINE + 1}}}", re.M)  # anchored: unanchored it rescanned each line
_VOTER = re.compile(r"^[^\S\n]*(?:Switch|Ca|Hca|Rt|SW|CA|RT)[^\n]*", re.M)


def parse_ibnetdiscover(text: str, source: str = "<ibnetdiscover>") -> IbDiscovery:
    """Parse a dump in the default or the ``-p`` format (detected from its lines)."""
    try:
        b: _Builder | None = _parse_default(text, source)
    except DiscoveryError:
        b = None  # a refused line: which refusal comes first is the votes' pass to say, below
    if b is not None and b.records and not b.p_lines:
        return b.result()  # the votes would be (its records, 0): the default format, as read
    default_hits, port_hits = _format_votes(text, source)
    if not default_hits and not port_hits:
        raise DiscoveryError(
            f"{source}: no ibnetdiscover records found (expected `Switch`/`Ca` records or "
            "`ibnetdiscover -p` port lines)"
        )
    if port_hits > default_hits:
        return _parse_ports(text, source)
    return (b if b is not None else _parse_default(text, source)).result()


def read_ibnetdiscover(path: str | Path, budget: ByteBudget | None = None) -> IbDiscovery:
    """A dump file: regular, at most MAX_DUMP_BYTES (charged to ``budget``). Not required to be UTF-8: a
    NodeDescription is 64 raw bytes (IBA NodeDescription attribute) that ibnetdiscover prints as they are,
    so undecodable bytes are replaced (and every output path strips control characters)."""
    try:
        data = read_foreign(path, MAX_DUMP_BYTES, budget)
    except ForeignInputError as exc:
        raise DiscoveryError(str(exc)) from None
    if b"\0" in data[:4096]:
        raise DiscoveryError(
            f"{path}: binary file (an `ibnetdiscover --cache` file? print it with "
            "`ibnetdiscover --load-cache FILE`)"
        )
    text = data.decode("utf-8", errors="replace")
    del data  # not kept beside its text through the parse (a 100k-GPU dump is ~60 MB)
    return parse_ibnetdiscover(text, str(path))
