"""The data-centre site: rows, racks, power and cabling geometry."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from blueprints.models.base import Model, SafeName
from blueprints.models.naming import render_template

# A rack as the site's floor plan names it (A09, R01-P1, dh2.r14): printable, no spaces, so it survives the
# cable-label printer and NetBox; case kept as given.
RackName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$")]
_RACK_TEMPLATE = re.compile(r"(?:[A-Za-z0-9._-]|\{(?:row|position)(?::0?\d{1,2})?\})+")


class RackSpec(Model):
    units: int = Field(default=48, ge=10, le=60)
    """rack height in rack units (U)"""
    power_kw: float = Field(default=40.0, gt=0, le=500, description="usable power budget per rack")
    reserved_units: int = Field(default=2, ge=0, le=20, description="units kept for PDUs/patch panels")
    width_m: float = Field(default=0.6, gt=0.3, le=1.5)
    """rack width in metres (cable runs)"""
    depth_m: float = Field(default=1.2, gt=0.5, le=2.0)
    """rack depth in metres (cable runs)"""


class CablingGeometry(Model):
    aisle_m: float = Field(default=1.2, ge=0.5, le=5.0, description="aisle between rows")
    slack_m: float = Field(default=1.5, ge=0, le=10, description="service loop per cable")
    tray_height_m: float = Field(default=0.5, ge=0, le=3, description="overhead tray above rack top")
    unit_height_m: float = Field(default=0.04445, gt=0, le=0.1)
    """height of one rack unit in metres (1U = 44.45 mm)"""
    in_rack_slack_m: float = Field(
        default=0.5, ge=0, le=10, description="service loop of a cable that stays inside one rack"
    )


class RackNames(Model):
    """The site's rack names, by row-major slot (row 1 positions 1..N, then row 2 ...)."""

    template: str | None = Field(
        default=None,
        max_length=80,
        description="e.g. A{row:02}-R{position:02}; fields: row, position (1-based); letters keep their case",
    )
    names: list[RackName] | None = Field(
        default=None,
        max_length=250_000,
        description="one name per rack slot, row by row (rows x racks_per_row names)",
    )

    @model_validator(mode="after")
    def _one(self) -> RackNames:
        if (self.template is None) == (self.names is None):
            raise ValueError("give exactly one of `template` or `names`")
        if self.template is not None and not _RACK_TEMPLATE.fullmatch(self.template):
            raise ValueError(
                f"{self.template!r} is not a rack-name template: letters, digits, '.', '_', '-' and the "
                f"fields {{row}}, {{position}} (e.g. A{{row:02}}-R{{position:02}})"
            )
        return self

    def all(self, rows: int, per_row: int) -> list[str]:
        """Every slot's name, row-major."""
        if self.names is not None:
            return list(self.names)
        assert self.template is not None
        return [
            render_template(self.template, {"row": r, "position": p})
            for r in range(1, rows + 1)
            for p in range(1, per_row + 1)
        ]


class Site(Model):
    name: SafeName = "dc1"
    """site name; the first part of every cable label"""
    rows: int = Field(default=1, ge=1, le=500)
    """rows of racks"""
    racks_per_row: int = Field(default=16, ge=1, le=500)
    """racks in each row"""
    rack: RackSpec = Field(default_factory=RackSpec)
    """the racks' size and power budget"""
    cabling: CablingGeometry = Field(default_factory=CablingGeometry)
    """geometry used to size cable lengths"""
    rack_names: RackNames | None = Field(
        default=None,
        description="the site's rack names (labels, NetBox, sheets); default r<row>-<position> (r01-05)",
    )
    switch_placement: Literal["network-rack", "top-of-rack", "middle-of-row"] = Field(
        default="network-rack",
        description="where a unit's leaf switches go: a network rack after its compute racks, the top of its "
        "last compute rack (shared with nodes, a network rack only when they do not fit), or a network rack "
        "in the middle of its compute racks",
    )

    @model_validator(mode="after")
    def _rack_names(self) -> Site:
        """One distinct name per rack slot: a list as long as the site, a template that tells them apart."""
        if self.rack_names is None:
            return self
        slots = self.rows * self.racks_per_row
        given = self.rack_names.names
        if given is not None and len(given) != slots:
            raise ValueError(
                f"`rack_names.names` lists {len(given)} names for {self.rows} rows x {self.racks_per_row} "
                f"racks = {slots} rack slots"
            )
        names = self.rack_names.all(self.rows, self.racks_per_row)
        seen: set[str] = set()
        what = "lists" if given is not None else f"template {self.rack_names.template!r} gives"
        for name in names:
            if name.casefold() in seen:
                raise ValueError(f"`rack_names` {what} the rack name {name!r} twice")
            if len(name) > 40:
                raise ValueError(f"`rack_names` {what} {name!r}, longer than 40 characters")
            seen.add(name.casefold())
        return self
