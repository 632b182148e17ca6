from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.sizing import adapters, nic_path


class NicSpeedFabric(Rule):
    """Compute NIC ports whose speed differs from the compute fabric's.

    A port links at the lower of its own and its switch port's speed. A 200 Gb/s HDR port on an NDR
    (400 Gb/s) fabric halves that rail's bandwidth; a 400 Gb/s port on an HDR fabric runs at 200. The
    fabric technology fixes the speed (``fabrics.yaml``: HDR 200, NDR 400, NDR200 200, XDR 800 Gb/s;
    RoCE and Ethernet by name), so the NICs should say the same.
    """

    id = "NET007"
    severity = Severity.WARNING
    title = "compute NIC speed differs from the fabric speed"
    rationale = "Links run at the lower of the two speeds; the blueprint's bandwidth figures would be wrong."
    fix = "set the compute NICs' speed_gbps to the fabric technology's speed, or pick the matching technology"
    tags = ("nic", "speed")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        fab = cluster.fabrics.get("compute")
        if fab is None:
            return
        for pool in cluster.pools:
            if pool.cloud is not None:
                continue
            seen: set[int] = set()
            for ad in adapters(cluster, pool):
                if ad.snic.purpose != "compute" or ad.nic_index in seen or not ad.ports:
                    continue
                seen.add(ad.nic_index)
                speed = ad.ports[0].speed_gbps
                if speed == fab.speed_gbps:
                    continue
                slower = "the link runs at" if speed > fab.speed_gbps else "each port carries only"
                yield self.finding(
                    f"pool `{pool.name}`: compute NIC {ad.snic.model} at {speed:g} Gb/s on the "
                    f"{fab.technology} fabric "
                    f"({fab.speed_gbps:g} Gb/s; {slower} {min(speed, fab.speed_gbps):g} Gb/s)",
                    nic_path(cluster, pool, ad.nic_index, "speed_gbps"),
                )
