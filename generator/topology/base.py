"""What a topology builder returns: switches and links in a fixed, deterministic order."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class TopologyError(ValueError):
    """A builder's arguments describe a fabric that cannot be built (with the numbers why)."""


@dataclass(frozen=True, slots=True)
class Terminal:
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
    name: str
    tier: str  # leaf | spine | core | router | switch
    ports: int  # logical ports at the fabric speed
    ports_per_cage: int = 1
    su: int | None = None
    pod: int | None = None
    rail: int | None = None
    index: int = 0
    uplink_ports: int = 0  # separate uplink ports (e.g. SN2201's 4 x 100G), numbered after `ports`


@dataclass(frozen=True, slots=True)
class PortRef:
    device: str
    port: int | Terminal  # switch logical port number, or the node terminal


@dataclass(frozen=True, slots=True)
class RawLink:
    a: PortRef
    b: PortRef
    layer: str
    rail: int | None = None
    speed_gbps: float | None = None  # None = the fabric speed
    group: str | None = None  # numbering group for stable cable ids (leaf-spine: the placement unit)


@dataclass
class BuiltFabric:
    kind: str  # fat-tree | dragonfly | torus | hypercube | leaf-spine
    switches: list[SwitchSpec]
    links: list[RawLink]
    params: dict[str, Any] = field(default_factory=dict)  # builder facts the metrics use


def smallest_divisor_at_least(n: int, minimum: int) -> int | None:
    """Smallest divisor of ``n`` that is >= ``minimum`` (spine counts that split uplinks evenly)."""
    for d in range(max(1, minimum), n + 1):
        if n % d == 0:
            return d
    return None


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)
