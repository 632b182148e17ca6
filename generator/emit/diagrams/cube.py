"""Torus and hypercube drawings: the first two dimensions as a grid, further dimensions as panels.

Up to ``CUBE_DETAIL_MAX`` vertices every vertex is a box and every link of the first two dimensions a
line (wrap-around links as arcs outside the grid); links along higher dimensions join the same grid
position in neighbouring panels and are counted in the legend rather than drawn. Larger cubes are
summarised: the first two dimensions folded into at most 16 x 16 cells, each cell labelled with its
vertex count, and per-dimension link counts in the legend.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import NamedTuple

from blueprints.models.topology import Hypercube, Torus
from generator.emit.diagrams.svg import Svg, num
from generator.plan.model import Plan

CUBE_DETAIL_MAX = 256
FOLD = 16

CSS = (
    "text{font-size:10px;fill:#222}.t{font-size:16px;font-weight:bold}.st{font-size:11px;fill:#444}"
    ".lbl{font-size:9px}.v{fill:#d9ead3;stroke:#333;stroke-width:0.8}.vn{fill:#eeeeee;stroke:#333;stroke-width:0.8}"
    ".cell{fill:#d9ead3;stroke:#333;stroke-width:0.8}.e{fill:none;stroke:#0072b2;stroke-width:1.2}"
    ".d1{stroke:#d55e00}.wrap{stroke-dasharray:3 2}"
    ".pn{font-size:11px;font-weight:bold;fill:#666}.lg{font-size:10px}"
)
CSS_APPLIANCE = ".ap{fill:#f4cccc;stroke:#333;stroke-width:0.8}"  # only with appliances, as in layout.py


def _coords(v: int, dims: list[int]) -> list[int]:
    out = []
    for k in dims:
        v, c = divmod(v, k)
        out.append(c)
    return out


def cube_dims(plan: Plan, fabric: str) -> tuple[list[int], str]:
    topo = plan.cluster.fabrics[fabric].spec.topology
    if isinstance(topo, Torus | Hypercube):
        return topo.vertex_dims, topo.attach
    raise ValueError(f"the {fabric} fabric is not a torus or hypercube")


def _vertices(plan: Plan, fabric: str, attach: str) -> tuple[list[str], dict[str, int]]:
    """Vertex names in cube order, and the node count on each switch vertex."""
    devices = plan.device_by_name
    if attach == "switch":
        names = [d.name for d in sorted(plan.switches(fabric), key=lambda d: d.index)]
        hosted: Counter[str] = Counter()
        for link in plan.links_of(fabric):
            if devices[link.a.device].kind == "node":
                hosted[link.b.device] += 1
        return names, dict(hosted)
    seen: set[str] = set()
    for link in plan.links_of(fabric):
        seen.update((link.a.device, link.b.device))
    return [d.name for d in plan.nodes() if d.name in seen], {}


def _appliances(plan: Plan, fabric: str) -> tuple[dict[str, list[str]], list[str]]:
    """Switch vertex → the appliances cabled to it (blueprint `appliances:`), and a legend line per
    appliance: the subtitle counts their cables, so the drawing shows where they go."""
    devices = plan.device_by_name
    on: dict[str, list[str]] = {}
    cables: dict[str, list[str]] = {}
    for link in plan.links_of(fabric):
        if devices[link.b.device].kind == "appliance":  # the switch is the A end (plan/attached.py)
            cables.setdefault(link.b.device, []).append(link.a.device)
            names = on.setdefault(link.a.device, [])
            if link.b.device not in names:
                names.append(link.b.device)
    legend = [
        f"appliance {name} ({devices[name].model}): {len(sw)} cable(s) to {', '.join(dict.fromkeys(sw))}"
        for name, sw in cables.items()
    ]
    return on, legend


class _Edge(NamedTuple):
    """A link between two vertices (cube order) that differ in one dimension."""

    u: int
    v: int
    dim: int  # 0-based
    wrap: bool  # joins the two ends of a ring (size > 2)


class _Point(NamedTuple):
    x: float
    y: float


class _Box(NamedTuple):
    """Vertex or cell box size and the pitch between neighbouring boxes."""

    w: float
    h: float
    pitch_x: float
    pitch_y: float


DETAIL_BOX = _Box(74.0, 30.0, 104.0, 66.0)
SUMMARY_BOX = _Box(62.0, 30.0, 84.0, 50.0)


def cube_svg(plan: Plan, fabric: str, title: str, subtitle: str) -> str:
    dims, attach = cube_dims(plan, fabric)
    names, hosted = _vertices(plan, fabric, attach)
    index = {n: i for i, n in enumerate(names)}
    layer = plan.metrics[fabric].topology
    per_dim: Counter[int] = Counter()
    wraps: Counter[int] = Counter()
    edges: list[_Edge] = []
    for link in plan.links_of(fabric):
        if link.layer != layer:
            continue
        u, v = index.get(link.a.device), index.get(link.b.device)
        if u is None or v is None:
            continue
        cu, cv = _coords(u, dims), _coords(v, dims)
        diff = [d for d in range(len(dims)) if cu[d] != cv[d]]
        if len(diff) != 1:
            continue
        d = diff[0]
        wrap = dims[d] > 2 and abs(cu[d] - cv[d]) == dims[d] - 1
        per_dim[d] += 1
        wraps[d] += wrap
        edges.append(_Edge(u, v, d, wrap))
    legend = [
        f"dimension {d + 1} (size {k}): {per_dim[d]:,} links"
        + (f", {wraps[d]:,} wrap-around" if wraps[d] else "")
        + (" — join the same position in neighbouring panels (not drawn)" if d >= 2 else "")
        for d, k in enumerate(dims)
    ]
    on, lines = _appliances(plan, fabric)
    legend += lines
    if len(names) <= CUBE_DETAIL_MAX:
        return _detail(dims, names, _Hosted(hosted, on), edges, title, subtitle, legend)
    return _summary(dims, title, subtitle, legend)


class _GridShape(NamedTuple):
    nx: int  # size of dimension 1 (columns)
    ny: int  # size of dimension 2 (rows; 1 for a ring)
    panels: int  # product of the further dimensions


def _grid_shape(dims: list[int]) -> _GridShape:
    x = dims[0]
    y = dims[1] if len(dims) > 1 else 1
    panels = math.prod(dims[2:]) if len(dims) > 2 else 1
    return _GridShape(x, y, panels)


def _heading(svg: Svg, title: str, subtitle: str) -> None:
    svg.text(20, 28, title, "t", anchor="start")
    svg.text(20, 46, subtitle, "st", anchor="start")


def _notes(svg: Svg, notes: list[str], y: float) -> None:
    """One note per line from baseline ``y`` down."""
    for s in notes:
        svg.text(20, y, s, "lg", anchor="start")
        y += 15


# ---- detail: every vertex a box, panels for dimensions 3 and up --------------------------------------


@dataclass(frozen=True)
class _DetailGrid:
    """Where the detail drawing puts panels and vertices."""

    dims: list[int]
    shape: _GridShape
    per_line: int  # panels per line of panels
    lines: int  # lines of panels
    panel_w: float
    panel_h: float
    top: float = 70.0

    @classmethod
    def of(cls, dims: list[int]) -> _DetailGrid:
        shape = _grid_shape(dims)
        pw, ph = shape.nx * DETAIL_BOX.pitch_x + 40, shape.ny * DETAIL_BOX.pitch_y + 50
        per_line = max(1, min(shape.panels, int(1800 // pw) or 1))
        return cls(dims, shape, per_line, math.ceil(shape.panels / per_line), pw, ph)

    @property
    def width(self) -> float:
        return max(self.per_line * self.panel_w + 60, 700.0)

    @property
    def bottom(self) -> float:
        """The y below the last line of panels."""
        return self.top + self.lines * self.panel_h

    def origin(self, panel: int) -> _Point:
        return _Point(
            40 + (panel % self.per_line) * self.panel_w,
            self.top + (panel // self.per_line) * self.panel_h + 18,
        )

    def centre(self, v: int) -> _Point:
        """The centre of vertex ``v``'s box: its panel from dimensions 3 and up, then its grid cell."""
        c = _coords(v, self.dims)
        panel = 0
        mul = 1
        for d in range(2, len(self.dims)):
            panel += c[d] * mul
            mul *= self.dims[d]
        o = self.origin(panel)
        row = c[1] if len(self.dims) > 1 else 0
        return _Point(
            o.x + c[0] * DETAIL_BOX.pitch_x + DETAIL_BOX.w / 2,
            o.y + row * DETAIL_BOX.pitch_y + DETAIL_BOX.h / 2,
        )


def _panel_labels(svg: Svg, grid: _DetailGrid) -> None:
    if grid.shape.panels <= 1:
        return
    for p in range(grid.shape.panels):
        o = grid.origin(p)
        c = _coords(p, grid.dims[2:])
        svg.text(
            o.x, o.y - 6, "panel " + ", ".join(f"d{d + 3}={v}" for d, v in enumerate(c)), "pn", anchor="start"
        )


def _edge(svg: Svg, grid: _DetailGrid, names: list[str], e: _Edge) -> None:
    """A straight line between grid neighbours; a wrap-around link as an arc outside the grid."""
    a, b = grid.centre(e.u), grid.centre(e.v)
    cls = "e" + (" d1" if e.dim == 1 else "") + (" wrap" if e.wrap else "")
    tip = f"{names[e.u]} — {names[e.v]} (dimension {e.dim + 1}{', wrap-around' if e.wrap else ''})"
    if not e.wrap:
        svg.line(a.x, a.y, b.x, b.y, cls, tip)
    elif e.dim == 0:
        yb = a.y + DETAIL_BOX.h / 2
        svg.path(
            f"M{num(a.x)},{num(yb)} "
            f"C{num(a.x)},{num(yb + 22)} {num(b.x)},{num(yb + 22)} {num(b.x)},{num(yb)}",
            cls,
            tip,
        )
    else:
        xl = a.x - DETAIL_BOX.w / 2
        svg.path(
            f"M{num(xl)},{num(a.y)} "
            f"C{num(xl - 26)},{num(a.y)} {num(xl - 26)},{num(b.y)} {num(xl)},{num(b.y)}",
            cls,
            tip,
        )


class _Hosted(NamedTuple):
    """What hangs off each switch vertex: node ports, appliances."""

    nodes: dict[str, int]
    appliances: dict[str, list[str]]


def _appliance_tag(svg: Svg, c: _Point, names: list[str]) -> None:
    """The appliances on a switch vertex as a tag hung under its box, right of the vertical links and
    short of the next column's box (its tooltip names them all)."""
    x, y = c.x + 4, c.y + DETAIL_BOX.h / 2
    svg.line(x + 6, y, x + 6, y + 4, "e")
    label = names[0] if len(names) == 1 else f"{len(names)} appliances"
    svg.rect(x, y + 4, 54, 12, "ap", f"appliances: {', '.join(names)}", rx=2)
    svg.text(x + 2, y + 13, label[:9] + ("…" if len(label) > 9 else ""), "lbl", anchor="start")


def _vertex_boxes(svg: Svg, grid: _DetailGrid, names: list[str], hosted: _Hosted) -> None:
    """A box per vertex; on switch vertices, the number of node ports it hosts and a tag for the
    appliances cabled to it."""
    for v, name in enumerate(names):
        c = grid.centre(v)
        n = hosted.nodes.get(name)
        cls = "v" if hosted.nodes else "vn"
        tip = name + (f": {n} node ports" if n else "")
        svg.rect(
            c.x - DETAIL_BOX.w / 2,
            c.y - DETAIL_BOX.h / 2,
            DETAIL_BOX.w,
            DETAIL_BOX.h,
            cls,
            tip,
            rx=3,
            data_name=name,
        )
        label = name.split("-", 1)[1] if name[:2] in ("c-", "s-", "m-") else name
        svg.text(c.x, c.y + (0 if n else 3), label, "lbl")
        if n:
            svg.text(c.x, c.y + 10, f"{n} node ports", "lbl")
        if name in hosted.appliances:
            _appliance_tag(svg, c, hosted.appliances[name])


def _detail(
    dims: list[int],
    names: list[str],
    hosted: _Hosted,
    edges: list[_Edge],
    title: str,
    subtitle: str,
    legend: list[str],
) -> str:
    grid = _DetailGrid.of(dims)
    height = grid.bottom + 20 + 15 * len(legend) + 10
    svg = Svg(grid.width, height, title, CSS + (CSS_APPLIANCE if hosted.appliances else ""))
    _heading(svg, title, subtitle)
    _panel_labels(svg, grid)
    svg.open("g", class_="edges")
    for e in edges:
        if e.dim < 2:  # higher dimensions join panels: counted in the legend, not drawn
            _edge(svg, grid, names, e)
    svg.close()
    _vertex_boxes(svg, grid, names, hosted)
    _notes(svg, legend, grid.bottom + 20)
    return svg.render()


# ---- summary: the first two dimensions folded into at most FOLD x FOLD cells ----------------------


class _Fold(NamedTuple):
    shape: _GridShape
    bx: int  # vertices per cell along dimension 1
    by: int  # ... along dimension 2
    cx: int  # cells along dimension 1
    cy: int  # ... along dimension 2


def _fold(dims: list[int]) -> _Fold:
    shape = _grid_shape(dims)
    bx, by = math.ceil(shape.nx / FOLD), math.ceil(shape.ny / FOLD)
    return _Fold(shape, bx, by, math.ceil(shape.nx / bx), math.ceil(shape.ny / by))


def _cell_origin(i: int, j: int, top: float) -> _Point:
    return _Point(50 + i * SUMMARY_BOX.pitch_x, top + j * SUMMARY_BOX.pitch_y)


def _cell_links(svg: Svg, f: _Fold, top: float) -> None:
    """Lines between neighbouring cells: dimension 1 across, dimension 2 down."""
    box = SUMMARY_BOX
    for j in range(f.cy):
        for i in range(f.cx):
            x, y = 50 + i * box.pitch_x + box.w / 2, top + j * box.pitch_y + box.h / 2
            if i + 1 < f.cx:
                svg.line(x + box.w / 2, y, x + box.pitch_x - box.w / 2, y, "e")
            if j + 1 < f.cy:
                svg.line(x, y + box.h / 2, x, y + box.pitch_y - box.h / 2, "e d1")


def _wrap_arcs(svg: Svg, f: _Fold, top: float) -> None:
    """One arc per row (dimension 1) and per column (dimension 2) for rings longer than 2."""
    box = SUMMARY_BOX
    if f.shape.nx > 2:
        for j in range(f.cy):
            y = top + j * box.pitch_y + box.h
            x1, x2 = 50 + box.w / 2, 50 + (f.cx - 1) * box.pitch_x + box.w / 2
            svg.path(
                f"M{num(x1)},{num(y)} C{num(x1)},{num(y + 16)} {num(x2)},{num(y + 16)} {num(x2)},{num(y)}",
                "e wrap",
                "wrap-around links of dimension 1",
            )
    if f.shape.ny > 2:
        for i in range(f.cx):
            x = 50 + i * box.pitch_x
            y1, y2 = top + box.h / 2, top + (f.cy - 1) * box.pitch_y + box.h / 2
            svg.path(
                f"M{num(x)},{num(y1)} C{num(x - 22)},{num(y1)} {num(x - 22)},{num(y2)} {num(x)},{num(y2)}",
                "e d1 wrap",
                "wrap-around links of dimension 2",
            )


def _cells(svg: Svg, f: _Fold, top: float) -> None:
    """A box per cell labelled with its vertex count (the last row/column of cells may be partial)."""
    box = SUMMARY_BOX
    for j in range(f.cy):
        for i in range(f.cx):
            w = min(f.bx, f.shape.nx - i * f.bx)
            h = min(f.by, f.shape.ny - j * f.by)
            o = _cell_origin(i, j, top)
            count = w * h * f.shape.panels
            tip = f"x {i * f.bx}–{i * f.bx + w - 1}, y {j * f.by}–{j * f.by + h - 1}: {count:,} vertices"
            svg.rect(o.x, o.y, box.w, box.h, "cell", tip, rx=3, data_count=count)
            svg.text(o.x + box.w / 2, o.y + box.h / 2 + 3, f"{count:,}", "lbl")


def _summary(dims: list[int], title: str, subtitle: str, legend: list[str]) -> str:
    f = _fold(dims)
    top = 80.0
    panels = f.shape.panels
    notes = [
        f"each cell = up to {f.bx} x {f.by} vertices of the first two dimensions"
        + (f", x {panels:,} panels along the other dimensions" if panels > 1 else ""),
        *legend,
    ]
    width = max(f.cx * SUMMARY_BOX.pitch_x + 120, 700.0)
    height = top + f.cy * SUMMARY_BOX.pitch_y + 40 + 15 * len(notes)
    svg = Svg(width, height, title, CSS)
    _heading(svg, title, subtitle)
    svg.open("g", class_="edges")
    _cell_links(svg, f, top)
    _wrap_arcs(svg, f, top)
    svg.close()
    _cells(svg, f, top)
    _notes(svg, notes, top + f.cy * SUMMARY_BOX.pitch_y + 20)
    return svg.render()
