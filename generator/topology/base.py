"""What a topology builder returns: switches and links in a fixed, deterministic order."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import NamedTuple


class TopologyError(ValueError):
    """A builder's arguments describe a fabric that cannot be built (with the numbers why)."""


# Terminal, PortRef and RawLink are NamedTuples, not frozen dataclasses: a frozen dataclass sets each field
# through object.__setattr__, so the 20,000 cables of the dragonfly example (60,000 objects) cost 40 ms to
# make instead of 18 (issue 32: validate's CPU). Immutable and compared by value either way.


class Terminal(NamedTuple):
    """One node port to attach: host name, port name (``mlx5_0/1``) and its number on the NIC."""

    host: str
    port: str
    port_number: int
    rail: int  # compute NIC index of the node (0-based)
    cage: int | None = None
    cage_port: int | None = None
    netdev: str | None = None
    faceplate: str | None = None  # chassis label (OSFP1P1) from the port map


@dataclass(frozen=True, slots=True)
class SwitchSpec:
    """One switch a builder places: its name, tier and logical ports."""

    name: str
    tier: str  # leaf | spine | core | router | switch
    ports: int  # logical ports at the fabric speed
    ports_per_cage: int = 1
    su: int | None = None
    pod: int | None = None
    rail: int | None = None
    index: int = 0
    uplink_ports: int = 0  # separate uplink ports (e.g. SN2201's 4 x 100G), numbered after `ports`


class PortRef(NamedTuple):
    """One end of a raw link: a switch port number or a node terminal."""

    device: str
    port: int | Terminal  # switch logical port number, or the node terminal


class RawLink(NamedTuple):
    """One cable as a builder makes it, before ids, racks and media."""

    a: PortRef
    b: PortRef
    layer: str
    rail: int | None = None
    speed_gbps: float | None = None  # None = the fabric speed
    group: str | None = None  # numbering group for stable cable ids (leaf-spine: the placement unit)


@dataclass(frozen=True, slots=True)
class SpineLayer:
    """How the leaves meet the spines (2 tiers; the pods' spines of 3 tiers)."""

    spines: int  # every spine of the fabric
    per_pair: int  # links between a leaf and each of its spines (the most, when leaves differ)
    spine_links: int  # links from the leaves into one spine: what the loss of a spine takes away


@dataclass(frozen=True, slots=True)
class CoreLayer:
    """3 tiers: pods of leaves and spines; spine *s* of every pod joins core group *s*."""

    pods: int
    spines_per_pod: int
    cores_per_group: int
    core_pair: int  # links from a spine to each core of its group (the most, when pods differ)
    leaves_per_pod: int  # links from a pod's leaves into one of its spines (fat-tree: one per leaf)
    spine_down: int  # spine ports facing leaves
    spine_up: int  # spine ports facing cores (the most used, leaf-spine)
    pods_final: int | None = None  # pods the declared growth will have (fat-tree)

    @property
    def cores(self) -> int:
        return self.spines_per_pod * self.cores_per_group


@dataclass(frozen=True, slots=True, kw_only=True)
class ClosParams:
    """What both leaf/spine(/core) builders report (the metrics read these)."""

    radix: int  # leaf ports at the fabric speed
    tiers: int  # 2 or 3
    ratio: tuple[float, float]  # down:up oversubscription asked for
    down: int  # leaf ports that may face nodes
    up: int  # leaf ports facing spines
    first_up: int  # number of the first leaf uplink port
    leaves: int
    leaves_final: int  # leaves the declared growth will have
    spine: SpineLayer | None  # None: a single switch carries every node
    core: CoreLayer | None = None  # 3 tiers
    uplink_speed_gbps: float | None = None  # None: leaf uplinks run at the fabric speed

    @property
    def single_switch(self) -> bool:
        return self.spine is None


@dataclass(frozen=True, slots=True, kw_only=True)
class FatTreeParams(ClosParams):
    """The fat-tree's numbers as built (rails, the down ports nodes can occupy)."""

    down_used: int  # down ports nodes (present or declared growth) can ever occupy
    rails: int
    rail_optimized: bool
    su_nodes: int  # nodes per placement unit


@dataclass(frozen=True, slots=True, kw_only=True)
class LeafSpineParams(ClosParams):
    """The leaf-spine's numbers as built, and the placement unit of each leaf."""

    leaf_unit: Mapping[str, str]  # leaf name -> the placement unit whose rack it sits in


@dataclass(frozen=True, slots=True)
class DragonflyParams:
    """The dragonfly's numbers as built (p, a, h, groups)."""

    p: int  # terminal ports per router
    a: int  # routers per group
    h: int  # global ports per router
    groups: int
    radix: int
    arrangement: str  # absolute | relative | circulant
    routers: int
    global_links: int  # global cables built
    global_ports: int  # global ports of all routers


@dataclass(frozen=True, slots=True)
class CubeParams:
    """The torus or hypercube as built: its dimensions, vertices and degree."""

    dims: tuple[int, ...]  # vertices along each dimension (hypercube: all 2)
    vertices: int
    degree: int  # cube ports per vertex
    attach: str  # direct (node ports cabled to neighbours) | switch
    nodes_per_switch: int


FabricParams = FatTreeParams | LeafSpineParams | DragonflyParams | CubeParams


@dataclass
class BuiltFabric:
    """What a builder returns: the switches and cables of one fabric and its parameters."""

    kind: str  # fat-tree | dragonfly | torus | hypercube | leaf-spine
    switches: list[SwitchSpec]
    links: list[RawLink]
    params: FabricParams  # builder facts the metrics, placement units and site layout use


def smallest_divisor_at_least(n: int, minimum: int) -> int | None:
    """Smallest divisor of ``n`` that is >= ``minimum`` (spine counts that split uplinks evenly)."""
    for d in range(max(1, minimum), n + 1):
        if n % d == 0:
            return d
    return None


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _exact(ratio: tuple[float, float]) -> tuple[Fraction, Fraction]:
    """The ratio's sides as the decimals the user wrote (1.7 is 17/10, not the nearest binary float), so
    that 64 ports at 1.5:1.7 split 30 + 34 everywhere instead of 29 or 30 depending on the float path."""
    return Fraction(repr(ratio[0])), Fraction(repr(ratio[1]))


def ratio_down_ports(radix: int, ratio: tuple[float, float]) -> int:
    """Ports of a leaf of ``radix`` that may face nodes at a d:u oversubscription: floor(radix·d/(d+u)).
    The one computation of the leaf split: builders and rules (generator/rules/sizing.py) read it."""
    d, u = _exact(ratio)
    return int(radix * d // (d + u))


def uplinks_for(down: int, ratio: tuple[float, float]) -> int:
    """Uplinks ``down`` node ports need at a d:u oversubscription: ceil(down·u/d)."""
    d, u = _exact(ratio)
    return -(-down * u.numerator * d.denominator // (u.denominator * d.numerator))
