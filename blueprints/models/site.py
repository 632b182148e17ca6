"""The data-centre site: rows, racks, power and cabling geometry."""

import re
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from blueprints.models.base import Model, SafeName
from blueprints.models.naming import render_template

# A rack as the site's floor plan names it (A09, R01-P1, dh2.r14): printable, no spaces, so it survives the
# cable-label printer and NetBox; case kept as given.
RACK_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$"
RackName = Annotated[str, StringConstraints(pattern=RACK_NAME_PATTERN)]
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

    @model_validator(mode="after")
    def _room_left(self) -> "RackSpec":
        # the planner places switches into what is left (placing.py: units - reserved_units per rack)
        if self.reserved_units >= self.units:
            raise ValueError(
                f"reserved_units {self.reserved_units} leaves no usable unit in a {self.units}U rack: "
                "keep it below units"
            )
        return self


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
    def _one(self) -> "RackNames":
        if (self.template is None) == (self.names is None):
            raise ValueError("give exactly one of `template` or `names`")
        if self.template is not None and not _RACK_TEMPLATE.fullmatch(self.template):
            raise ValueError(
                f"{self.template!r} is not a rack-name template: letters, digits, '.', '_', '-' and the "
                f"fields {{row}}, {{position}} (e.g. A{{row:02}}-R{{position:02}})"
            )
        if self.template is not None:
            # the names it gives obey RackName as a list's do: `-{row}-{position}` passed, and `-1-1` reached
            # labels and NetBox, where a listed `-1-1` is refused (a field renders digits: row 1 shows all)
            sample = render_template(self.template, {"row": 1, "position": 1})
            if not re.fullmatch(RACK_NAME_PATTERN, sample):
                raise ValueError(
                    f"template {self.template!r} gives rack names such as {sample!r}: a rack name starts "
                    "with a letter or digit (then letters, digits, '.', '_', '-'; at most 40 characters)"
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


# A placement unit as the plan names it: a scalable unit `su3`, a leaf's nodes `u2`, a dragonfly group `g1`.
UnitName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_-]{0,39}$")]


class NetworkRack(Model):
    """One network rack that holds the switches of several units (a site with one leaf rack per two
    scalable units): their compute leaves and the storage/management leaves serving them, stacked from the
    bottom. The rack sits in the slot `rack` names, else right after the compute racks of the first listed
    unit the plan places (between `su1` and `su2` for `[su1, su2]`)."""

    units: list[UnitName] = Field(min_length=1, max_length=1000)
    """the units whose leaves share this rack: `su1`, `su2` ... (fat-tree scalable units), `u1` ... (the
    nodes of one leaf, without rail optimisation), `g1` ... (dragonfly groups), or a pool's name"""
    rack: RackName | None = None
    """the rack that holds them, by the site's name (`rack_names`) or the default id (`r01-09`): the placement
    keeps that slot for it; default: the slot right after the first unit's compute racks"""


class Site(Model):
    name: SafeName = "dc1"
    """site name; the first part of every cable label"""
    rows: int = Field(default=1, ge=1, le=500)
    """rows of racks"""
    racks_per_row: int = Field(default=16, ge=1, le=500)
    """racks in each row"""
    rack: RackSpec = Field(default_factory=dict, validate_default=True)  # its defaults: base.py
    """the racks' size and power budget"""
    cabling: CablingGeometry = Field(default_factory=dict, validate_default=True)  # its defaults: base.py
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
    network_racks: list[NetworkRack] | None = Field(default=None, max_length=10_000)
    """network racks shared by several units (e.g. `[{units: [su1, su2]}, {units: [su3, su4]}]`): the
    leaves of the listed units go into one rack; units not listed keep `switch_placement`"""

    @model_validator(mode="after")
    def _rack_names(self) -> "Site":
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
            if not re.fullmatch(RACK_NAME_PATTERN, name):  # as RackName checks a listed name
                raise ValueError(f"`rack_names` {what} {name!r}, which is not a rack name")
            seen.add(name.casefold())
        return self

    @model_validator(mode="after")
    def _one_rack_per_unit(self) -> "Site":
        """A unit's leaves sit in one rack: no unit in two `network_racks` entries."""
        seen: dict[str, int] = {}
        racks: dict[str, int] = {}
        for i, group in enumerate(self.network_racks or []):
            if group.rack is not None:
                if group.rack.casefold() in racks:
                    raise ValueError(
                        f"`network_racks` entries {racks[group.rack.casefold()]} and {i} both name rack "
                        f"{group.rack!r}: list the units of one rack in one entry"
                    )
                racks[group.rack.casefold()] = i
            for unit in group.units:
                if unit in seen:
                    where = "twice in" if seen[unit] == i else f"in entries {seen[unit]} and"
                    raise ValueError(
                        f"`network_racks` lists unit {unit!r} {where} {i}: its leaves sit in one rack"
                    )
                seen[unit] = i
        return self
