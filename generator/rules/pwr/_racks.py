"""Rack arithmetic shared by the PWR rules: how many nodes of a pool one rack holds by power and space."""

from __future__ import annotations

import math

from blueprints.models.site import Site
from generator.resolve import ResolvedPool


def usable_units(site: Site) -> int:
    return site.rack.units - site.rack.reserved_units


def nodes_per_rack(pool: ResolvedPool, site: Site) -> int:
    """The pool's stated nodes_per_rack, else as many as power and space allow (0: not even one)."""
    if pool.nodes_per_rack:
        return pool.nodes_per_rack
    by_space = usable_units(site) // pool.server.rack_units
    if pool.server.power_kw <= 0:  # cloud instances draw nothing from the blueprint's racks
        return max(0, by_space)
    by_power = math.floor(site.rack.power_kw / pool.server.power_kw + 1e-9)
    return max(0, min(by_power, by_space))
