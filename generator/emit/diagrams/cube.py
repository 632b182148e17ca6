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


def _coords(v: int, dims: list[int]) -> list[int]:
    out = []
    for k in dims:
        v, c = divmod(v, k)
        out.append(c)
    return out


def cube_dims(plan: Plan, fabric: str) -> tuple[list[int], str]:
    topo = plan.cluster.fabrics[fabric].spec.topology
    kind = getattr(topo, "kind", "")
    if kind == "torus":
        return list(topo.dimensions), topo.attach  # type: ignore[union-attr]
    if kind == "hypercube":
        return [2] * topo.dimension, topo.attach  # type: ignore[union-attr]
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


def cube_svg(plan: Plan, fabric: str, title: str, subtitle: str) -> str:
    dims, attach = cube_dims(plan, fabric)
    names, hosted = _vertices(plan, fabric, attach)
    index = {n: i for i, n in enumerate(names)}
    layer = plan.metrics[fabric].topology
    per_dim: Counter[int] = Counter()
    wraps: Counter[int] = Counter()
    edges: list[tuple[int, int, int, bool]] = []  # (u, v, dim, wrap)
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
        edges.append((u, v, d, wrap))
    legend = [
        f"dimension {d + 1} (size {k}): {per_dim[d]:,} links"
        + (f", {wraps[d]:,} wrap-around" if wraps[d] else "")
        + (" — join the same position in neighbouring panels (not drawn)" if d >= 2 else "")
        for d, k in enumerate(dims)
    ]
    if len(names) <= CUBE_DETAIL_MAX:
        return _detail(dims, names, hosted, edges, title, subtitle, legend)
    return _summary(dims, title, subtitle, legend)


def _grid_shape(dims: list[int]) -> tuple[int, int, int]:
    x = dims[0]
    y = dims[1] if len(dims) > 1 else 1
    panels = math.prod(dims[2:]) if len(dims) > 2 else 1
    return x, y, panels


def _detail(
    dims: list[int],
    names: list[str],
    hosted: dict[str, int],
    edges: list[tuple[int, int, int, bool]],
    title: str,
    subtitle: str,
    legend: list[str],
) -> str:
    nx_, ny, panels = _grid_shape(dims)
    cw, ch, px, py = 74.0, 30.0, 104.0, 66.0
    pw, ph = nx_ * px + 40, ny * py + 50
    per_line = max(1, min(panels, int(1800 // pw) or 1))
    lines = math.ceil(panels / per_line)
    width = max(per_line * pw + 60, 700.0)
    top = 70.0
    height = top + lines * ph + 20 + 15 * len(legend) + 10
    svg = Svg(width, height, title, CSS)
    svg.text(20, 28, title, "t", anchor="start")
    svg.text(20, 46, subtitle, "st", anchor="start")

    def origin(panel: int) -> tuple[float, float]:
        return 40 + (panel % per_line) * pw, top + (panel // per_line) * ph + 18

    def centre(v: int) -> tuple[float, float, int]:
        c = _coords(v, dims)
        panel = 0
        mul = 1
        for d in range(2, len(dims)):
            panel += c[d] * mul
            mul *= dims[d]
        ox, oy = origin(panel)
        return ox + c[0] * px + cw / 2, oy + (c[1] if len(dims) > 1 else 0) * py + ch / 2, panel

    if panels > 1:
        for p in range(panels):
            ox, oy = origin(p)
            c = _coords(p, dims[2:])
            svg.text(
                ox,
                oy - 6,
                "panel " + ", ".join(f"d{d + 3}={v}" for d, v in enumerate(c)),
                "pn",
                anchor="start",
            )
    svg.open("g", class_="edges")
    for u, v, d, wrap in edges:
        if d >= 2:
            continue
        x1, y1, _ = centre(u)
        x2, y2, _ = centre(v)
        cls = "e" + (" d1" if d == 1 else "") + (" wrap" if wrap else "")
        tip = f"{names[u]} — {names[v]} (dimension {d + 1}{', wrap-around' if wrap else ''})"
        if not wrap:
            svg.line(x1, y1, x2, y2, cls, tip)
        elif d == 0:
            yb = y1 + ch / 2
            svg.path(
                f"M{num(x1)},{num(yb)} "
                f"C{num(x1)},{num(yb + 22)} {num(x2)},{num(yb + 22)} {num(x2)},{num(yb)}",
                cls,
                tip,
            )
        else:
            xl = x1 - cw / 2
            svg.path(
                f"M{num(xl)},{num(y1)} "
                f"C{num(xl - 26)},{num(y1)} {num(xl - 26)},{num(y2)} {num(xl)},{num(y2)}",
                cls,
                tip,
            )
    svg.close()
    for v, name in enumerate(names):
        x, y, _ = centre(v)
        n = hosted.get(name)
        cls = "v" if hosted else "vn"
        tip = name + (f": {n} node ports" if n else "")
        svg.rect(x - cw / 2, y - ch / 2, cw, ch, cls, tip, rx=3, data_name=name)
        label = name.split("-", 1)[1] if name[:2] in ("c-", "s-", "m-") else name
        svg.text(x, y + (0 if n else 3), label, "lbl")
        if n:
            svg.text(x, y + 10, f"{n} node ports", "lbl")
    y = top + lines * ph + 10
    for s in legend:
        svg.text(20, y + 10, s, "lg", anchor="start")
        y += 15
    return svg.render()


def _summary(dims: list[int], title: str, subtitle: str, legend: list[str]) -> str:
    nx_, ny, panels = _grid_shape(dims)
    bx, by = math.ceil(nx_ / FOLD), math.ceil(ny / FOLD)
    cx, cy = math.ceil(nx_ / bx), math.ceil(ny / by)
    cw, ch, px, py = 62.0, 30.0, 84.0, 50.0
    top = 80.0
    width = max(cx * px + 120, 700.0)
    notes = [
        f"each cell = up to {bx} x {by} vertices of the first two dimensions"
        + (f", x {panels:,} panels along the other dimensions" if panels > 1 else ""),
        *legend,
    ]
    height = top + cy * py + 40 + 15 * len(notes)
    svg = Svg(width, height, title, CSS)
    svg.text(20, 28, title, "t", anchor="start")
    svg.text(20, 46, subtitle, "st", anchor="start")
    svg.open("g", class_="edges")
    for j in range(cy):
        for i in range(cx):
            x, y = 50 + i * px + cw / 2, top + j * py + ch / 2
            if i + 1 < cx:
                svg.line(x + cw / 2, y, x + px - cw / 2, y, "e")
            if j + 1 < cy:
                svg.line(x, y + ch / 2, x, y + py - ch / 2, "e d1")
    if nx_ > 2:
        for j in range(cy):
            y = top + j * py + ch
            x1, x2 = 50 + cw / 2, 50 + (cx - 1) * px + cw / 2
            svg.path(
                f"M{num(x1)},{num(y)} C{num(x1)},{num(y + 16)} {num(x2)},{num(y + 16)} {num(x2)},{num(y)}",
                "e wrap",
                "wrap-around links of dimension 1",
            )
    if ny > 2:
        for i in range(cx):
            x = 50 + i * px
            y1, y2 = top + ch / 2, top + (cy - 1) * py + ch / 2
            svg.path(
                f"M{num(x)},{num(y1)} C{num(x - 22)},{num(y1)} {num(x - 22)},{num(y2)} {num(x)},{num(y2)}",
                "e d1 wrap",
                "wrap-around links of dimension 2",
            )
    svg.close()
    for j in range(cy):
        for i in range(cx):
            w = min(bx, nx_ - i * bx)
            h = min(by, ny - j * by)
            x, y = 50 + i * px, top + j * py
            count = w * h * panels
            svg.rect(
                x,
                y,
                cw,
                ch,
                "cell",
                f"x {i * bx}–{i * bx + w - 1}, y {j * by}–{j * by + h - 1}: {count:,} vertices",
                rx=3,
                data_count=count,
            )
            svg.text(x + cw / 2, y + ch / 2 + 3, f"{count:,}", "lbl")
    y = top + cy * py + 20
    for s in notes:
        svg.text(20, y, s, "lg", anchor="start")
        y += 15
    return svg.render()
