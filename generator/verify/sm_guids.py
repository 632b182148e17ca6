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

from generator.plan.model import Plan

_GUID_LINE = re.compile(r"^(switchguid|caguid|rtguid)=0x([0-9a-fA-F]+)")
_NODE = re.compile(r'^(Switch|Ca|Rt)\s+\d+\s+"([^"]+)"\s*(?:#\s*"([^"]*)")?')
_CA_PORT = re.compile(r"^\[(\d+)\]\(([0-9a-fA-F]+)\)")
_ID_GUID = re.compile(r"^[SHR]-([0-9a-fA-F]{16})$")
_FILE_GUID = re.compile(r"^\s*(0x[0-9a-fA-F]+|\d+)\s*$")


class GuidError(ValueError):
    """Unusable discovery or a root file that would mislead ftree (message is located)."""


@dataclass(frozen=True)
class DiscoveredNode:
    kind: str  # switch | ca
    guid: int
    desc: str
    ports: dict[int, int] = field(default_factory=dict)  # CA: port number → port GUID
    line: int = 0


@dataclass(frozen=True)
class GuidFiles:
    roots: tuple[tuple[int, str], ...]  # (node GUID, plan switch)
    cns: tuple[tuple[int, str], ...]  # (port GUID, "host mlx5_N")
    pool_ports: dict[str, tuple[int, ...]]  # pool → its HCA port GUIDs (for partitions)
    missing: tuple[str, ...]  # planned top-tier switches / compute ports not discovered

    def node_name_map(self) -> str:
        """``0x<guid> "name"`` lines (ibnetdiscover/opensm --node-name-map format)."""
        rows = sorted({*self.roots, *self.cns})
        return "".join(f'0x{g:016x} "{name}"\n' for g, name in rows)


def parse_nodes(text: str, source: str) -> list[DiscoveredNode]:
    nodes: list[DiscoveredNode] = []
    pending: int | None = None
    current: DiscoveredNode | None = None
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if m := _GUID_LINE.match(line):
            pending = int(m.group(2), 16)
            continue
        if m := _NODE.match(line):
            kind = {"Switch": "switch", "Ca": "ca", "Rt": "router"}[m.group(1)]
            guid = pending
            if guid is None and (g := _ID_GUID.match(m.group(2))):
                guid = int(g.group(1), 16)
            if guid is None:
                raise GuidError(f"{source}:{no}: node without a GUID (use ibnetdiscover's default format)")
            current = DiscoveredNode(kind, guid, (m.group(3) or "").strip(), {}, no)
            nodes.append(current)
            pending = None
            continue
        if current is not None and current.kind == "ca" and (m := _CA_PORT.match(line)):
            current.ports[int(m.group(1))] = int(m.group(2), 16)
    if not nodes:
        raise GuidError(f"{source}: no Switch/Ca records: not ibnetdiscover output in its default format")
    return nodes


def top_tier(plan: Plan, fabric: str) -> set[str]:
    """Plan switches ftree must treat as roots: the highest tier present (core > spine)."""
    roles = {d.role for d in plan.switches(fabric)}
    top = "core" if "core" in roles else "spine"
    return {d.name for d in plan.switches(fabric) if d.role == top}


def _planned_ports(plan: Plan, fabric: str) -> dict[tuple[str, str, int], str]:
    """(host, rdma device, port) → pool, for every node port cabled into ``fabric``."""
    devices = plan.device_by_name
    out: dict[tuple[str, str, int], str] = {}
    for link in plan.links_of(fabric):
        for ep in (link.a, link.b):
            d = devices[ep.device]
            if d.kind == "node" and d.pool is not None:
                rdma, _, port = ep.port.partition("/")
                out[(d.name, rdma, int(port or 1))] = d.pool
    return out


def guid_files(plan: Plan, fabric: str, text: str, source: str) -> GuidFiles:
    nodes = parse_nodes(text, source)
    roots_wanted = top_tier(plan, fabric)
    gpu_pools = {p.name for p in plan.cluster.pools if p.role == "gpu"}
    planned = _planned_ports(plan, fabric)
    roots: list[tuple[int, str]] = []
    cns: list[tuple[int, str]] = []
    pool_ports: dict[str, list[int]] = {}
    seen: set[object] = set()
    for n in nodes:
        if n.kind == "switch" and n.desc in roots_wanted:
            roots.append((n.guid, n.desc))
            seen.add(n.desc)
        elif n.kind == "ca":
            host, _, rdma = n.desc.partition(" ")
            for port, pguid in n.ports.items():
                pool = planned.get((host, rdma.strip(), port))
                if pool is None:
                    continue
                seen.add((host, rdma.strip(), port))
                pool_ports.setdefault(pool, []).append(pguid)
                if pool in gpu_pools:
                    cns.append((pguid, f"{host} {rdma.strip()}"))
    missing = sorted(s for s in roots_wanted if s not in seen)
    missing += sorted(f"{h} {r}/{p}" for (h, r, p) in planned if (h, r, p) not in seen)
    if not roots:
        raise GuidError(
            f"{source}: none of the {len(roots_wanted)} top-tier switches of the plan were discovered "
            "(are NodeDescriptions set to the plan's switch names?)"
        )
    return GuidFiles(
        tuple(sorted(set(roots))),
        tuple(sorted(set(cns))),
        {k: tuple(sorted(set(v))) for k, v in sorted(pool_ports.items())},
        tuple(missing),
    )


def render_guids(entries: tuple[tuple[int, str], ...]) -> str:
    """One GUID per line and nothing else (opensm(8), "Notes on the guid list file")."""
    return "".join(f"0x{g:016x}\n" for g, _ in entries)


def check_roots(plan: Plan, fabric: str, text: str, source: str, roots_text: str, roots_source: str) -> None:
    """Raise a located GuidError if ``roots_text`` lists a GUID that is not a top-tier switch of the plan."""
    nodes = parse_nodes(text, source)
    by_guid = {n.guid: n for n in nodes}
    # a CA GUID (node or port) makes OpenSM root the CA's leaf switch (opensm(8), guid list file note 2)
    by_guid.update({g: n for n in nodes if n.kind == "ca" for g in n.ports.values()})
    devices = plan.device_by_name
    top = top_tier(plan, fabric)
    problems: list[str] = []
    for no, line in enumerate(roots_text.splitlines(), 1):
        if not line.strip():
            continue
        m = _FILE_GUID.match(line)
        if m is None:
            problems.append(f"{roots_source}:{no}: `{line.strip()}` is not a GUID (OpenSM would skip it)")
            continue
        guid = int(m.group(1), 0)
        node = by_guid.get(guid)
        name = node.desc if node is not None else None
        if node is None:
            problems.append(f"{roots_source}:{no}: 0x{guid:016x} is not in the discovered fabric ({source})")
        elif node.kind != "switch":
            problems.append(
                f"{roots_source}:{no}: 0x{guid:016x} is a CA ({name}): OpenSM would make its leaf a root"
            )
        elif name not in top:
            role = devices[name].role if name in devices else "not in the plan"
            problems.append(
                f"{roots_source}:{no}: 0x{guid:016x} is {name} ({role}); ftree roots must be the top tier "
                f"({len(top)} switches, e.g. {min(top)})"
            )
    if problems:
        raise GuidError("\n".join(problems))
