"""The data-centre site: rows, racks, power and cabling geometry."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from blueprints.models.base import Model, SafeName


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
    switch_placement: Literal["network-rack", "top-of-rack", "middle-of-row"] = Field(
        default="network-rack",
        description="where a unit's leaf switches go: a network rack after its compute racks, the top of its "
        "last compute rack (shared with nodes, a network rack only when they do not fit), or a network rack "
        "in the middle of its compute racks",
    )
