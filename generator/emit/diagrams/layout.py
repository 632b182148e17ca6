"""Drawing a tiered layout: rows of boxes (tiers, then node groups), bundles between them, arcs inside a row.

A ``Layout`` says what to draw (boxes with label lines and counts, bundles with cable counts, frames for
dragonfly groups, legend lines); ``render`` places and writes it. Node boxes sit under the switches they
hang off (barycentre of their bundles), pushed apart so they never overlap.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field

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
}

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


def _place(lay: Layout, rows: list[str]) -> tuple[float, float, dict[str, float]]:
    """Box sizes and positions; returns (width, height of the drawing area, row → y)."""
    gap = 14.0 if lay.summary else 6.0
    by_row: dict[str, list[Box]] = defaultdict(list)
    for b in lay.boxes.values():
        by_row[b.row].append(b)
    for b in lay.boxes.values():
        lines = [s for s in b.lines if s]
        b.w = max(44.0, max(_text_w(s) for s in lines) + 10)
        b.h = (10.0 + 11.0 * len(lines)) if lay.summary else 14.0 + 11.0 * len(lines)
    row_w = {r: sum(b.w for b in by_row[r]) + gap * (len(by_row[r]) - 1) for r in rows}
    width = max(max(row_w.values(), default=200.0) + 120.0, 900.0)
    arc_room = 90.0 if any(lay.boxes[b.a].row == lay.boxes[b.b].row for b in lay.bundles) else 0.0
    y0 = 86.0 + arc_room
    row_gap = 130.0 if lay.summary else 120.0
    row_y = {r: y0 + i * row_gap for i, r in enumerate(rows)}
    # switch rows: spread over the width (sparser rows get wider gaps, up to three boxes), centred
    for r in rows:
        if r == "nodes":
            continue
        boxes = by_row[r]
        total_w = sum(b.w for b in boxes)
        row_gap_x = gap
        if len(boxes) > 1:
            row_gap_x = max(gap, min((width - 160.0 - total_w) / (len(boxes) - 1), 3 * total_w / len(boxes)))
        x = 80.0 + (width - 120.0 - total_w - row_gap_x * (len(boxes) - 1)) / 2
        for b in boxes:
            b.x, b.y = x, row_y[r]
            x += b.w + row_gap_x
    # nodes: under the switches they connect to (barycentre), then pushed apart left to right
    if "nodes" in rows:
        targets: dict[str, list[float]] = defaultdict(list)
        for bd in lay.bundles:
            for here, there in ((bd.a, bd.b), (bd.b, bd.a)):
                if lay.boxes[here].row == "nodes" and lay.boxes[there].row != "nodes":
                    t = lay.boxes[there]
                    targets[here].append(t.x + t.w / 2)
        nodes = by_row["nodes"]
        for b in nodes:
            xs = targets.get(b.key)
            b.x = (sum(xs) / len(xs) if xs else width / 2) - b.w / 2
            b.y = row_y["nodes"]
        nodes.sort(key=lambda b: b.x)
        wanted = {b.key: b.x for b in nodes}

        def push_right() -> float:
            x_min = 80.0
            for b in nodes:
                b.x = max(b.x, x_min)
                x_min = b.x + b.w + gap
            return x_min

        push_right()
        # pushing right drifts a crowded row; shift it back by the mean drift (still without overlaps)
        drift = sum(b.x - wanted[b.key] for b in nodes) / max(1, len(nodes))
        if drift > 0:
            for b in nodes:
                b.x -= drift
        x_min = push_right()
        overflow = x_min - gap - (width - 40.0)
        if overflow > 0:
            width += overflow
    height = (max(row_y.values()) if row_y else y0) + 80.0
    return width, height, row_y


def _stroke(n: int, summary: bool) -> float:
    return round(min(9.0, 1.0 + (math.log10(n) * 1.6 if summary else math.log2(n) * 0.7)), 1)


def mesh_rows(lay: Layout) -> dict[tuple[str, str], list[Bundle]]:
    """Pairs of switch rows whose bundles join every box of one row to every box of the other, with more
    than MESH_MIN_PAIRS box pairs: these are drawn as a bus."""
    by_rows: dict[tuple[str, str], list[Bundle]] = defaultdict(list)
    for bd in lay.bundles:
        ra, rb = lay.boxes[bd.a].row, lay.boxes[bd.b].row
        if ra != rb and "nodes" not in (ra, rb):
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


def render(lay: Layout) -> str:
    rows = [
        t
        for t in (*TIER_ORDER, *sorted({b.row for b in lay.boxes.values()} - {*TIER_ORDER, "nodes"}), "nodes")
        if any(b.row == t for b in lay.boxes.values())
    ]
    width, height, row_y = _place(lay, rows)
    legend_h = 34.0 + 15.0 * (len(lay.legend) + (1 if lay.rails else 0))
    svg = Svg(width, height + legend_h, lay.title, CSS)
    svg.text(20, 28, lay.title, "t", anchor="start")
    svg.text(20, 46, lay.subtitle, "st", anchor="start")
    for r in rows:
        svg.text(12, row_y[r] + 16, TIER_TITLE.get(r, r), "row", anchor="start")
    # frames (dragonfly groups) under everything
    for label, keys in lay.groups:
        bs = [lay.boxes[k] for k in keys if k in lay.boxes]
        if not bs:
            continue
        x0, x1 = min(b.x for b in bs) - 5, max(b.x + b.w for b in bs) + 5
        y0, y1 = min(b.y for b in bs) - 5, max(b.y + b.h for b in bs) + 16
        svg.rect(x0, y0, x1 - x0, y1 - y0, "grp", rx=6)
        svg.text((x0 + x1) / 2, y1 - 4, label, "lbl")
    # bundles between rows, then arcs inside a row
    # distinct box pairs between two rows (rails of one pair count once): many pairs → no per-pair labels
    box_pairs: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
    for bd in lay.bundles:
        rows_key = tuple(sorted((lay.boxes[bd.a].row, lay.boxes[bd.b].row)))
        box_pairs[rows_key].add((bd.a, bd.b) if bd.a < bd.b else (bd.b, bd.a))  # type: ignore[index]
    pair_counts = {k: len(v) for k, v in box_pairs.items()}
    meshes = mesh_rows(lay)
    in_mesh = {id(bd) for bundles in meshes.values() for bd in bundles}
    svg.open("g", class_="bundles")
    for rows_key, bundles in sorted(meshes.items()):
        _draw_bus(svg, lay, rows_key, bundles, row_y)
    label_at: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    label_sum: Counter[tuple[str, str]] = Counter()
    for bd in lay.bundles:
        if id(bd) in in_mesh:
            continue
        a, b = lay.boxes[bd.a], lay.boxes[bd.b]
        colour = rail_colour(bd.rail) if bd.rail is not None else None
        sw = _stroke(bd.cables, lay.summary)
        cls = f"e {bd.layer}" + ("" if colour or bd.layer in ("local", "global") else " up")
        pair = (bd.a, bd.b) if bd.a < bd.b else (bd.b, bd.a)
        if a.row == b.row:
            xa, xb = a.x + a.w / 2, b.x + b.w / 2
            lift = min(85.0, 18.0 + abs(xb - xa) * 0.12)
            d = f"M{num(xa)},{num(a.y)} Q{num((xa + xb) / 2)},{num(a.y - lift * 2)} {num(xb)},{num(b.y)}"
            svg.path(d, cls, bd.tip, stroke_width=sw, stroke=colour, data_cables=bd.cables)
            if pair_counts[(a.row, a.row)] <= LABEL_MAX_BUNDLES and (lay.summary or bd.cables > 1):
                label_at[pair].append(((xa + xb) / 2, a.y - lift - 2))
                label_sum[pair] += bd.cables
            continue
        up, down = (a, b) if row_y[a.row] < row_y[b.row] else (b, a)
        off = 0.0
        if bd.rail is not None and lay.rails > 1:
            off = (bd.rail - (lay.rails - 1) / 2) * (3.0 if lay.summary else 1.5)
        x1, y1 = up.x + up.w / 2 + off, up.y + up.h
        x2, y2 = down.x + down.w / 2 + off, down.y
        svg.line(x1, y1, x2, y2, cls, bd.tip, stroke_width=sw, stroke=colour, data_cables=bd.cables)
        key = tuple(sorted((a.row, b.row)))
        if lay.summary and pair_counts[key] <= LABEL_MAX_BUNDLES:  # type: ignore[index]
            label_at[pair].append(((x1 + x2) / 2, (y1 + y2) / 2))
            label_sum[pair] += bd.cables
    svg.close()
    # one count per box pair (rails of a pair summed), on a white plate so every renderer shows it
    for pair in sorted(label_at):
        pts = label_at[pair]
        x, y = sum(p[0] for p in pts) / len(pts), sum(p[1] for p in pts) / len(pts)
        s = fmt_count(label_sum[pair])
        w = _text_w(s, 5.2) + 6
        svg.rect(x - w / 2, y - 7, w, 12, "plate", None, rx=2)
        svg.text(x, y + 2.5, s, "cnt")
    # boxes on top
    for b in lay.boxes.values():
        attrs: dict[str, object] = {"data_count": b.count} if lay.summary else {"data_name": b.name or None}
        style = f"fill:{b.fill};fill-opacity:0.35" if b.fill else None
        svg.rect(b.x, b.y, b.w, b.h, b.cls, b.tip, rx=3, style=style, **attrs)
        lines = [s for s in b.lines if s]
        for i, s in enumerate(lines):
            svg.text(b.x + b.w / 2, b.y + 12 + i * 11, s, "lbl")
    # legend
    y = height + 6
    if lay.rails:
        svg.text(20, y + 10, "rails:", "lg", anchor="start")
        for rail in range(lay.rails):
            svg.rect(60 + rail * 56, y + 1, 12, 10, "", None, style=f"fill:{rail_colour(rail)}")
            svg.text(76 + rail * 56, y + 10, f"rail {rail}", "lg", anchor="start")
        y += 15
    for s in lay.legend:
        svg.text(20, y + 10, s, "lg", anchor="start")
        y += 15
    return svg.render()
