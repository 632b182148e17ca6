"""Drawing a tiered layout: rows of boxes (tiers, then node groups), bundles between them, arcs inside a row.

A ``Layout`` says what to draw (boxes with label lines and counts, bundles with cable counts, frames for
dragonfly groups, legend lines); ``render`` places and writes it. Node boxes sit under the switches they
hang off (barycentre of their bundles), pushed apart so they never overlap.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import NamedTuple

from generator.emit.diagrams.svg import Svg, num, rail_colour

LABEL_MAX_BUNDLES = (
    40  # distinct box pairs between two rows; above this, counts move to box labels and tooltips
)
# Two switch rows wired as a full mesh with more box pairs than this are drawn as a bus (one drop line per
# box) instead of a line per pair: 32 leaves x 16 spines as 512 lines is a solid grey band.
MESH_MIN_PAIRS = 96
TIER_ORDER = ("core", "spine", "leaf", "router", "switch")
TIER_TITLE = {
    "core": "core",
    "spine": "spine",
    "leaf": "leaf",
    "router": "router",
    "switch": "switch",
    "nodes": "nodes",
    "appliances": "appliances",
}
# rows placed under the switches they hang off rather than spread: node groups, then devices on switch ports
# (blueprint `appliances:`, generator/plan/attached.py), last so their few cables cross the node row
HANGING = ("nodes", "appliances")

CSS = (
    "text{font-size:10px;fill:#222}.t{font-size:16px;font-weight:bold}.st{font-size:11px;fill:#444}"
    ".lbl{font-size:9px}.cnt{font-size:9px;fill:#333}.plate{fill:#fff;fill-opacity:0.9;stroke:#999;stroke-width:0.5}"
    ".row{font-size:11px;font-weight:bold;fill:#666}"
    ".sw,.agg{stroke:#333;stroke-width:0.8}.core{fill:#d9d2e9}.spine{fill:#cfe2f3}.leaf{fill:#d9ead3}"
    ".router{fill:#fce5cd}.switch{fill:#d9ead3}.nodes{fill:#eeeeee}"
    ".grp{fill:#fff7ee;stroke:#e69f00;stroke-dasharray:4 3}"
    ".e{fill:none;stroke-opacity:0.55}.local{stroke:#b45f06}.global{stroke:#7f6000}"
    ".up{stroke:#555}.lg{font-size:10px}.bus{stroke:#666;fill:none}"
)
CSS_APPLIANCE = ".appliance{fill:#f4cccc}"  # only in drawings with appliances: the others stay byte for byte


@dataclass
class Box:
    key: str
    row: str
    lines: tuple[str, ...]
    cls: str
    tip: str
    count: int = 1  # devices inside (1 = one switch)
    fill: str | None = None  # rail colour for rail leaves
    x: float = 0.0
    y: float = 0.0
    w: float = 0.0
    h: float = 0.0
    name: str = ""  # device name in detail mode


@dataclass
class Bundle:
    a: str
    b: str
    layer: str
    cables: int
    rail: int | None = None
    tip: str = ""


@dataclass
class Layout:
    title: str
    subtitle: str
    boxes: dict[str, Box] = field(default_factory=dict)
    bundles: list[Bundle] = field(default_factory=list)
    groups: list[tuple[str, list[str]]] = field(default_factory=list)  # (label, box keys) drawn as a frame
    legend: list[str] = field(default_factory=list)
    rails: int = 0
    summary: bool = False


def fmt_count(n: int) -> str:
    return f"{n:,}"


def _text_w(s: str, px: float = 5.6) -> float:
    return len(s) * px


class Placement(NamedTuple):
    width: float
    height: float  # of the drawing area (the legend goes below)
    row_y: dict[str, float]  # row → top of its boxes


def _size_boxes(lay: Layout) -> None:
    """Each box wide enough for its longest label line and tall enough for its lines."""
    for b in lay.boxes.values():
        lines = [s for s in b.lines if s]
        b.w = max(44.0, max(_text_w(s) for s in lines) + 10)
        b.h = (10.0 + 11.0 * len(lines)) if lay.summary else 14.0 + 11.0 * len(lines)


def _spread_row(boxes: list[Box], y: float, width: float, gap: float) -> None:
    """A switch row spread over the width (sparser rows get wider gaps, up to three boxes), centred."""
    total_w = sum(b.w for b in boxes)
    row_gap_x = gap
    if len(boxes) > 1:
        row_gap_x = max(gap, min((width - 160.0 - total_w) / (len(boxes) - 1), 3 * total_w / len(boxes)))
    x = 80.0 + (width - 120.0 - total_w - row_gap_x * (len(boxes) - 1)) / 2
    for b in boxes:
        b.x, b.y = x, y
        x += b.w + row_gap_x


def _switch_centres(lay: Layout) -> dict[str, list[float]]:
    """Node or appliance box → the centres of the switch boxes it has bundles to."""
    targets: dict[str, list[float]] = defaultdict(list)
    for bd in lay.bundles:
        for here, there in ((bd.a, bd.b), (bd.b, bd.a)):
            if lay.boxes[here].row in HANGING and lay.boxes[there].row not in HANGING:
                t = lay.boxes[there]
                targets[here].append(t.x + t.w / 2)
    return targets


def _push_right(nodes: list[Box], gap: float) -> float:
    """Move boxes right until none overlaps the one before; returns the x after the last box's gap."""
    x_min = 80.0
    for b in nodes:
        b.x = max(b.x, x_min)
        x_min = b.x + b.w + gap
    return x_min


def _place_nodes(lay: Layout, nodes: list[Box], y: float, width: float, gap: float) -> float:
    """Node boxes under the switches they connect to (barycentre), then pushed apart left to right;
    returns the drawing width, grown if the row does not fit."""
    targets = _switch_centres(lay)
    for b in nodes:
        xs = targets.get(b.key)
        b.x = (sum(xs) / len(xs) if xs else width / 2) - b.w / 2
        b.y = y
    nodes.sort(key=lambda b: b.x)
    wanted = {b.key: b.x for b in nodes}
    _push_right(nodes, gap)
    # pushing right drifts a crowded row; shift it back by the mean drift (still without overlaps)
    drift = sum(b.x - wanted[b.key] for b in nodes) / max(1, len(nodes))
    if drift > 0:
        for b in nodes:
            b.x -= drift
    overflow = _push_right(nodes, gap) - gap - (width - 40.0)
    return width + overflow if overflow > 0 else width


def _place(lay: Layout, rows: list[str]) -> Placement:
    """Box sizes and positions: switch rows spread and centred, node boxes under their switches."""
    gap = 14.0 if lay.summary else 6.0
    by_row: dict[str, list[Box]] = defaultdict(list)
    for b in lay.boxes.values():
        by_row[b.row].append(b)
    _size_boxes(lay)
    row_w = {r: sum(b.w for b in by_row[r]) + gap * (len(by_row[r]) - 1) for r in rows}
    width = max(max(row_w.values(), default=200.0) + 120.0, 900.0)
    arc_room = 90.0 if any(lay.boxes[b.a].row == lay.boxes[b.b].row for b in lay.bundles) else 0.0
    y0 = 86.0 + arc_room
    row_gap = 130.0 if lay.summary else 120.0
    row_y = {r: y0 + i * row_gap for i, r in enumerate(rows)}
    for r in rows:
        if r not in HANGING:
            _spread_row(by_row[r], row_y[r], width, gap)
    for r in HANGING:
        if r in rows:
            width = _place_nodes(lay, by_row[r], row_y[r], width, gap)
    height = (max(row_y.values()) if row_y else y0) + 80.0
    return Placement(width, height, row_y)


def _stroke(n: int, summary: bool) -> float:
    return round(min(9.0, 1.0 + (math.log10(n) * 1.6 if summary else math.log2(n) * 0.7)), 1)


def mesh_rows(lay: Layout) -> dict[tuple[str, str], list[Bundle]]:
    """Pairs of switch rows whose bundles join every box of one row to every box of the other, with more
    than MESH_MIN_PAIRS box pairs: these are drawn as a bus."""
    by_rows: dict[tuple[str, str], list[Bundle]] = defaultdict(list)
    for bd in lay.bundles:
        ra, rb = lay.boxes[bd.a].row, lay.boxes[bd.b].row
        if ra != rb and ra not in HANGING and rb not in HANGING:
            by_rows[(ra, rb) if ra < rb else (rb, ra)].append(bd)
    out: dict[tuple[str, str], list[Bundle]] = {}
    for rows, bundles in by_rows.items():
        pairs = {frozenset((bd.a, bd.b)) for bd in bundles}
        n_a = sum(1 for b in lay.boxes.values() if b.row == rows[0])
        n_b = sum(1 for b in lay.boxes.values() if b.row == rows[1])
        if len(pairs) == n_a * n_b > MESH_MIN_PAIRS:
            out[rows] = bundles
    return out


def _draw_bus(
    svg: Svg, lay: Layout, rows: tuple[str, str], bundles: list[Bundle], row_y: dict[str, float]
) -> None:
    """A full mesh as a bus: a drop from every upper box, a rise from every lower box. The lower drops carry
    the cable counts (class ``e``), so the drawn counts still add up to the plan's."""
    upper, lower = sorted(rows, key=lambda r: row_y[r])
    ups = [b for b in lay.boxes.values() if b.row == upper]
    downs = [b for b in lay.boxes.values() if b.row == lower]
    y_bus = (max(b.y + b.h for b in ups) + min(b.y for b in downs)) / 2
    xs = [b.x + b.w / 2 for b in (*ups, *downs)]
    per_box: Counter[str] = Counter()
    layer = bundles[0].layer
    for bd in bundles:
        per_box[bd.a if lay.boxes[bd.a].row == lower else bd.b] += bd.cables
    tip = f"full mesh: each of {len(downs)} {lower} to each of {len(ups)} {upper}"
    svg.line(min(xs), y_bus, max(xs), y_bus, "bus", tip, stroke_width=3)
    for b in ups:
        svg.line(b.x + b.w / 2, b.y + b.h, b.x + b.w / 2, y_bus, "bus", b.tip, stroke_width=1.5)
    for b in downs:
        n = per_box[b.key]
        svg.line(
            b.x + b.w / 2,
            y_bus,
            b.x + b.w / 2,
            b.y,
            f"e {layer} up",
            f"{b.tip}: {n} cables up",
            stroke_width=_stroke(n, True),
            data_cables=n,
        )


RowPair = tuple[str, str]  # two row names, sorted
BoxPair = tuple[str, str]  # two box keys, sorted


def _row_pair(a: str, b: str) -> RowPair:
    return (a, b) if a <= b else (b, a)


def _box_pair(bd: Bundle) -> BoxPair:
    return (bd.a, bd.b) if bd.a < bd.b else (bd.b, bd.a)


class _Point(NamedTuple):
    x: float
    y: float


@dataclass
class _CountLabels:
    """Where the cable count of each box pair goes (the mean of its bundles' midpoints) and its total."""

    at: dict[BoxPair, list[_Point]] = field(default_factory=lambda: defaultdict(list))
    total: Counter[BoxPair] = field(default_factory=Counter)

    def add(self, pair: BoxPair, at: _Point, cables: int) -> None:
        self.at[pair].append(at)
        self.total[pair] += cables


def _rows(lay: Layout) -> list[str]:
    """Rows with boxes, top to bottom: tiers in TIER_ORDER, other rows by name, node groups, appliances."""
    present = {b.row for b in lay.boxes.values()}
    return [t for t in (*TIER_ORDER, *sorted(present - {*TIER_ORDER, *HANGING}), *HANGING) if t in present]


def _row_titles(svg: Svg, rows: list[str], row_y: dict[str, float]) -> None:
    for r in rows:
        svg.text(12, row_y[r] + 16, TIER_TITLE.get(r, r), "row", anchor="start")


def _group_frames(svg: Svg, lay: Layout) -> None:
    """Frames around dragonfly groups, drawn under everything."""
    for label, keys in lay.groups:
        bs = [lay.boxes[k] for k in keys if k in lay.boxes]
        if not bs:
            continue
        x0, x1 = min(b.x for b in bs) - 5, max(b.x + b.w for b in bs) + 5
        y0, y1 = min(b.y for b in bs) - 5, max(b.y + b.h for b in bs) + 16
        svg.rect(x0, y0, x1 - x0, y1 - y0, "grp", rx=6)
        svg.text((x0 + x1) / 2, y1 - 4, label, "lbl")


def _pair_counts(lay: Layout) -> dict[RowPair, int]:
    """Distinct box pairs between two rows (rails of one pair count once): many pairs → no per-pair labels."""
    box_pairs: dict[RowPair, set[BoxPair]] = defaultdict(set)
    for bd in lay.bundles:
        box_pairs[_row_pair(lay.boxes[bd.a].row, lay.boxes[bd.b].row)].add(_box_pair(bd))
    return {k: len(v) for k, v in box_pairs.items()}


def _bundle_class(bd: Bundle, colour: str | None) -> str:
    return f"e {bd.layer}" + ("" if colour or bd.layer in ("local", "global") else " up")


def _arc(svg: Svg, lay: Layout, bd: Bundle, labels: _CountLabels, pair_counts: dict[RowPair, int]) -> None:
    """A bundle inside one row: an arc above it, higher the farther apart its ends are."""
    a, b = lay.boxes[bd.a], lay.boxes[bd.b]
    colour = rail_colour(bd.rail) if bd.rail is not None else None
    xa, xb = a.x + a.w / 2, b.x + b.w / 2
    lift = min(85.0, 18.0 + abs(xb - xa) * 0.12)
    d = f"M{num(xa)},{num(a.y)} Q{num((xa + xb) / 2)},{num(a.y - lift * 2)} {num(xb)},{num(b.y)}"
    sw = _stroke(bd.cables, lay.summary)
    svg.path(d, _bundle_class(bd, colour), bd.tip, stroke_width=sw, stroke=colour, data_cables=bd.cables)
    if pair_counts[(a.row, a.row)] <= LABEL_MAX_BUNDLES and (lay.summary or bd.cables > 1):
        labels.add(_box_pair(bd), _Point((xa + xb) / 2, a.y - lift - 2), bd.cables)


def _line(
    svg: Svg,
    lay: Layout,
    bd: Bundle,
    row_y: dict[str, float],
    labels: _CountLabels,
    pair_counts: dict[RowPair, int],
) -> None:
    """A bundle between two rows, upper box bottom to lower box top; rails side by side."""
    a, b = lay.boxes[bd.a], lay.boxes[bd.b]
    colour = rail_colour(bd.rail) if bd.rail is not None else None
    up, down = (a, b) if row_y[a.row] < row_y[b.row] else (b, a)
    off = 0.0
    if bd.rail is not None and lay.rails > 1:
        off = (bd.rail - (lay.rails - 1) / 2) * (3.0 if lay.summary else 1.5)
    x1, y1 = up.x + up.w / 2 + off, up.y + up.h
    x2, y2 = down.x + down.w / 2 + off, down.y
    sw = _stroke(bd.cables, lay.summary)
    svg.line(
        x1,
        y1,
        x2,
        y2,
        _bundle_class(bd, colour),
        bd.tip,
        stroke_width=sw,
        stroke=colour,
        data_cables=bd.cables,
    )
    if lay.summary and pair_counts[_row_pair(a.row, b.row)] <= LABEL_MAX_BUNDLES:
        labels.add(_box_pair(bd), _Point((x1 + x2) / 2, (y1 + y2) / 2), bd.cables)


def _bundles(svg: Svg, lay: Layout, row_y: dict[str, float]) -> _CountLabels:
    """Full meshes as buses, then every other bundle as a line between rows or an arc inside one."""
    pair_counts = _pair_counts(lay)
    meshes = mesh_rows(lay)
    in_mesh = {id(bd) for bundles in meshes.values() for bd in bundles}
    labels = _CountLabels()
    svg.open("g", class_="bundles")
    for rows_key, bundles in sorted(meshes.items()):
        _draw_bus(svg, lay, rows_key, bundles, row_y)
    for bd in lay.bundles:
        if id(bd) in in_mesh:
            continue
        if lay.boxes[bd.a].row == lay.boxes[bd.b].row:
            _arc(svg, lay, bd, labels, pair_counts)
        else:
            _line(svg, lay, bd, row_y, labels, pair_counts)
    svg.close()
    return labels


def _count_labels(svg: Svg, labels: _CountLabels) -> None:
    """One count per box pair (rails of a pair summed), on a white plate so every renderer shows it."""
    for pair in sorted(labels.at):
        pts = labels.at[pair]
        x, y = sum(p.x for p in pts) / len(pts), sum(p.y for p in pts) / len(pts)
        s = fmt_count(labels.total[pair])
        w = _text_w(s, 5.2) + 6
        svg.rect(x - w / 2, y - 7, w, 12, "plate", None, rx=2)
        svg.text(x, y + 2.5, s, "cnt")


def _boxes(svg: Svg, lay: Layout) -> None:
    for b in lay.boxes.values():
        attrs: dict[str, object] = {"data_count": b.count} if lay.summary else {"data_name": b.name or None}
        style = f"fill:{b.fill};fill-opacity:0.35" if b.fill else None
        svg.rect(b.x, b.y, b.w, b.h, b.cls, b.tip, rx=3, style=style, **attrs)
        lines = [s for s in b.lines if s]
        for i, s in enumerate(lines):
            svg.text(b.x + b.w / 2, b.y + 12 + i * 11, s, "lbl")


def _legend(svg: Svg, lay: Layout, y: float) -> None:
    """The rail colours (if any), then the legend lines, from ``y`` down."""
    if lay.rails:
        svg.text(20, y + 10, "rails:", "lg", anchor="start")
        for rail in range(lay.rails):
            svg.rect(60 + rail * 56, y + 1, 12, 10, "", None, style=f"fill:{rail_colour(rail)}")
            svg.text(76 + rail * 56, y + 10, f"rail {rail}", "lg", anchor="start")
        y += 15
    for s in lay.legend:
        svg.text(20, y + 10, s, "lg", anchor="start")
        y += 15


def render(lay: Layout) -> str:
    rows = _rows(lay)
    placed = _place(lay, rows)
    legend_h = 34.0 + 15.0 * (len(lay.legend) + (1 if lay.rails else 0))
    css = CSS + (CSS_APPLIANCE if "appliances" in rows else "")
    svg = Svg(placed.width, placed.height + legend_h, lay.title, css)
    svg.text(20, 28, lay.title, "t", anchor="start")
    svg.text(20, 46, lay.subtitle, "st", anchor="start")
    _row_titles(svg, rows, placed.row_y)
    _group_frames(svg, lay)
    labels = _bundles(svg, lay, placed.row_y)
    _count_labels(svg, labels)
    _boxes(svg, lay)  # on top
    _legend(svg, lay, placed.height + 6)
    return svg.render()
