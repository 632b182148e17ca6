"""Rack arithmetic shared by the PWR rules: how many nodes of a pool one rack holds by power and space."""

from __future__ import annotations

from blueprints.models.site import Site
from generator.resolve import ResolvedPool


def usable_units(site: Site) -> int:
    return site.rack.units - site.rack.reserved_units


def stated_rack_share(pool: ResolvedPool) -> int:
    """The nodes of the pool one rack gets by its stated nodes_per_rack (0: none stated): never more than
    the pool has (4 trays of an 18-tray NVL72 default make one rack of 4)."""
    return min(pool.nodes_per_rack, pool.count) if pool.nodes_per_rack else 0


def nodes_per_rack(pool: ResolvedPool, site: Site) -> int:
    """As many as power and space allow, at most the pool's stated nodes_per_rack (0: not even one): what
    ``racks_for`` divides by."""
    from generator.plan.placement import servers_per_rack

    fit = servers_per_rack(site, pool.server.rack_units, pool.server.power_kw)
    return min(fit, pool.nodes_per_rack or fit)
