"""OpenSM ftree GUID files from a discovered fabric (``ibnetdiscover`` default format) plus the plan.

``root_guid_file`` holds the node GUIDs of the top tier (spines of a 2-tier fat-tree, cores of a
3-tier one), ``cn_guid_file`` the port GUIDs of the compute nodes' HCA ports (opensm(8): "-a ... root
nodes ... (one to a line)", "-u ... compute nodes ... to the port GUIDs provided in the given file (one
to a line)"). Devices are tied to the plan by NodeDescription (switch name; ``<host> <rdma device>`` for
HCAs, what rdma-ndd sets), so the tiers come from the plan, not from OpenSM's guess - also when a
switch is down at the first sweep. ``check_roots`` rejects a root file listing anything but top-tier
switches (a leaf as root makes ftree rank the fabric upside down) before OpenSM sees it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from generator.gcpause import gc_paused
from generator.plan.model import Plan
from generator.verify.ibnetdiscover import (
    BLANK_RUN,
    KIND_OF_HEADER,
    MAX_PORT,
    NODE_KINDS,
    id_guid,
    line_at,
)
from generator.verify.identify import IbFound, NodeNameMap, PlanIndex, ib_found_links, name_map_warnings
from generator.verify.model import others_named, problems_text
from generator.verify.trust import PortClaim, Trust, trusted_claims

# numbers are captured whole and then checked, so a 41-digit GUID or a 5,000-digit port is refused at its
# line instead of skipped (or handed to int()): GUIDs are 64-bit (IBA NodeInfo:NodeGUID), ports 8-bit
_GUID_LINE = re.compile(r"^(switchguid|caguid|rtguid)=0x([0-9a-fA-F]+)")
_NODE = re.compile(rf'^({NODE_KINDS})\s+\d+\s+"([^"]+)"\s*(?:#\s*"([^"]*)")?')
# `[lport](lguid) "S-<remote id>"[rport](rguid)`: every port line of either record kind (the GUIDs optional)
_PORT_LINE = re.compile(
    r'^\[(\d+)\](?:\(([0-9a-fA-F]+)\))?\s*"[SHR?]-([^"]*)"(?:\[(\d+)\])?(?:\(([0-9a-fA-F]+)\))?'
)
# a GUID file's line as OpenSM's parse_node_map reads it (below): blanks, a number strtoull(p, &e, 0) takes
# whole, then a blank, a `#` or the end (text after the number, such as a name, is allowed)
_FILE_NUMBER = re.compile(r"[ \t\v\f\r]*(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)(?=[ \t\v\f\r#]|$)")
# Read in one match where ibnetdiscover printed them (generator/verify/ibnetdiscover.py does the same for
# verify-cabling): a record's head (blank lines; vendid/devid/sysimgguid, which parse_nodes skips; the node
# GUID; the record's own line), and a run of a switch's port lines, which parse_nodes only checks, so a run
# holds only numbers that pass (ports of at most 3 digits and 255, GUIDs of at most 16 hex digits). Each
# narrows the per-line patterns above (\s inside a line is [^\S\n]); every field is bounded, so no line they
# match is longer than MAX_LINE. Any other line takes the per-line path.
_W0, _W1 = r"[^\S\n]{0,64}", r"[^\S\n]{1,64}"
# The empty lines before a head are bounded, as ibnetdiscover._FAST_HEAD bounds them, and a longer run is
# read in one step (BLANK_RUN): an unbounded \n* took the rest of a run at every line of it before failing
# (a dump then 30,000 empty lines: 87 s)
_FAST_NODE = re.compile(
    r"(\n{0,8})(?:vendid=0x[0-9a-fA-F]{1,16}\ndevid=0x[0-9a-fA-F]{1,16}\nsysimgguid=0x[0-9a-fA-F]{1,16}\n"
    r"(?:switchguid|caguid|rtguid)=0x([0-9a-fA-F]{1,16})(?![0-9a-fA-F])[^\n]{0,64}\n)?"
    rf'({NODE_KINDS}){_W1}\d{{1,6}}{_W1}"([^"\n]{{1,256}})"{_W0}(?:#{_W0}"([^"\n]{{0,1024}})")?[^\n]{{0,1024}}$',
    re.M,
)
_P = r"(?:[01]?\d?\d|2[0-4]\d|25[0-5])"  # a port number _port takes
_SWITCH_PORTS = re.compile(
    rf'(?:\[{_P}\](?:\([0-9a-fA-F]{{1,16}}\))?{_W0}"[SHR?]-[^"\n]{{0,256}}"\[{_P}\]'
    rf"(?:\([0-9a-fA-F]{{1,16}}\)|(?!\([0-9a-fA-F]+\)))[^\n]{{0,2048}}\n)+"
)


class GuidError(ValueError):
    """Unusable discovery or a root file that would mislead ftree (message is located)."""


class DumpError(GuidError):
    """The dump itself cannot be read as ibnetdiscover output (located): unusable input, exit 2 also when
    it is read to check a root file (`--check-roots`, whose own findings exit 1)."""


@dataclass(frozen=True)
class DiscoveredNode:
    kind: str  # switch | ca
    guid: int
    desc: str
    ports: dict[int, int] = field(default_factory=dict)  # CA: port number → port GUID
    line: int = 0
    peers: dict[int, tuple[int, int]] = field(default_factory=dict)  # CA port → (switch GUID, its port)
    port_lines: dict[int, int] = field(default_factory=dict)  # CA port → line of its port line


def _guid(text: str, source: str, no: int) -> int:
    if len(text) > 16:
        raise DumpError(f"{source}:{no}: a GUID of {len(text)} hex digits: GUIDs are 64-bit (at most 16)")
    return int(text, 16)


def _port(text: str, source: str, no: int) -> int:
    if len(text) > 3 or int(text) > MAX_PORT:
        raise DumpError(
            f"{source}:{no}: port {text[:12]}: InfiniBand port numbers are 8-bit (at most {MAX_PORT})"
        )
    return int(text)


@dataclass(frozen=True)
class GuidFiles:
    roots: tuple[tuple[int, str], ...]  # (node GUID, plan switch)
    cns: tuple[tuple[int, str], ...]  # (port GUID, "host mlx5_N")
    pool_ports: dict[str, tuple[int, ...]]  # pool → its HCA port GUIDs (for partitions)
    missing: tuple[str, ...]  # planned top-tier switches / compute ports not discovered
    needs_roots: bool = True  # False: the plan has no top tier (not a fat-tree; its engine takes no roots)
    cn_nodes: tuple[tuple[int, str], ...] = ()  # (node GUID, "host mlx5_N") of the HCAs of ``cns``

    def node_name_map(self) -> str:
        """``0x<node guid> "name"`` lines (ibnetdiscover/opensm --node-name-map format). Keyed by node GUID,
        as the tools look names up (infiniband-diags ibnetdiscover.c: ``remap_node_name(node_name_map,
        node->guid, node->nodedesc)``; verify-cabling too, identify.py); the HCAs were keyed by port GUID,
        which none of them looks up. sm-guids reads either back (trust.identity_problem takes a port or a
        node GUID), so a map written before still works with ``--node-name-map``."""
        rows = sorted({*self.roots, *self.cn_nodes})
        return "".join(f'0x{g:016x} "{name}"\n' for g, name in rows)


class _Reading:
    """Where parse_nodes is: the nodes read, the node GUID line waiting for its header, the open record."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.nodes: list[DiscoveredNode] = []
        self.pending: int | None = None
        self.current: DiscoveredNode | None = None
        self.first: dict[int, int] = {}  # node GUID → line of its record (bounded as nodes is)

    def open(self, kind: str, node_id: str, desc: str | None, no: int) -> None:
        self.current = _node(kind, node_id, desc, self.pending, self.source, no)
        first = self.first.setdefault(self.current.guid, no)
        if first != no:  # the shared reader's refusal (ibnetdiscover._open_record), in the same words
            raise DumpError(
                f"{self.source}:{no}: record {node_id} has node GUID 0x{self.current.guid:016x}, which the "
                f"record at line {first} has too: a node GUID names one node"
            )
        self.nodes.append(self.current)
        self.pending = None


def parse_nodes(text: str, source: str) -> list[DiscoveredNode]:
    """The dump's records (NODE_KINDS), line by line in order: what ibnetdiscover prints read in place by one
    match (_FAST_NODE, _SWITCH_PORTS), any other line by _node_line."""
    r = _Reading(source)
    pos, no, end = 0, 0, len(text)
    while pos < end:
        if r.current is not None and r.current.kind != "ca" and (m := _SWITCH_PORTS.match(text, pos)):
            no += text.count("\n", pos, m.end())
            pos = m.end()
        elif m := _FAST_NODE.match(text, pos):
            blank, guid, kind, node_id, desc = m.groups()
            no += len(blank) + 1
            if guid is not None:
                r.pending, no = int(guid, 16), no + 4
            r.open(kind, node_id, desc, no)
            pos = m.end() + 1
        elif m := BLANK_RUN.match(text, pos):  # blank lines say nothing: a run of them in one step
            no, pos = no + text.count("\n", pos, m.end()), m.end()
        else:
            no += 1
            line, pos = line_at(text, pos, source, no)
            _node_line(r, line.strip(), no)
    if not r.nodes:
        raise DumpError(f"{source}: no Switch/Ca records: not ibnetdiscover output in its default format")
    return r.nodes


def _node_line(r: _Reading, line: str, no: int) -> None:
    if line[:1] == "[":  # a port line (what the two other patterns never match)
        if r.current is not None and (m := _PORT_LINE.match(line)):
            _port_line(r.current, m, r.source, no)
    elif m := _GUID_LINE.match(line):
        r.pending = _guid(m.group(2), r.source, no)
    elif m := _NODE.match(line):
        r.open(m.group(1), m.group(2), m.group(3), no)


def _port_line(current: DiscoveredNode, m: re.Match[str], source: str, no: int) -> None:
    """Check a port line's numbers (either record kind); a CA's port GUID and the switch port it is on."""
    port_text, lguid_text, remote, rport_text, rguid_text = m.groups()
    port = _port(port_text, source, no)
    rport = _port(rport_text or "1", source, no)
    lguid = _guid(lguid_text, source, no) if lguid_text else None
    if rguid_text:
        _guid(rguid_text, source, no)
    if current.kind != "ca" or lguid is None:
        return
    current.ports[port] = lguid
    current.port_lines[port] = no
    peer = _id_guid(remote, source, no)
    if peer is not None:
        current.peers[port] = (peer, rport)


def _node(
    kind_text: str, node_id: str, desc: str | None, pending: int | None, source: str, no: int
) -> DiscoveredNode:
    kind = KIND_OF_HEADER[kind_text]
    from_id = _id_guid(node_id[2:], source, no) if node_id[:2] in ("S-", "H-", "R-") else None
    if from_id is not None and pending is not None and from_id != pending:
        # verify-cabling keys the node by its id, this file by the GUID line: one dump, two fabrics
        raise DumpError(
            f"{source}:{no}: record {node_id} follows a GUID line of 0x{pending:016x}: the two disagree, "
            "so which node it is cannot be told"
        )
    guid = pending if pending is not None else from_id
    if guid is None:
        raise DumpError(f"{source}:{no}: node without a GUID (use ibnetdiscover's default format)")
    return DiscoveredNode(kind, guid, (desc or "").strip(), {}, no)


def _id_guid(node_id: str, source: str, no: int) -> int | None:
    """A node id's GUID by the rule verify-cabling reads it by (ibnetdiscover.id_guid), refused located."""
    try:
        return id_guid(node_id)
    except ValueError as exc:
        raise DumpError(f"{source}:{no}: {exc}") from None


def top_tier(plan: Plan, fabric: str) -> set[str]:
    """Plan switches ftree must treat as roots: the highest tier present (core > spine)."""
    roles = {d.role for d in plan.switches(fabric)}
    top = "core" if "core" in roles else "spine"
    return {d.name for d in plan.switches(fabric) if d.role == top}


def _planned_peers(plan: Plan, fabric: str) -> dict[tuple[str, str, int], tuple[str, str, str]]:
    """(host, rdma device, port) → (pool, switch, switch port), for every node port cabled into ``fabric``."""
    devices = plan.device_by_name
    out: dict[tuple[str, str, int], tuple[str, str, str]] = {}
    for link in plan.links_of(fabric):
        for ep, other in ((link.a, link.b), (link.b, link.a)):
            d = devices[ep.device]
            if d.kind == "node" and d.pool is not None:
                rdma, _, port = ep.port.partition("/")
                out[(d.name, rdma, int(port or 1))] = (d.pool, other.device, other.port)
    return out


class MissingRootsError(GuidError):
    """A top-tier switch of the plan is not in the dump: OpenSM would rank the fabric from the others."""


class MissingPortsError(GuidError):
    """A GPU pool cabled into the fabric has none of its ports in the dump: its cn_guids.conf lines and its
    partitions' members would be empty."""


def _identified(
    plan: Plan, fabric: str, text: str, source: str, name_map: NodeNameMap | None
) -> tuple[IbFound, list[str]]:
    """The dump's nodes tied to the plan the way verify-cabling ties them (generator/verify/identify.py), and
    what it says of the map (name_map_warnings)."""
    from generator.verify.ibnetdiscover import parse_ibnetdiscover

    disc, index = parse_ibnetdiscover(text, source), PlanIndex(plan, fabric)
    found = ib_found_links(disc, index, name_map.names if name_map else {}, with_ends=True)
    return found, name_map_warnings(disc, index, name_map, found.identity) if name_map else []


def identified_switches(
    nodes: list[DiscoveredNode], found: IbFound, source: str, recorded: dict[int, str]
) -> dict[int, str]:
    """Switch GUID → plan switch name; a plan switch name claimed by two switches, or by one the site
    recorded otherwise, is a located error."""
    claimed: dict[str, list[DiscoveredNode]] = {}
    # a name two switches claim identifies neither of them (identify.py): still refused here by that name
    twice = {key: name for name, keys in found.duplicates.items() for key in keys}
    for n in nodes:
        key = f"0x{n.guid:016x}"
        ident = found.identity.get(key)
        name = twice.get(key) or (ident.device if ident is not None else None)
        if n.kind == "switch" and name is not None:
            claimed.setdefault(name, []).append(n)
    problems = [
        f"{source}:{n.line}: switch 0x{n.guid:016x} claims {name!r}, "
        + (
            f"as do the switches at lines {others_named(group, n, lambda o: str(o.line))}"
            if len(group) > 1
            else "which the site recorded for another GUID"
        )
        for name, group in claimed.items()
        for n in group
        if len(group) > 1 or (recorded and n.guid not in recorded and name in recorded.values())
    ]
    if problems:
        raise GuidError(problems_text(problems))
    return {group[0].guid: name for name, group in claimed.items()}


def _claims(
    nodes: list[DiscoveredNode], found: IbFound, planned: set[tuple[str, str, int]], source: str
) -> list[PortClaim]:
    """Every discovered HCA port identified as a port the plan cables into this fabric, whatever its
    description says (``host mlx5_N``, ``host HCA-N``, firmware default: identify.py reads them all)."""
    out: list[PortClaim] = []
    for n in nodes:
        ident = found.identity.get(f"0x{n.guid:016x}")
        if n.kind != "ca" or ident is None:
            continue
        for port, pguid in n.ports.items():
            end = found.ends.get((f"0x{n.guid:016x}", port))
            if end is None or not end.known or end.kind != "node":
                continue
            rdma, _, num = end.port.partition("/")
            key = (end.device, rdma, int(num) if num.isdigit() else port)
            if key in planned:
                where = f"{source}:{n.port_lines.get(port, n.line)}"
                out.append(PortClaim(*key, n.guid, pguid, n.peers.get(port), where, ident.how))
    return out


def guid_files(
    plan: Plan,
    fabric: str,
    text: str,
    source: str,
    name_map: NodeNameMap | None = None,
    *,
    accept_missing_roots: bool = False,
    warnings: list[str] | None = None,
) -> GuidFiles:
    """The GUID files; IdentityError (located) when a discovered device claims a plan name it may not,
    MissingRootsError when a top-tier switch is not discovered (unless ``accept_missing_roots``). What the
    map's reading says (verify-cabling's words) is added to ``warnings`` before any refusal: a typo in the
    map may be why."""
    recorded = name_map.names if name_map else {}
    with gc_paused():
        nodes = parse_nodes(text, source)
        found, said = _identified(plan, fabric, text, source, name_map)
    if warnings is not None:
        warnings += said
    roots_wanted = top_tier(plan, fabric)
    gpu_pools = {p.name for p in plan.cluster.pools if p.role == "gpu"}
    planned = _planned_peers(plan, fabric)
    switches = identified_switches(nodes, found, source, recorded)
    trust = Trust({k: (sw, port) for k, (_pool, sw, port) in planned.items()}, switches, recorded)
    claims = trusted_claims(_claims(nodes, found, set(planned), source), trust)
    roots = sorted((g, name) for g, name in switches.items() if name in roots_wanted)
    _check_roots_found(roots_wanted, roots, source, accept_missing_roots)
    _check_pools_found(planned, gpu_pools, claims, source)
    gpu_claims = [c for c in claims if planned[(c.host, c.rdma, c.port)][0] in gpu_pools]
    cns = sorted((c.port_guid, c.name) for c in gpu_claims)
    pool_ports: dict[str, list[int]] = {}
    for c in claims:
        pool_ports.setdefault(planned[(c.host, c.rdma, c.port)][0], []).append(c.port_guid)
    seen = {name for _, name in roots} | {(c.host, c.rdma, c.port) for c in claims}
    missing = sorted(s for s in roots_wanted if s not in seen)
    missing += sorted(f"{h} {r}/{p}" for (h, r, p) in planned if (h, r, p) not in seen)
    return GuidFiles(
        tuple(roots),
        tuple(cns),
        {k: tuple(sorted(set(v))) for k, v in sorted(pool_ports.items())},
        tuple(missing),
        needs_roots=bool(roots_wanted),
        cn_nodes=tuple(sorted({(c.node_guid, c.name) for c in gpu_claims})),
    )


def _check_roots_found(
    wanted: set[str], roots: list[tuple[int, str]], source: str, accept_missing: bool
) -> None:
    """Every top-tier switch of the plan must be in the dump: with one missing, OpenSM's ftree ranks the
    fabric from a partial root list (a spine down at discovery ends up below the leaves)."""
    found = {name for _, name in roots}
    absent = sorted(wanted - found)
    if not absent or (accept_missing and found):
        return
    shown = ", ".join(absent[:8]) + (f" and {len(absent) - 8} more" if len(absent) > 8 else "")
    advice = (
        "no root file can be written without any (are the switches up and their descriptions set?)"
        if not found
        else "bring them up and discover again, or give --accept-missing-roots to write the "
        f"{len(found)} found (OpenSM then roots the fabric at those only)"
    )
    raise MissingRootsError(
        f"{source}: {len(absent)} of the {len(wanted)} top-tier switches of the plan are not in the dump "
        f"({shown}): {advice}"
    )


def _check_pools_found(
    planned: dict[tuple[str, str, int], tuple[str, str, str]],
    gpu_pools: set[str],
    claims: list[PortClaim],
    source: str,
) -> None:
    """Every GPU pool cabled into the fabric must have a port in the dump: with none, cn_guids.conf lacks the
    whole pool and its partitions have no members (OpenSM then keeps its hosts out of them), while a few
    missing ports are only reported (GuidFiles.missing)."""
    wanted: dict[str, int] = {}
    for pool, _switch, _port in planned.values():
        if pool in gpu_pools:
            wanted[pool] = wanted.get(pool, 0) + 1
    found = {planned[(c.host, c.rdma, c.port)][0] for c in claims}
    empty = sorted(p for p in wanted if p not in found)
    if empty:
        said = "; ".join(f"GPU pool {p}: none of its {wanted[p]} planned ports" for p in empty)
        raise MissingPortsError(
            f"{source}: {said} identified in the dump: are the HCAs' node descriptions set (`<host> "
            "mlx5_N`, rdma-ndd) and is the dump of this fabric? No GUID file was written"
        )


def render_guids(entries: tuple[tuple[int, str], ...]) -> str:
    """One GUID per line and nothing else (opensm(8), "Notes on the guid list file")."""
    return "".join(f"0x{g:016x}\n" for g, _ in entries)


def _c_number(token: str) -> int:
    """A GUID file's number (a _FILE_NUMBER match) as OpenSM reads it: ``strtoull(p, &e, 0)`` in
    ``parse_node_map``, which ftree reads its root file with (linux-rdma/opensm osm_ucast_ftree.c: "cannot
    parse root guids file"; the complib node name map code): 0x hex, a leading 0 octal, else decimal, and
    past 64 bits ULLONG_MAX (strtoull saturates; parse_node_map does not look at errno)."""
    if token[:2].lower() == "0x":
        value = int(token, 16)
    elif len(token) > 1 and token.startswith("0"):
        value = int(token, 8)
    else:
        value = int(token, 10)
    return min(value, (1 << 64) - 1)


@dataclass
class _RootCheck:
    """What a root file's lines are checked against: the discovered nodes by GUID (a CA's port GUIDs too:
    OpenSM roots such a CA's leaf switch, opensm(8) guid list file note 2), their plan names, the top tier."""

    plan: Plan
    by_guid: dict[int, Any]
    identity: dict[str, Any]
    top: set[str]
    source: str
    listed: dict[str, int] = field(default_factory=dict)

    def problem(self, no: int, line: str) -> str | None:
        """Why line ``no`` is not one more top-tier switch of the plan (None: it is, and is recorded)."""
        if line.lstrip(" \t\v\f\r").startswith("#"):  # a comment line: parse_node_map skips it
            return None
        m = _FILE_NUMBER.match(line)
        if m is None:  # parse_node_map returns -1 and ftree logs "cannot parse root guids file"
            return f"`{line.strip()}` is not a GUID: OpenSM refuses the whole file at it"[:300]
        guid = _c_number(m.group(1))
        node = self.by_guid.get(guid)
        if node is None:
            return f"0x{guid:016x} is not in the discovered fabric ({self.source})"
        ident = self.identity.get(f"0x{node.guid:016x}")
        name = (ident.device if ident is not None and node.kind == "switch" else None) or node.desc
        if node.kind != "switch":
            return f"0x{guid:016x} is a CA ({name}): OpenSM would make its leaf a root"
        if name not in self.top:
            devices = self.plan.device_by_name
            role = devices[name].role if name in devices else "not in the plan"
            return (
                f"0x{guid:016x} is {name} ({role}); ftree roots must be the top tier "
                f"({len(self.top)} switches, e.g. {min(self.top)})"
            )
        self.listed.setdefault(name, no)  # a switch listed twice names the same root: not refused
        return None


def check_roots(
    plan: Plan,
    fabric: str,
    text: str,
    source: str,
    roots_text: str,
    roots_source: str,
    accept_missing: bool = False,
) -> None:
    """Raise a located GuidError if ``roots_text`` lists a GUID that is not a top-tier switch of the plan, or
    (unless ``accept_missing``) leaves one out: the same completeness the written root file is held to
    (``_check_roots_found``: ftree ranks the fabric from a partial root list)."""
    nodes = parse_nodes(text, source)
    found, _ = _identified(plan, fabric, text, source, None)
    by_guid = {n.guid: n for n in nodes}
    by_guid.update({g: n for n in nodes if n.kind == "ca" for g in n.ports.values()})
    top = top_tier(plan, fabric)
    if not top:  # a hypercube, torus or dragonfly: min(top) of nothing was an internal error (exit 3)
        raise GuidError(
            f"{roots_source}: the plan's `{fabric}` fabric has no top tier: ftree roots do not fit"
        )
    check = _RootCheck(plan, by_guid, found.identity, top, source)
    problems: list[str] = []
    # numbered at LF only, as OpenSM reads the file (fgets); str.splitlines() also breaks at VT, FF, NEL…
    for no, line in enumerate(roots_text.split("\n"), 1):
        said = check.problem(no, line) if line.strip() else None
        if said is not None:
            problems.append(f"{roots_source}:{no}: {said}")
    absent = sorted(top - set(check.listed))
    if absent and not (accept_missing and check.listed):
        shown = ", ".join(absent[:8]) + (f" and {len(absent) - 8} more" if len(absent) > 8 else "")
        problems.append(
            f"{roots_source}: {len(absent)} of the {len(top)} top-tier switches are not listed ({shown}): "
            "ftree ranks the fabric from a partial root list (--accept-missing-roots takes it as it is)"
        )
    if problems:
        raise GuidError("\n".join(problems))
