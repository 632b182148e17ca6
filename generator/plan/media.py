"""Cable length estimates and the choice of medium and transceivers from the catalogue."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from blueprints.catalog import Catalog
from blueprints.catalog.schema import Medium
from blueprints.models.site import Site


@dataclass(frozen=True)
class Position:
    """Where a device sits: its rack's floor position and its rack unit."""

    x_m: float
    y_m: float
    u: int
    rack: str


def rack_xy(site: Site, row: int, position: int) -> tuple[float, float]:
    return (position - 1) * site.rack.width_m, (row - 1) * (site.rack.depth_m + site.cabling.aisle_m)


def run_lengths(site: Site) -> Callable[[Position, Position], float]:
    """The cable run between two positions of ``site``: a Manhattan run through the overhead tray (vertical
    rise at both ends) plus the service loop; the site's constants read once (the plan measures 315,000
    runs at 100k GPUs)."""
    geo = site.cabling
    units, unit_m, tray_m = site.rack.units, geo.unit_height_m, geo.tray_height_m
    width_m, in_rack_slack_m, slack_m = site.rack.width_m, geo.in_rack_slack_m, geo.slack_m

    def measure(a: Position, b: Position) -> float:
        if a.rack == b.rack:
            return abs(a.u - b.u) * unit_m + width_m + in_rack_slack_m
        rise_a = (units - a.u) * unit_m + tray_m
        rise_b = (units - b.u) * unit_m + tray_m
        return rise_a + rise_b + abs(a.x_m - b.x_m) + abs(a.y_m - b.y_m) + slack_m

    return measure


class MediaChooser:
    def __init__(self, catalog: Catalog) -> None:
        self.media = sorted(catalog.media.items(), key=lambda kv: (kv[1].preference, kv[0]))
        self.transceivers = sorted(catalog.transceivers.items())
        self._cache: dict[tuple[float, float, str], tuple[str, Medium, float] | None] = {}
        self._modules: dict[tuple[str, float, str, float, str], str] = {}

    def choose(self, speed_gbps: float, run_m: float, protocol: str = "") -> tuple[str, Medium, float] | None:
        """(medium id, medium, orderable length) — the most preferred medium that reaches and carries the
        protocol at this rate (no multimode or passive copper for InfiniBand XDR)."""
        key = (speed_gbps, round(run_m, 3), protocol)
        if key in self._cache:
            return self._cache[key]
        found = None
        for mid, medium in self.media:
            reach = medium.reach_by_speed_m.get(speed_gbps)
            if reach is None or reach < run_m:
                continue
            ib_max = medium.infiniband_max_gbps
            if protocol == "infiniband" and ib_max is not None and speed_gbps > ib_max:
                continue
            length = next((L for L in medium.lengths_m if run_m - 1e-9 <= L), None)
            if length is None or length > reach:
                continue
            found = (mid, medium, float(length))
            break
        self._cache[key] = found
        return found

    def transceiver(
        self, medium_kind: str, speed_gbps: float, form_factor: str, run_m: float, protocol: str = ""
    ) -> str:
        """The smallest matching module (speed at least the link's, same medium, cage and protocol: an
        Ethernet-only module never lands on an InfiniBand port), or a generic key."""
        key = (medium_kind, speed_gbps, form_factor, run_m, protocol)
        hit = self._modules.get(key)
        if hit is None:
            hit = self._modules[key] = self._transceiver(
                medium_kind, speed_gbps, form_factor, run_m, protocol
            )
        return hit

    def _transceiver(
        self, medium_kind: str, speed_gbps: float, form_factor: str, run_m: float, protocol: str
    ) -> str:
        best: tuple[float, str] | None = None
        for tid, t in self.transceivers:
            if (
                t.medium == medium_kind
                and t.form_factor == form_factor
                and t.speed_gbps >= speed_gbps
                and t.reach_m >= run_m
                and (not protocol or protocol in t.protocols)
            ):
                cand = (t.speed_gbps, tid)
                if best is None or cand < best:
                    best = cand
        if best is not None:
            return best[1]
        return f"generic-{medium_kind}-{speed_gbps:g}g-{form_factor}" + (f"-{protocol}" if protocol else "")
