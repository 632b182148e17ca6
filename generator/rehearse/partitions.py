"""InfiniBand partitions per port: what the plan gives each HCA port, what OpenSM is given, what it set.

``partitions.conf`` (opensm(8), PARTITION CONFIGURATION; linux-rdma/opensm doc/partition-config.txt):
statements ``Name[=PKey][, flag[=value]]... : [member[=full|limited|both]][, ...] ;`` where a member is a
port GUID or ``ALL``, ``ALL_CAS``, ``ALL_SWITCHES``, ``ALL_ROUTERS``, ``SELF``, and ``defmember`` gives the
membership of members that name none (default ``limited``). In a port's P_Key table the top bit is the
membership: ``pkey | 0x8000`` full, ``pkey & 0x7fff`` limited (InfiniBand Architecture Specification vol. 1,
10.9.1 "P_Key").

The plan's intent, independent of the member lists a hand edit may change: a partition of pools (the
``# pools A, B:`` line ``generate`` writes above it, generator/emit/subnet_manager.py) holds its pools'
ports at its ``defmember`` and no other port; Default (0x7fff) holds every port as a full member when no
partition names pools, else the ports of pools in a partition and of no pool (an appliance's) as limited
and every other pool's as full (the rule of issue 25, generator/emit/subnet_manager.py
``_default_partition``); any other partition
every HCA port at its ``defmember`` (the ``ALL_CAS`` form ``generate`` writes). A member list edited away
from that shows on the ports it changed. What OpenSM runs is the file with each pool partition's empty
member list filled with its pools' port GUIDs from the discovery, as ``blueprint sm-guids`` fills it.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field

from generator.emit.subnet_manager import PLAN_NOTE, default_members, member_lines, shared_pools

DEFAULT_PKEY = 0x7FFF
FULL = 0x8000
_POOLS = re.compile(r"^#\s*pools\s+([^:]+):")
_EMPTY = re.compile(r"^\s*(\S.*?)\s*:\s*;\s*$")  # `Name=0x0001, defmember=full : ;` (no members yet)
# with SHARP on the switches are full members too (subnet_manager.py SWITCHES_FULL)
_DEFAULT_LIMITED = re.compile(
    r"^(Default\b[^:]*?)\s*:\s*ALL=limited,\s*(ALL_SWITCHES=full,\s*)?SELF=full\s*;\s*$"
)


@dataclass
class Partition:
    name: str
    pkey: int
    defmember: str
    members: list[tuple[str, str]]  # (GUID or group word, full|limited|both)
    pools: tuple[str, ...] = ()
    line: int = 0
    head: str = ""  # the text before ':' as written
    problems: list[str] = field(default_factory=list)


def _pkey(name: str, text: str) -> int:
    if text:
        return int(text, 0) & 0x7FFF
    return DEFAULT_PKEY if name == "Default" else -1


def _statement(head: str, body: str, pools: tuple[str, ...], line: int) -> Partition:
    fields = [f.strip() for f in head.split(",")]
    name, _, pkey = fields[0].partition("=")
    flags = {k.strip(): v.strip() for k, _, v in (f.partition("=") for f in fields[1:])}
    members = []
    for m in (x.strip() for x in body.split(",") if x.strip()):
        who, _, how = m.partition("=")
        members.append((who.strip(), how.strip() or flags.get("defmember", "limited")))
    return Partition(name.strip(), _pkey(name.strip(), pkey.strip()), flags.get("defmember", "limited"),
                     members, pools, line, head)  # fmt: skip


def parse(text: str) -> list[Partition]:
    """The partition statements, each with the pools its ``# pools`` line names (bad ones are skipped:
    OpenSM skips them too, and the per-port check then names their ports)."""
    out: list[Partition] = []
    # the text of the statement not yet ended, a piece per line: joined only when a `;` ends it, since
    # searching and extending one growing string at every line was quadratic (400,000 lines: 9 s)
    pending: list[str] = []
    start = 0
    pools: tuple[str, ...] = ()
    plan = ""
    for no, raw in enumerate(text.splitlines(), 1):
        if m := _POOLS.match(raw.strip()):
            pools = tuple(p.strip() for p in m.group(1).split(","))
        if raw.strip().startswith(PLAN_NOTE):
            plan = raw.strip()[len(PLAN_NOTE) :].strip()
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        start = start or no
        pending.append(" " + line)
        if ";" not in line:
            continue
        *ended, rest = "".join(pending).split(";")
        pending = [rest]
        for stmt in ended:
            head, sep, body = stmt.partition(":")
            if sep:
                with contextlib.suppress(ValueError):  # a bad P_Key: OpenSM skips the statement too
                    out.append(_planned(_statement(head.strip(), body, pools, start), plan))
            pools, start, plan = (), 0, ""
    return out


def _planned(found: Partition, plan: str) -> Partition:
    """The statement judged by its plan line (``# plan: Name=0x0010, defmember=full``, generate's own text):
    an edited P_Key or membership is named at its line, and the ports are held to the plan's values."""
    if not plan or " ".join(found.head.split()) == " ".join(plan.split()):
        return found
    try:
        want = _statement(plan, "", found.pools, found.line)
    except ValueError:
        return found
    found.problems.append(
        f"partitions.conf line {found.line}: `{found.head}`, the plan `{plan}` (the statement was edited)"
    )
    found.pkey, found.defmember = want.pkey, want.defmember
    return found


def _entries(membership: str, pkey: int) -> set[int]:
    if membership == "both":
        return {pkey, pkey | FULL}
    return {pkey | FULL} if membership == "full" else {pkey}


def intended(parts: list[Partition], ports: dict[int, str], pool_of: dict[int, str]) -> dict[int, set[int]]:
    """Port GUID -> its planned P_Key table entries (CA ports; the SM's own port excluded by the caller)."""
    tenants = {p for part in parts for p in part.pools}
    out: dict[int, set[int]] = {g: set() for g in ports}
    for g in ports:
        # with tenants, Default holds every port limited but the pools no partition names (the emitter's
        # rule, subnet_manager.py default_members): a port of no pool (a UFM appliance's) is limited too
        limited = bool(tenants) and (pool_of.get(g) is None or pool_of.get(g) in tenants)
        out[g] |= _entries("limited" if limited else "full", DEFAULT_PKEY)
    for part in parts:
        if part.pkey == DEFAULT_PKEY or part.pkey < 0:
            continue
        for g in ports:
            how = _membership(part, g, pool_of)
            if how:
                out[g] |= _entries(how, part.pkey)
    return out


def _membership(part: Partition, guid: int, pool_of: dict[int, str]) -> str | None:
    """A pool partition holds its pools' ports; one without pools every HCA port (``ALL_CAS``, the only
    other form ``generate`` writes: subnet_manager.py ``_pool_partition``), both at ``defmember``."""
    if part.pools:
        return part.defmember if pool_of.get(guid) in part.pools else None
    return part.defmember


def filled(text: str, pool_ports: dict[str, list[int]]) -> str:
    """The file as ``blueprint sm-guids`` writes it once the GUIDs are known: every pool partition's empty
    member list filled with its pools' port GUIDs, and Default given the ports of the pools its note names
    (``# pools in no partition (...)``) as full members, one member a line (generator.emit.subnet_manager
    ``member_lines``: OpenSM reads the file in 4,096-byte lines)."""
    lines: list[str] = []
    pools: tuple[str, ...] = ()
    shared: tuple[str, ...] = ()
    for raw in text.splitlines():
        stripped = raw.strip()
        if (named := shared_pools(stripped)) is not None:
            shared = named
        elif m := _POOLS.match(stripped):
            pools = tuple(p.strip() for p in m.group(1).split(","))
        elif pools and (m := _EMPTY.match(raw)):
            guids = sorted({g for p in pools for g in pool_ports.get(p, [])})
            lines += member_lines(m.group(1), [f"0x{g:016x}" for g in guids]) if guids else [raw]
            pools = ()
            continue
        elif shared and (m := _DEFAULT_LIMITED.match(raw)):
            full = sorted({g for p in shared for g in pool_ports.get(p, [])})
            lines += default_members(m.group(1), full, switches_full=m.group(2) is not None)
            shared = ()
            continue
        elif stripped and not stripped.startswith("#"):
            pools, shared = (), ()
        lines.append(raw)
    return "\n".join(lines) + "\n"


def names(parts: list[Partition]) -> dict[int, str]:
    out = {DEFAULT_PKEY: "Default"}
    out.update({p.pkey: p.name for p in parts if p.pkey >= 0})
    return out


def table_problems(
    want: dict[int, set[int]], got: dict[int, set[int]], ports: dict[int, str], parts: list[Partition]
) -> list[str]:
    """One line per port and P_Key whose membership differs from the plan."""
    label = names(parts)
    out = []
    for g in sorted(want):
        for key in sorted({k & 0x7FFF for k in want[g] | got.get(g, set())}):
            a, b = _how(want[g], key), _how(got.get(g, set()), key)
            if a != b:
                out.append(f"{ports[g]} (0x{g:016x}): {label.get(key, 'partition')} 0x{key:04x} {b}, "
                           f"the plan {a}")  # fmt: skip
    return out


def _how(table: set[int], key: int) -> str:
    full, limited = key | FULL in table, key in table
    return "full and limited" if full and limited else "full" if full else "limited" if limited else "absent"
