from __future__ import annotations

from collections.abc import Iterator

from blueprints.models.topology import Dragonfly
from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class DragonflyBalance(Rule):
    """A dragonfly whose p, a and h are not balanced (a = 2p = 2h).

    Kim, Dally, Scott and Abts (ISCA 2008) balance channel load under uniform (load-balanced) traffic
    with a = 2p = 2h: p terminals, a routers per group, h global links per router. With fewer global
    links than that the global channels saturate first; with more, router ports are spent on links that
    stay idle. Test vectors: h = 4 gives p = 4, a = 8 (radix 15, up to 1,056 terminals); h = 8 gives
    p = 8, a = 16 (radix 31, 16,512).
    """

    id = "TOP006"
    severity = Severity.WARNING
    title = "dragonfly not balanced (a = 2p = 2h)"
    rationale = "Balanced dragonflies load local and global channels equally under uniform traffic."
    fix = "choose p = h and a = 2h (e.g. p = h = 8, a = 16)"
    tags = ("dragonfly",)

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for fab in ctx.cluster.fabrics.values():
            t = fab.spec.topology
            if not isinstance(t, Dragonfly) or (t.a == 2 * t.p and t.a == 2 * t.h):
                continue
            global_ch, terminals = t.a * t.h, t.a * t.p
            yield self.finding(
                f"{fab.name} dragonfly p = {t.p}, a = {t.a}, h = {t.h}: balanced needs a = 2p = 2h "
                f"(2p = {2 * t.p}, 2h = {2 * t.h}); each group has {global_ch} global channels for "
                f"{terminals} "
                f"terminals ({global_ch / terminals:.2f} per terminal; balanced is 1)",
                (*fab.source_path, "topology"),
            )
