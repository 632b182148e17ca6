"""Cabling faults to build into a simulated fabric: a copy of the plan with cables moved or dropped,
or a net file with one link forced to a lower width/speed. The verifier is then run against the
*original* plan, as a technician's mistakes would be."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from generator.plan.model import Endpoint, Link, Plan


def _with(obj: Any, **changes: Any) -> Any:
    """A copy with fields changed (plan records are NamedTuples or frozen dataclasses)."""
    return obj._replace(**changes) if hasattr(obj, "_replace") else dataclasses.replace(obj, **changes)


def with_links(plan: Plan, links: list[Link]) -> Plan:
    return dataclasses.replace(plan, links=tuple(links))


def _switch_end(plan: Plan, link: Link) -> str:
    """'a' or 'b': which end of the link is on a switch (the leaf end of a node cable)."""
    return "b" if plan.device_by_name[link.b.device].kind == "switch" else "a"


def swap_switch_ends(plan: Plan, id1: str, id2: str) -> Plan:
    """Two cables whose far ends were plugged into each other's switch ports."""
    by_id = {link.id: link for link in plan.links}
    l1, l2 = by_id[id1], by_id[id2]
    e1, e2 = _switch_end(plan, l1), _switch_end(plan, l2)
    p1: Endpoint = getattr(l1, e1)
    p2: Endpoint = getattr(l2, e2)
    new1 = _with(l1, **{e1: p2})
    new2 = _with(l2, **{e2: p1})
    return with_links(
        plan, [new1 if link.id == id1 else new2 if link.id == id2 else link for link in plan.links]
    )


def drop(plan: Plan, *ids: str) -> Plan:
    gone = set(ids)
    return with_links(plan, [link for link in plan.links if link.id not in gone])


def leaf_to_leaf(plan: Plan, uplink1: str, uplink2: str) -> Plan:
    """Two leaf uplinks re-cabled leaf↔leaf: the leaf ends joined, both spine ports left empty."""
    by_id = {link.id: link for link in plan.links}
    l1, l2 = by_id[uplink1], by_id[uplink2]

    def leaf_end(link: Link) -> Endpoint:
        return link.a if plan.device_by_name[link.a.device].role == "leaf" else link.b

    joined = _with(l1, a=leaf_end(l1), b=leaf_end(l2), layer="leaf_leaf")
    return with_links(
        plan, [joined if link.id == uplink1 else link for link in plan.links if link.id != uplink2]
    )


def degrade(netfile: str, device: str, port: int, remote: str, remote_port: int, rate: str) -> str:
    """Force one link to ``rate`` (e.g. ``4xDDR``) by editing the width/speed comment on both ends.

    ``device``/``remote`` are node descriptions in the file (switch name or ``host mlx5_N``).
    """
    out: list[str] = []
    desc: str | None = None
    edited = 0
    for line in netfile.splitlines():
        m = re.match(r'^(?:Switch|Ca)\s+\d+\s+"[^"]+"\s*#\s*"([^"]*)"', line)
        if m:
            desc = m.group(1)
        elif line.startswith("[") and desc is not None:
            lport = int(line[1 : line.index("]")])
            if (desc, lport) in ((device, port), (remote, remote_port)):
                line, n = re.subn(r"\d+x[A-Z]+\d*$", rate, line)
                edited += n
        out.append(line)
    if edited != 2:
        raise ValueError(
            f"expected to edit 2 port lines for {device}[{port}] — {remote}[{remote_port}], edited {edited}"
        )
    return "\n".join(out) + "\n"


def move_switch_end(plan: Plan, link_id: str, device: str, port: int) -> Plan:
    """A cable whose switch end went into ``device`` port ``port`` instead (e.g. an HCA on a spine)."""
    dev = plan.device_by_name[device]
    target = Endpoint(
        device,
        str(port),
        port,
        (port + 1) // 2 if dev.ports_per_cage == 2 else None,
        2 - port % 2 if dev.ports_per_cage == 2 else None,
    )
    out = []
    for link in plan.links:
        if link.id == link_id:
            link = _with(link, **{_switch_end(plan, link): target})
        out.append(link)
    return with_links(plan, out)
