"""Fabric topologies and their parameters."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field, field_validator

from blueprints.models.base import Model
from blueprints.models.naming import PortLayout, SwitchNames

RATIO_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*:\s*(\d+(?:\.\d+)?)\s*$")


def parse_ratio(text: str) -> tuple[float, float]:
    m = RATIO_RE.match(text)
    if not m:
        raise ValueError(f"`{text}` is not a ratio like 1:1 or 2:1 (downlinks:uplinks)")
    d, u = float(m.group(1)), float(m.group(2))
    if d <= 0 or u <= 0:
        raise ValueError(f"`{text}`: both sides of the ratio must be positive")
    return d, u


class FatTree(Model):
    kind: Literal["fat-tree"]
    tiers: Literal[2, 3] = 2
    switch: str = Field(description="switch catalogue id used at every tier, e.g. qm9700")
    rail_optimized: bool = True
    oversubscription: str = Field(default="1:1", description="leaf downlinks:uplinks, e.g. 1:1 or 2:1")
    scalable_unit: int | None = Field(default=None, ge=1, le=4096, description="nodes per scalable unit")
    growth_nodes: int | None = Field(
        default=None, ge=1, le=1_000_000, description="size spines/cores for this many nodes"
    )
    names: SwitchNames | None = Field(default=None, description="site names of the switches, per tier")
    port_layout: PortLayout | None = Field(
        default=None,
        description="leaf ports facing nodes / spines (default: the switch model's, else 1.. up)",
    )

    @field_validator("oversubscription")
    @classmethod
    def _ratio(cls, v: str) -> str:
        parse_ratio(v)
        return v


class Dragonfly(Model):
    kind: Literal["dragonfly"]
    switch: str
    p: int = Field(ge=1, le=512, description="terminal ports per router")
    a: int = Field(ge=1, le=512, description="routers per group")
    h: int = Field(ge=1, le=512, description="global links per router")
    groups: int = Field(ge=1, le=100_000)
    global_arrangement: Literal["absolute", "relative", "circulant"] = "absolute"


class Torus(Model):
    kind: Literal["torus"]
    dimensions: list[Annotated[int, Field(ge=2, le=1024)]] = Field(min_length=1, max_length=6)
    attach: Literal["direct", "switch"] = Field(
        default="direct", description="nodes are the vertices, or hang off switches"
    )
    switch: str | None = None
    nodes_per_switch: int = Field(default=1, ge=1, le=512)


class Hypercube(Model):
    kind: Literal["hypercube"]
    dimension: int = Field(ge=1, le=20)
    attach: Literal["direct", "switch"] = "direct"
    switch: str | None = None
    nodes_per_switch: int = Field(default=1, ge=1, le=512)


class LeafSpine(Model):
    """A simple leaf/spine for storage and management networks."""

    kind: Literal["leaf-spine"]
    switch: str
    spine_switch: str | None = None
    oversubscription: str = "1:1"
    names: SwitchNames | None = Field(default=None, description="site names of the switches, per tier")
    port_layout: PortLayout | None = Field(
        default=None,
        description="leaf ports facing nodes / spines (default: the switch model's, else 1.. up)",
    )

    @field_validator("oversubscription")
    @classmethod
    def _ratio(cls, v: str) -> str:
        parse_ratio(v)
        return v


Topology = Annotated[FatTree | Dragonfly | Torus | Hypercube | LeafSpine, Field(discriminator="kind")]
