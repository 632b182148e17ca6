"""The data-centre site: rows, racks, power and cabling geometry."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from blueprints.models.base import Model, SafeName


class RackSpec(Model):
    units: int = Field(default=48, ge=10, le=60)
    power_kw: float = Field(default=40.0, gt=0, le=500, description="usable power budget per rack")
    reserved_units: int = Field(default=2, ge=0, le=20, description="units kept for PDUs/patch panels")
    width_m: float = Field(default=0.6, gt=0.3, le=1.5)
    depth_m: float = Field(default=1.2, gt=0.5, le=2.0)


class CablingGeometry(Model):
    aisle_m: float = Field(default=1.2, ge=0.5, le=5.0, description="aisle between rows")
    slack_m: float = Field(default=1.5, ge=0, le=10, description="service loop per cable")
    tray_height_m: float = Field(default=0.5, ge=0, le=3, description="overhead tray above rack top")
    unit_height_m: float = Field(default=0.04445, gt=0, le=0.1)
    in_rack_slack_m: float = Field(
        default=0.5, ge=0, le=10, description="service loop of a cable that stays inside one rack"
    )


class Site(Model):
    name: SafeName = "dc1"
    rows: int = Field(default=1, ge=1, le=500)
    racks_per_row: int = Field(default=16, ge=1, le=500)
    rack: RackSpec = Field(default_factory=RackSpec)
    cabling: CablingGeometry = Field(default_factory=CablingGeometry)
    switch_placement: Literal["network-rack", "top-of-rack", "middle-of-row"] = Field(
        default="network-rack",
        description="where a unit's leaf switches go: a network rack after its compute racks, the top of its "
        "last compute rack (shared with nodes, a network rack only when they do not fit), or a network rack "
        "in the middle of its compute racks",
    )
