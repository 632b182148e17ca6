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
from dataclasses import dataclass, field
from typing import NamedTuple

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
    # devices on switch ports (blueprint `appliances:`) → the switches their cables go to, in link order
    appliance_switches: dict[str, list[str]] = field(default_factory=dict)
    appliances: list[Device] = field(default_factory=list)

    @classmethod
    def of(cls, plan: Plan, fabric: str) -> FabricView:
        devices = plan.device_by_name
        switches = [d for d in plan.switches(fabric)]
        node_switches: dict[str, list[tuple[str, int | None]]] = defaultdict(list)
        appliance_switches: dict[str, list[str]] = defaultdict(list)
        links = []
        for link in plan.links_of(fabric):
            a, b = devices[link.a.device], devices[link.b.device]
            if a.kind == "node" and b.kind == "switch":
                node_switches[a.name].append((b.name, link.rail))
            elif b.kind == "node" and a.kind == "switch":
                node_switches[b.name].append((a.name, link.rail))
            elif b.kind == "appliance" and a.kind == "switch":  # the switch is the A end (attached.py)
                appliance_switches[b.name].append(a.name)
            links.append((a.name, b.name, link.layer, link.rail))
        nodes = [d for d in plan.nodes() if d.name in node_switches]
        appliances = [d for d in plan.devices if d.kind == "appliance" and d.name in appliance_switches]
        kind = plan.metrics[fabric].topology if fabric in plan.metrics else "none"
        return cls(
            plan,
            fabric,
            kind,
            switches,
            nodes,
            dict(node_switches),
            links,
            dict(appliance_switches),
            appliances,
        )

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
    _appliance_boxes(lay, view)
    pairs: Counter[tuple[str, str, str, int | None]] = Counter()
    is_rail = view.is_rail  # once, not per cable: it scans every switch
    for a, b, layer, rail in view.links:
        a_key, b_key = node_box.get(a, a), node_box.get(b, b)
        if a_key not in lay.boxes or b_key not in lay.boxes:
            continue
        pairs[(a_key, b_key, layer, rail if layer.startswith("node") and is_rail else None)] += 1
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


def _appliance_boxes(lay: Layout, view: FabricView) -> None:
    """One box per appliance (the blueprint declares at most 64), styled as a device; its cables are
    bundled to its switches as every other link is."""
    for d in view.appliances:
        switches = view.appliance_switches[d.name]
        tip = (
            f"{d.name} · {d.model} · {d.role} · {len(switches)} cable(s) to {compress(sorted(set(switches)))}"
            + (f" · rack {d.rack} U{d.u}" if d.rack else " · not racked")
        )
        lay.boxes[d.name] = Box(d.name, "appliances", (d.name, d.model), "sw appliance", tip, name=d.name)


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


class _Range(NamedTuple):
    lo: int
    hi: int


def _chunks(values: list[int], max_boxes: int) -> dict[int, _Range]:
    """Map each unit to its (first, last) range, at most ``max_boxes`` contiguous ranges."""
    uniq = sorted(set(values))
    per = max(1, math.ceil(len(uniq) / max_boxes))
    out: dict[int, _Range] = {}
    for i in range(0, len(uniq), per):
        part = uniq[i : i + per]
        for u in part:
            out[u] = _Range(part[0], part[-1])
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


# ---- summary: switches aggregated into at most MAX_BOXES boxes per tier -----------------------------
# A box key is ``<row>:<lo>-<hi>`` (the units lo..hi: pods, SUs, groups) or ``<row>:#<i>`` (the i-th
# slice of a tier whose switches have no unit); node boxes take the key tail of their first switch's box.


class _KeyParts(NamedTuple):
    row: str
    lo: int  # first unit, or the slice number of a ``#`` key
    hi: int
    by_position: bool  # a ``#<i>`` key


def _parts(key: str) -> _KeyParts:
    row, tail = key.split(":", 1)
    if tail.startswith("#"):
        return _KeyParts(row, int(tail[1:]), int(tail[1:]), True)
    lo, hi = (int(x) for x in tail.split("-"))
    return _KeyParts(row, lo, hi, False)


def _key_order(key: str) -> tuple[int, int]:
    """Boxes of one row left to right: slices by number, unit ranges by their first unit."""
    p = _parts(key)
    return (p.lo, 0) if p.by_position else (p.lo, 1)


class _InBox(NamedTuple):
    device: Device
    key: str


@dataclass
class _Grouping:
    """Which box each device goes in, and each switch box's switches in order."""

    box_of: dict[str, str] = field(default_factory=dict)
    members: dict[str, list[Device]] = field(default_factory=lambda: defaultdict(list))


class _BundleKey(NamedTuple):
    a: str  # box keys
    b: str
    layer: str
    rail: int | None


def _unit_boxes(tier: str, devs: list[Device], units: list[int], shared: dict[int, _Range]) -> list[_InBox]:
    """Switches by unit range; leaves, routers and spines use the shared chunking when it covers them."""
    same_units = tier in ("leaf", "router", "spine") and all(u in shared for u in units)
    chunk = shared if same_units else _chunks(units, MAX_BOXES)
    return [_InBox(d, f"{tier}:{chunk[u].lo}-{chunk[u].hi}") for d, u in zip(devs, units, strict=True)]


def _slice_boxes(tier: str, devs: list[Device]) -> list[_InBox]:
    """Switches without a unit: in index order, cut into at most MAX_BOXES slices."""
    per = max(1, math.ceil(len(devs) / MAX_BOXES))
    return [_InBox(d, f"{tier}:#{i // per}") for i, d in enumerate(sorted(devs, key=lambda d: d.index))]


def _switch_grouping(view: FabricView) -> _Grouping:
    unit = _unit_of(view)
    tier_units: dict[str, list[int]] = defaultdict(list)
    for d in view.switches:
        u = unit(d)
        if u is not None:
            tier_units[d.role].append(u)
    # one chunking for the unit shared by leaves, spines and nodes so box k of each row covers the same pods
    shared = _chunks(tier_units.get("leaf") or tier_units.get("router") or [], MAX_BOXES)
    grouping = _Grouping()
    for tier in view.tiers():
        devs = [d for d in view.switches if d.role == tier]
        units = [unit(d) for d in devs]
        known = [u for u in units if u is not None]
        placed = (
            _unit_boxes(tier, devs, known, shared) if len(known) == len(units) else _slice_boxes(tier, devs)
        )
        for p in placed:
            grouping.box_of[p.device.name] = p.key
            grouping.members[p.key].append(p.device)
    return grouping


def _node_members(view: FabricView, box_of: dict[str, str]) -> dict[str, list[str]]:
    """Node box → its nodes: each node under the box of the first switch it links to (adds to box_of)."""
    node_members: dict[str, list[str]] = defaultdict(list)
    for d in view.nodes:
        first = view.node_switches[d.name][0][0]
        key = "nodes:" + box_of[first].split(":", 1)[1]
        box_of[d.name] = key
        node_members[key].append(d.name)
    return node_members


def _add_appliance_boxes(lay: Layout, view: FabricView, box_of: dict[str, str]) -> None:
    """Summarised, appliances go in one box per switch box of their first cable (adds to box_of)."""
    members: dict[str, list[Device]] = defaultdict(list)
    for d in view.appliances:
        key = "appliances:" + box_of[view.appliance_switches[d.name][0]].split(":", 1)[1]
        box_of[d.name] = key
        members[key].append(d)
    for key in sorted(members, key=_key_order):
        devs = members[key]
        names = compress([d.name for d in devs])
        models = ", ".join(sorted({d.model for d in devs}))
        lines = (names if len(names) <= 24 else f"{devs[0].name} …", _plural(len(devs), "appliance"))
        tip = f"{names}: {len(devs)} × {models}"
        lay.boxes[key] = Box(key, "appliances", lines, "agg appliance", tip, count=len(devs))


def _add_switch_boxes(lay: Layout, view: FabricView, members: dict[str, list[Device]]) -> None:
    tiers = view.tiers()
    for key in sorted(members, key=lambda k: (tiers.index(_parts(k).row), _key_order(k))):
        devs = members[key]
        p = _parts(key)
        if not p.by_position:
            where = _range_text(_unit_word(view, p.row), p.lo, p.hi)
        elif len(devs) > 1:
            where = f"{_short(devs[0].name)} … {_short(devs[-1].name)}"
        else:
            where = _short(devs[0].name)
        rails = len({d.rail for d in devs if d.rail is not None})
        lines = [where, _plural(len(devs), "switch")]
        if rails:
            lines.append(f"{rails} rails")
        models = ", ".join(sorted({d.model for d in devs}))
        tip = f"{p.row} · {where} · {len(devs)} × {models} · {compress([d.name for d in devs])}"
        lay.boxes[key] = Box(key, p.row, tuple(lines), f"agg {p.row}", tip, count=len(devs))


def _add_node_boxes(lay: Layout, view: FabricView, node_members: dict[str, list[str]]) -> None:
    for key in sorted(node_members, key=_key_order):
        names = node_members[key]
        p = _parts(key)
        where = names[0] + " …" if p.by_position else _range_text(_unit_word(view, "leaf"), p.lo, p.hi)
        hl = compress(names)
        lay.boxes[key] = Box(
            key,
            "nodes",
            (where, _plural(len(names), "node"), hl if len(hl) <= 24 else ""),
            "agg nodes",
            f"{hl}: {len(names)} nodes",
            count=len(names),
        )


def _box_bundles(view: FabricView, box_of: dict[str, str]) -> Counter[_BundleKey]:
    """Cables per (box, box, layer, rail); boxes in one row in one direction only (left to right)."""
    raw: Counter[_BundleKey] = Counter()
    is_rail = view.is_rail  # once: it scans every switch (12,800 routers of a 100k-GPU dragonfly)
    for a, b, layer, rail in view.links:
        ka, kb = box_of.get(a), box_of.get(b)
        if ka is None or kb is None:
            continue
        raw[_BundleKey(ka, kb, layer, rail if is_rail and layer.startswith("node") else None)] += 1
    bundles: Counter[_BundleKey] = Counter()
    for k, n in raw.items():
        same_row = _parts(k.a).row == _parts(k.b).row
        flip = same_row and _key_order(k.a) > _key_order(k.b)
        bundles[k._replace(a=k.b, b=k.a) if flip else k] += n
    return bundles


def _add_bundles(lay: Layout, bundles: Counter[_BundleKey]) -> None:
    for k in sorted(bundles, key=lambda k: (k.a, k.b, k.layer, k.rail or -1)):
        if k.a == k.b:
            continue  # links inside one box (dragonfly local links): counted in the legend
        n = bundles[k]
        a, b = lay.boxes[k.a], lay.boxes[k.b]
        tip = f"{a.lines[0]} {a.row} — {b.lines[0]} {b.row}: {fmt_count(n)} {k.layer} cables" + (
            f" (rail {k.rail})" if k.rail is not None else ""
        )
        lay.bundles.append(Bundle(k.a, k.b, k.layer, n, k.rail, tip))


def _add_cable_counts(lay: Layout, view: FabricView) -> None:
    """A last label line per box: the cables to the row above (up) and below (down)."""
    rank = {t: i for i, t in enumerate([*view.tiers(), "nodes", "appliances"])}
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


def _inside_legend(lay: Layout, bundles: Counter[_BundleKey]) -> None:
    inside: Counter[str] = Counter()
    for k, n in bundles.items():
        if k.a == k.b:
            inside[k.layer] += n
    for layer, total in sorted(inside.items()):
        lay.legend.append(f"{fmt_count(total)} {layer} cables join switches inside one box (not drawn)")


def summary_layout(view: FabricView, title: str) -> Layout:
    lay = Layout(title, "", rails=view.rails, summary=True)
    grouping = _switch_grouping(view)
    node_members = _node_members(view, grouping.box_of)
    _add_switch_boxes(lay, view, grouping.members)
    _add_node_boxes(lay, view, node_members)
    _add_appliance_boxes(lay, view, grouping.box_of)
    bundles = _box_bundles(view, grouping.box_of)
    _add_bundles(lay, bundles)
    _add_cable_counts(lay, view)
    _inside_legend(lay, bundles)
    return lay
