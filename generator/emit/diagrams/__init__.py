"""Diagrams (``build/diagrams/``): a topology overview per fabric and a rack elevation per row, as SVG.

``topology_svg(plan, fabric)`` draws tiers as rows (rails coloured, dragonfly groups framed, tori as
grids) and switches to a summarised drawing past a few hundred switches (see ``tiered.py`` and
``cube.py``); ``rack_elevation_svgs(plan)`` draws the racks of each row (``racks.py``).
"""

from __future__ import annotations

import re
from pathlib import Path
from xml.sax.saxutils import escape

from generator.emit._registry import BuildContext, Emitter
from generator.emit.diagrams.cube import cube_svg
from generator.emit.diagrams.layout import HANGING, Bundle, mesh_rows, render
from generator.emit.diagrams.racks import rack_elevation_svgs
from generator.emit.diagrams.svg import Svg, num
from generator.emit.diagrams.tiered import (
    DETAIL_MAX_NODE_GROUPS,
    DETAIL_MAX_SWITCHES,
    FabricView,
    detail_layout,
    node_groups,
    summary_layout,
)
from generator.fsutil import atomic_write_text
from generator.plan.model import Plan
from generator.resolve import ResolvedCluster

NAME = "diagrams"

__all__ = ["NAME", "applies", "emit", "rack_elevation_svgs", "render_all", "stacked_svg", "topology_svg"]


def applies(cluster: ResolvedCluster) -> bool:
    """On-prem clusters with at least one fabric topology (cloud plans have no racks or cabled fabric)."""
    return not cluster.is_cloud and any(f.spec.topology is not None for f in cluster.fabrics.values())


def _subtitle(plan: Plan, fabric: str) -> str:
    m = plan.metrics[fabric]
    rf = plan.cluster.fabrics[fabric]
    tiers = " · ".join(f"{n:,} {t}" for t, n in m.switches.items())
    cables = " · ".join(f"{n:,} {layer.replace('_', '–')}" for layer, n in m.cables.items())
    return (
        f"{m.topology} · {rf.technology} ({rf.speed_gbps:g} Gb/s) · {m.endpoints:,} node ports · "
        f"switches: {tiers or 'none'} · cables: {cables}"
    )


def _empty(plan: Plan, fabric: str) -> str:
    title = f"{plan.cluster.name}: no {fabric} fabric in the plan"
    svg = Svg(640, 80, title, "text{font-size:14px}")
    svg.text(20, 40, title, "", anchor="start")
    return svg.render()


def _per_pair(bundles: list[Bundle]) -> str:
    per = sorted({b.cables for b in bundles})
    return (
        f"{per[0]} cable(s) per pair"
        if len(per) == 1
        else f"{per[0]}–{per[-1]} cables per pair (wider = more)"
    )


def topology_svg(plan: Plan, fabric: str = "compute") -> str:
    """The fabric overview as one SVG document (deterministic text)."""
    if fabric not in plan.metrics:
        return _empty(plan, fabric)
    title = f"{plan.cluster.name}: {fabric} fabric"
    kind = plan.metrics[fabric].topology
    if kind in ("torus", "hypercube"):
        return cube_svg(plan, fabric, title, _subtitle(plan, fabric))
    view = FabricView.of(plan, fabric)
    detailed = len(view.switches) <= DETAIL_MAX_SWITCHES and len(node_groups(view)) <= DETAIL_MAX_NODE_GROUPS
    lay = detail_layout(view, title) if detailed else summary_layout(view, title)
    lay.subtitle = _subtitle(plan, fabric) + ("" if detailed else " · summarised")
    if detailed and view.switches:
        meshes = mesh_rows(lay)
        for (first, second), bundles in sorted(meshes.items()):
            lay.legend.append(
                f"{first}–{second}: every {first} switch to every {second} switch ({_per_pair(bundles)}), "
                "drawn as a bus; hover a switch's rise for its cables"
            )
        in_mesh = {id(b) for bundles in meshes.values() for b in bundles}
        pairs = [
            b
            for b in lay.bundles
            if id(b) not in in_mesh
            and lay.boxes[b.a].row not in HANGING
            and lay.boxes[b.b].row not in HANGING
        ]
        if pairs:
            lay.legend.append(
                ("each other" if meshes else "each")
                + f" switch-to-switch line is one switch pair; {_per_pair(pairs)}"
            )
        lay.legend.append(
            "node boxes group the nodes that share the same switches; lines to them are coloured by rail"
            if view.is_rail
            else "node boxes group the nodes that share the same switches"
        )
    if view.appliances:
        lay.legend.append(
            f"appliance boxes: the {len(view.appliances)} device(s) on switch ports besides the nodes "
            "(blueprint appliances:), under the switches their cables go to"
        )
    if kind == "dragonfly" and detailed:  # summarised, a dragonfly draws no group frames and no local arcs
        lay.legend.append(
            "orange arcs: local links inside a group (frames); dark gold arcs: global links between groups"
        )
    elif not detailed:
        lay.legend.insert(
            0,
            f"summarised: {len(view.switches):,} switches in at most 12 boxes per tier; bundle labels "
            "are cable counts (hover a line for its ends)",
        )
    return render(lay)


_ROOT = re.compile(r'<svg xmlns="http://www.w3.org/2000/svg" width="([\d.]+)" height="([\d.]+)"')
_STYLE = re.compile(r"<style>(.*?)</style>", re.S)


def _scoped(css: str, scope: str) -> str:
    """Each CSS rule limited to one drawing of a stacked document (the drawings' class names overlap)."""
    return re.sub(
        r"([^{}]+)\{",
        lambda m: ",".join(f".{scope} {sel.strip()}" for sel in m.group(1).split(",")) + "{",
        css,
    )


def stacked_svg(plan: Plan, fabrics: list[str]) -> str:
    """Several fabrics' drawings in one SVG document, one under the other (``topology --fabric all``)."""
    parts: list[str] = []
    width = height = 0.0
    for i, fabric in enumerate(fabrics):
        doc = topology_svg(plan, fabric)
        root = _ROOT.search(doc)
        assert root is not None, "topology_svg writes its root element with width and height"
        w, h = float(root.group(1)), float(root.group(2))
        body = doc[root.start() :].replace("<svg ", f'<svg x="0" y="{num(height)}" class="f{i}" ', 1)
        css = _STYLE.search(body)
        if css is not None:
            scoped = f"<style>{_scoped(css.group(1), f'f{i}')}</style>"
            body = body[: css.start()] + scoped + body[css.end() :]
        parts.append(body.rstrip("\n"))
        width, height = max(width, w), height + h
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{num(width)}" height="{num(height)}" '
        f'viewBox="0 0 {num(width)} {num(height)}">'
    )
    title = f"<title>{escape(plan.cluster.name)}: {', '.join(fabrics)} fabrics</title>"
    return "\n".join(['<?xml version="1.0" encoding="UTF-8"?>', head, title, *parts, "</svg>", ""])


def render_all(cluster: ResolvedCluster, plan: Plan) -> dict[str, str]:
    files = {f"topology-{fabric}.svg": topology_svg(plan, fabric) for fabric in sorted(plan.metrics)}
    files.update(rack_elevation_svgs(plan))
    return files


def emit(cluster: ResolvedCluster, plan: Plan, out: Path) -> None:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for name, text in render_all(cluster, plan).items():
        atomic_write_text(out / name, text)


class DiagramsEmitter(Emitter):
    name = NAME
    order = 60

    def applies(self, cluster: ResolvedCluster) -> bool:
        return applies(cluster)

    def emit(self, ctx: BuildContext) -> None:
        emit(ctx.cluster, ctx.plan, ctx.out)
