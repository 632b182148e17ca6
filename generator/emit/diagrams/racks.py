"""Rack elevations, one SVG per row: every rack's units bottom to top, each device drawn in the units
it occupies with its name, and the rack's planned power against its budget.

Racks wrap onto several lines of ``RACKS_PER_LINE`` so an 80-rack row stays readable when printed.
"""

from __future__ import annotations

from collections import defaultdict

from generator.emit.diagrams.svg import Svg
from generator.plan.model import Device, Plan, Rack

U_PX = 11.0
RACK_W = 150.0
GAP = 26.0
RACKS_PER_LINE = 16
HEAD = 34.0  # rack id and purpose above the rack
FOOT = 40.0  # power bar below

CSS = (
    "text{font-size:9px;fill:#222}.t{font-size:16px;font-weight:bold}.st{font-size:11px;fill:#444}"
    ".frame{fill:#fafafa;stroke:#333;stroke-width:1.2}.res{fill:#e6e6e6}.ru{stroke:#ddd;stroke-width:0.5}"
    ".dev{stroke:#333;stroke-width:0.6}.node{fill:#cfe2f3}.gpu{fill:#9fc5e8}.storage{fill:#d9ead3}"
    ".management,.login{fill:#fff2cc}.leaf{fill:#b6d7a8}.spine{fill:#a4c2f4}.core{fill:#b4a7d6}"
    ".router{fill:#f9cb9c}.switch{fill:#b6d7a8}.pw{fill:#e0e0e0}.pok{fill:#6aa84f}.phi{fill:#e69138}"
    ".pover{fill:#cc0000}.rid{font-size:11px;font-weight:bold}.un{font-size:7px;fill:#999}"
)


def _dev_class(d: Device) -> str:
    return (
        f"dev {d.role}"
        if d.role in ("gpu", "storage", "management", "login", "leaf", "spine", "core", "router", "switch")
        else "dev node"
    )


def _power_class(rack: Rack) -> str:
    ratio = rack.power_kw / rack.power_budget_kw if rack.power_budget_kw else 0.0
    return "pover" if ratio > 1.0 + 1e-9 else ("phi" if ratio > 0.9 else "pok")


def row_svg(plan: Plan, row: int, racks: list[Rack]) -> str:
    rack_h = max(r.units for r in racks) * U_PX
    per_line = min(RACKS_PER_LINE, len(racks))
    line_h = HEAD + rack_h + FOOT + 24
    title = f"{plan.cluster.name}: row {row} rack elevation"
    svg = Svg(40 + per_line * (RACK_W + GAP), 70 + -(-len(racks) // per_line) * line_h, title, CSS)
    svg.text(20, 28, title, "t", anchor="start")
    svg.text(
        20,
        46,
        f"{len(racks)} racks · {sum(len(r.devices) for r in racks):,} devices · "
        f"{sum(r.power_kw for r in racks):,.1f} kW planned of "
        f"{sum(r.power_budget_kw for r in racks):,.1f} kW budget",
        "st",
        anchor="start",
    )
    for i, rack in enumerate(sorted(racks, key=lambda r: r.position)):
        x = 30 + (i % per_line) * (RACK_W + GAP)
        _rack(svg, plan, rack, x, 64 + (i // per_line) * line_h, rack_h)
    return svg.render()


def _rack(svg: Svg, plan: Plan, rack: Rack, x: float, top: float, rack_h: float) -> None:
    """One rack at (x, top): its name, frame, reserved units, unit numbers, devices and power bar."""
    y0 = top + HEAD  # top of the rack frame
    svg.text(x + RACK_W / 2, top + 14, rack.id, "rid")
    svg.text(x + RACK_W / 2, top + 27, f"{rack.purpose} · {rack.used_units}/{rack.units} U", "")
    svg.rect(x, y0, RACK_W, rack_h, "frame")
    reserved = min(rack.units, plan.cluster.blueprint.site.rack.reserved_units)
    if reserved > 0:  # PDUs / patch panels at the top, per site.rack.reserved_units
        svg.rect(x, y0, RACK_W, reserved * U_PX, "res", f"{reserved} U reserved")
    for u in range(1, rack.units + 1, 6):
        svg.text(x - 3, y0 + rack_h - (u - 1) * U_PX - 2, str(u), "un", anchor="end")
    devices = plan.device_by_name
    for name in rack.devices:
        d = devices.get(name)
        if d is None or d.u is None:
            continue
        h = d.height_u * U_PX
        y = y0 + rack_h - (d.u - 1) * U_PX - h
        tip = (
            f"{d.name} · {d.model} · U{d.u}"
            + (f"-{d.u + d.height_u - 1}" if d.height_u > 1 else "")
            + f" · {d.power_kw:g} kW"
        )
        svg.rect(x + 2, y + 0.5, RACK_W - 4, h - 1, _dev_class(d), tip)
        label = f"{d.name} ({d.model})" if d.height_u > 1 else d.name
        svg.text(x + RACK_W / 2, y + min(h, 2 * U_PX) / 2 + 3, label[:30], "")
    # power bar: planned draw against the budget
    by = y0 + rack_h + 8
    frac = min(1.0, rack.power_kw / rack.power_budget_kw) if rack.power_budget_kw else 0.0
    svg.rect(x, by, RACK_W, 9, "pw")
    svg.rect(
        x, by, RACK_W * frac, 9, _power_class(rack), f"{rack.power_kw:g} kW of {rack.power_budget_kw:g} kW"
    )
    svg.text(x + RACK_W / 2, by + 21, f"{rack.power_kw:.1f} / {rack.power_budget_kw:g} kW", "")


def rack_elevation_svgs(plan: Plan) -> dict[str, str]:
    """File name → SVG, one per row that holds racks (``rack-elevation-row01.svg``)."""
    by_row: dict[int, list[Rack]] = defaultdict(list)
    for rack in plan.racks:
        by_row[rack.row].append(rack)
    width = max(2, len(str(max(by_row, default=1))))
    return {
        f"rack-elevation-row{row:0{width}d}.svg": row_svg(plan, row, racks)
        for row, racks in sorted(by_row.items())
    }
