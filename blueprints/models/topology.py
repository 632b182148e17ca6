"""Fabric topologies and their parameters."""

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
    """fat-tree: a folded Clos of 2 or 3 tiers"""
    tiers: Literal[2, 3] = 2
    """switch tiers: 2 (leaf, spine) or 3 (leaf, spine, core)"""
    switch: str = Field(description="switch catalogue id used at every tier, e.g. qm9700")
    rail_optimized: bool = True
    """rail-optimised: NIC r of every node in a scalable unit goes to leaf r"""
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
    """dragonfly: groups of routers joined by global links"""
    switch: str
    """router (switch) catalogue id"""
    p: int = Field(ge=1, le=512, description="terminal ports per router")
    a: int = Field(ge=1, le=512, description="routers per group")
    h: int = Field(ge=1, le=512, description="global links per router")
    groups: int = Field(ge=1, le=100_000)
    """number of groups (g)"""
    global_arrangement: Literal["absolute", "relative", "circulant"] = "absolute"
    """how global links are wired between groups: absolute, relative or circulant"""


class Torus(Model):
    kind: Literal["torus"]
    """torus: a k-ary n-cube with wrap-around links"""
    dimensions: list[Annotated[int, Field(ge=2, le=1024)]] = Field(min_length=1, max_length=6)
    """size of each dimension, e.g. [4, 4] for a 4 x 4 2-D torus"""
    attach: Literal["direct", "switch"] = Field(
        default="direct", description="nodes are the vertices, or hang off switches"
    )
    switch: str | None = None
    """switch catalogue id when attach is switch"""
    nodes_per_switch: int = Field(default=1, ge=1, le=512)
    """nodes per switch when attach is switch"""

    @property
    def vertex_dims(self) -> list[int]:
        """The vertices along each dimension (the builder's and the rules' one reading of the shape)."""
        return list(self.dimensions)


class Hypercube(Model):
    kind: Literal["hypercube"]
    """hypercube: 2^dimension vertices, one link per dimension"""
    dimension: int = Field(ge=1, le=20)
    """hypercube dimension n (2^n vertices)"""
    attach: Literal["direct", "switch"] = "direct"
    """nodes are the vertices (direct), or hang off switches (switch)"""
    switch: str | None = None
    """switch catalogue id when attach is switch"""
    nodes_per_switch: int = Field(default=1, ge=1, le=512)
    """nodes per switch when attach is switch"""

    @property
    def vertex_dims(self) -> list[int]:
        """A hypercube of dimension n is the 2-ary n-cube: two vertices along each of n dimensions."""
        return [2] * self.dimension


class LeafSpine(Model):
    """A simple leaf/spine for storage and management networks."""

    kind: Literal["leaf-spine"]
    """leaf-spine: a simple two-tier network for storage and management"""
    switch: str
    """leaf switch catalogue id"""
    spine_switch: str | None = None
    """spine switch catalogue id (default: the leaf switch)"""
    oversubscription: str = "1:1"
    """leaf downlinks:uplinks, e.g. 1:1 or 3:1"""
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
