"""Tiered fabric overview (fat-tree, leaf/spine, dragonfly): tiers as rows, node groups at the bottom.

Two scales, one renderer. Up to ``DETAIL_MAX_SWITCHES`` switches every switch is a box and every
switch pair a line (line width grows with the cables in it). Above that the diagram is summarised:
switches of a tier are aggregated into at most ``MAX_BOXES`` boxes along the fabric's natural unit
(pod, scalable unit, dragonfly group), each labelled with its counts, and the cables between two boxes
become one bundle labelled with its cable count — the 100k-GPU plan draws a few hundred shapes, not a
hairball of 300k cables.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from generator.emit.diagrams.layout import TIER_ORDER, Box, Bundle, Layout, fmt_count
from generator.emit.diagrams.svg import rail_colour
from generator.emit.slurm.hostlist import compress
from generator.plan.model import Device, Plan

DETAIL_MAX_SWITCHES = 160  # 4 SU SuperPOD: 48; a 16-SU 2-tier pod: 192 → summarised
DETAIL_MAX_NODE_GROUPS = 160
MAX_BOXES = 12  # per tier, summary mode
_GROUP_RE = re.compile(r"-g(\d+)-")


def _short(name: str) -> str:
    """``c-leaf-su1-r0`` → ``su1-r0``: the fabric letter and tier are already the row's title."""
    parts = name.split("-", 2)
    return parts[2] if len(parts) == 3 and len(parts[0]) == 1 else name


def _plural(n: int, word: str) -> str:
    if n == 1:
        return f"1 {word}"
    return f"{fmt_count(n)} " + {"switch": "switches", "leaf": "leaves", "core": "cores"}.get(
        word, word + "s"
    )


@dataclass
class FabricView:
    """The fabric's switches, the nodes on it and its links, read once from the plan."""

    plan: Plan
    fabric: str
    kind: str
    switches: list[Device]
    nodes: list[Device]
    node_switches: dict[str, list[tuple[str, int | None]]]  # node → [(switch, rail)] in link order
    links: list[tuple[str, str, str, int | None]]  # (a, b, layer, rail)

    @classmethod
    def of(cls, plan: Plan, fabric: str) -> FabricView:
        devices = plan.device_by_name
        switches = [d for d in plan.switches(fabric)]
        node_switches: dict[str, list[tuple[str, int | None]]] = defaultdict(list)
        links = []
        for link in plan.links_of(fabric):
            a, b = devices[link.a.device], devices[link.b.device]
            if a.kind == "node" and b.kind == "switch":
                node_switches[a.name].append((b.name, link.rail))
            elif b.kind == "node" and a.kind == "switch":
                node_switches[b.name].append((a.name, link.rail))
            links.append((a.name, b.name, link.layer, link.rail))
        nodes = [d for d in plan.nodes() if d.name in node_switches]
        kind = plan.metrics[fabric].topology if fabric in plan.metrics else "none"
        return cls(plan, fabric, kind, switches, nodes, dict(node_switches), links)

    def tiers(self) -> list[str]:
        present = {d.role for d in self.switches}
        return [t for t in TIER_ORDER if t in present] + sorted(present - set(TIER_ORDER))

    @property
    def is_rail(self) -> bool:
        return any(d.rail is not None for d in self.switches)

    @property
    def rails(self) -> int:
        return len({d.rail for d in self.switches if d.rail is not None})


def node_groups(view: FabricView) -> list[tuple[tuple[str, ...], list[str]]]:
    """Nodes grouped by the switches they hang off (an SU for rail-optimised fabrics), in node order."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for d in view.nodes:
        key = tuple(sorted({s for s, _ in view.node_switches[d.name]}))
        groups.setdefault(key, []).append(d.name)
    return list(groups.items())


def detail_layout(view: FabricView, title: str) -> Layout:
    lay = Layout(title, "", rails=view.rails)
    devices = view.plan.device_by_name
    order = {"core": 0, "spine": 1}
    for d in sorted(
        view.switches, key=lambda d: (order.get(d.role, 2), d.pod or 0, d.su or 0, d.rail or 0, d.index)
    ):
        tip = (
            f"{d.name} · {d.model} · {d.role}"
            + (f" · rail {d.rail}" if d.rail is not None else "")
            + (f" · rack {d.rack} U{d.u}" if d.rack else "")
        )
        lay.boxes[d.name] = Box(
            d.name,
            d.role,
            (_short(d.name),),
            f"sw {d.role}",
            tip,
            fill=rail_colour(d.rail) if d.rail is not None else None,
            name=d.name,
        )
    node_box: dict[str, str] = {}
    for i, (switches, names) in enumerate(node_groups(view)):
        key = f"nodes-{i + 1}"
        hl = compress(names)
        pools = sorted({devices[n].pool or "" for n in names})
        lay.boxes[key] = Box(
            key,
            "nodes",
            (hl if len(hl) <= 26 else f"{names[0]}…", _plural(len(names), "node")),
            "agg nodes",
            f"{hl}: {len(names)} nodes (pool {', '.join(pools)}) on {compress(list(switches))}",
            count=len(names),
        )
        for n in names:
            node_box[n] = key
    pairs: Counter[tuple[str, str, str, int | None]] = Counter()
    for a, b, layer, rail in view.links:
        a_key, b_key = node_box.get(a, a), node_box.get(b, b)
        if a_key not in lay.boxes or b_key not in lay.boxes:
            continue
        pairs[(a_key, b_key, layer, rail if layer.startswith("node") and view.is_rail else None)] += 1
    for (a, b, layer, rail), cables in sorted(
        pairs.items(), key=lambda t: (t[0][0], t[0][1], t[0][2], t[0][3] or -1)
    ):
        tip = (
            f"{lay.boxes[a].name or lay.boxes[a].lines[0]} — {lay.boxes[b].name or lay.boxes[b].lines[0]}: "
            f"{cables} {layer} cable{'s' if cables > 1 else ''}"
            + (f" (rail {rail})" if rail is not None else "")
        )
        lay.bundles.append(Bundle(a, b, layer, cables, rail, tip))
    if view.kind == "dragonfly":
        by_group: dict[int, list[str]] = defaultdict(list)
        for d in view.switches:
            by_group[d.su or 0].append(d.name)
        lay.groups = [(f"group {g}", names) for g, names in sorted(by_group.items())]
    return lay


def _unit_of(view: FabricView) -> Callable[[Device], int | None]:
    has_core = any(d.role == "core" for d in view.switches)

    def unit(d: Device) -> int | None:
        if view.kind == "dragonfly":
            return d.su
        if d.role == "leaf":
            return d.pod if has_core else (d.su if d.su is not None else d.index)
        if d.role == "spine":
            return d.pod
        if d.role == "core":
            m = _GROUP_RE.search(d.name)
            return int(m.group(1)) if m else None
        return None

    return unit


def _chunks(values: list[int], max_boxes: int) -> dict[int, tuple[int, int]]:
    """Map each unit to its (first, last) range, at most ``max_boxes`` contiguous ranges."""
    uniq = sorted(set(values))
    per = max(1, math.ceil(len(uniq) / max_boxes))
    out: dict[int, tuple[int, int]] = {}
    for i in range(0, len(uniq), per):
        part = uniq[i : i + per]
        for u in part:
            out[u] = (part[0], part[-1])
    return out


def _unit_word(view: FabricView, tier: str) -> str:
    if view.kind == "dragonfly":
        return "group"
    if tier == "core":
        return "core group"
    has_core = any(d.role == "core" for d in view.switches)
    if has_core:
        return "pod"
    return "SU" if view.is_rail else "leaf"


def _range_text(word: str, lo: int, hi: int) -> str:
    plural = {"SU": "SUs", "group": "groups", "pod": "pods", "leaf": "leaves", "core group": "core groups"}
    return f"{word} {lo}" if lo == hi else f"{plural.get(word, word + 's')} {lo}–{hi}"


def summary_layout(view: FabricView, title: str) -> Layout:
    lay = Layout(title, "", rails=view.rails, summary=True)
    unit = _unit_of(view)
    box_of: dict[str, str] = {}
    tier_units: dict[str, list[int]] = defaultdict(list)
    for d in view.switches:
        u = unit(d)
        if u is not None:
            tier_units[d.role].append(u)
    # one chunking for the unit shared by leaves, spines and nodes so box k of each row covers the same pods
    shared = _chunks(tier_units.get("leaf") or tier_units.get("router") or [], MAX_BOXES)
    members: dict[str, list[Device]] = defaultdict(list)
    for tier in view.tiers():
        devs = [d for d in view.switches if d.role == tier]
        units = [unit(d) for d in devs]
        if all(u is not None for u in units):
            chunk = (
                shared
                if tier in ("leaf", "router", "spine") and all(u in shared for u in units)
                else _chunks([u for u in units if u is not None], MAX_BOXES)
            )
            for d, u in zip(devs, units, strict=True):
                lo, hi = chunk[u]  # type: ignore[index]
                key = f"{tier}:{lo}-{hi}"
                box_of[d.name] = key
                members[key].append(d)
        else:
            per = max(1, math.ceil(len(devs) / MAX_BOXES))
            for i, d in enumerate(sorted(devs, key=lambda d: d.index)):
                key = f"{tier}:#{i // per}"
                box_of[d.name] = key
                members[key].append(d)
    node_members: dict[str, list[str]] = defaultdict(list)
    for d in view.nodes:
        first = view.node_switches[d.name][0][0]
        key = "nodes:" + box_of[first].split(":", 1)[1]
        box_of[d.name] = key
        node_members[key].append(d.name)

    def sort_key(k: str) -> tuple[int, int]:
        tail = k.split(":", 1)[1]
        return (int(tail[1:]), 0) if tail.startswith("#") else (int(tail.split("-")[0]), 1)

    for key in sorted(members, key=lambda k: (view.tiers().index(k.split(":")[0]), sort_key(k))):
        devs = members[key]
        tier = key.split(":")[0]
        tail = key.split(":", 1)[1]
        if tail.startswith("#"):
            where = (
                f"{_short(devs[0].name)} … {_short(devs[-1].name)}" if len(devs) > 1 else _short(devs[0].name)
            )
        else:
            lo, hi = (int(x) for x in tail.split("-"))
            where = _range_text(_unit_word(view, tier), lo, hi)
        rails = len({d.rail for d in devs if d.rail is not None})
        lines = [where, _plural(len(devs), "switch")]
        if rails:
            lines.append(f"{rails} rails")
        models = ", ".join(sorted({d.model for d in devs}))
        lay.boxes[key] = Box(
            key,
            tier,
            tuple(lines),
            f"agg {tier}",
            f"{tier} · {where} · {len(devs)} × {models} · {compress([d.name for d in devs])}",
            count=len(devs),
        )
    for key in sorted(node_members, key=sort_key):
        names = node_members[key]
        tail = key.split(":", 1)[1]
        where = (
            names[0] + " …"
            if tail.startswith("#")
            else _range_text(_unit_word(view, "leaf"), *(int(x) for x in tail.split("-")))
        )
        hl = compress(names)
        lay.boxes[key] = Box(
            key,
            "nodes",
            (where, _plural(len(names), "node"), hl if len(hl) <= 24 else ""),
            "agg nodes",
            f"{hl}: {len(names)} nodes",
            count=len(names),
        )
    is_rail = view.is_rail
    raw: Counter[tuple[str, str, str, int | None]] = Counter()
    for a, b, layer, rail in view.links:
        ka, kb = box_of.get(a), box_of.get(b)
        if ka is None or kb is None:
            continue
        raw[(ka, kb, layer, rail if is_rail and layer.startswith("node") else None)] += 1
    bundles: Counter[tuple[str, str, str, int | None]] = Counter()
    for (ka, kb, layer, rail), n in raw.items():  # one direction per pair of boxes in the same row
        if ka.split(":")[0] == kb.split(":")[0] and sort_key(ka) > sort_key(kb):
            ka, kb = kb, ka
        bundles[(ka, kb, layer, rail)] += n
    for (a, b, layer, rail), n in sorted(
        bundles.items(), key=lambda t: (t[0][0], t[0][1], t[0][2], t[0][3] or -1)
    ):
        if a == b:
            continue  # links inside one box (dragonfly local links): counted in the legend
        tip = (
            f"{lay.boxes[a].lines[0]} {lay.boxes[a].row} — {lay.boxes[b].lines[0]} {lay.boxes[b].row}: "
            f"{fmt_count(n)} {layer} cables" + (f" (rail {rail})" if rail is not None else "")
        )
        lay.bundles.append(Bundle(a, b, layer, n, rail, tip))
    rank = {t: i for i, t in enumerate([*view.tiers(), "nodes"])}
    up_n: Counter[str] = Counter()
    down_n: Counter[str] = Counter()
    for bd in lay.bundles:
        ra, rb = rank[lay.boxes[bd.a].row], rank[lay.boxes[bd.b].row]
        if ra == rb:
            continue
        upper, lower = (bd.a, bd.b) if ra < rb else (bd.b, bd.a)
        down_n[upper] += bd.cables
        up_n[lower] += bd.cables
    for key, box in lay.boxes.items():
        parts = [
            f"up {fmt_count(up_n[key])}" if up_n[key] else "",
            f"down {fmt_count(down_n[key])}" if down_n[key] else "",
        ]
        if any(parts):
            box.lines = (*box.lines, " · ".join(p for p in parts if p) + " cables")
    inside: Counter[str] = Counter()
    for (a, b, layer, _), n in bundles.items():
        if a == b:
            inside[layer] += n
    for layer, total in sorted(inside.items()):
        lay.legend.append(f"{fmt_count(total)} {layer} cables join switches inside one box (not drawn)")
    return lay
