from __future__ import annotations

from collections.abc import Iterator

from blueprints.models.topology import Dragonfly
from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.sizing import radix


class DragonflyRadix(Rule):
    """A dragonfly router with fewer ports than p + a + h − 1.

    Each router uses p ports for terminals, a − 1 for the other routers of its group (all-to-all inside
    the group) and h for global links: radix k = p + a + h − 1 (Kim et al., ISCA 2008). The router's
    ports are the switch's logical ports at the fabric speed (an SN5600 has 128 at 400G, 64 at 800G).
    """

    id = "TOP008"
    severity = Severity.ERROR
    title = "dragonfly router radix below p + a + h − 1"
    rationale = "A router must have a port for every terminal, every group peer and every global link."
    fix = "pick a switch with more ports at the fabric speed, or lower p, a or h"
    tags = ("dragonfly", "radix")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for fab in ctx.cluster.fabrics.values():
            t = fab.spec.topology
            k = radix(fab)
            if not isinstance(t, Dragonfly) or fab.switch is None or k == 0:
                continue
            need = t.p + t.a + t.h - 1
            if need > k:
                yield self.finding(
                    f"{fab.name} dragonfly routers need p + a + h − 1 = {t.p} + {t.a} + {t.h} − 1 = "
                    f"{need} ports; "
                    f"`{fab.switch_id}` has {k} at {fab.speed_gbps:g} Gb/s",
                    (*fab.source_path, "topology", "switch"),
                )
