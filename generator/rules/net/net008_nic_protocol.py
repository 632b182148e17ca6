from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.sizing import adapters, nic_path


class NicProtocol(Rule):
    """A NIC model that cannot run its fabric's protocol or its configured speed.

    The catalogue lists each NIC's protocols and port speeds (``nics.yaml``): a ConnectX-6 Dx is
    Ethernet/RoCE only and cannot join InfiniBand; a ConnectX-6 tops out at 200 Gb/s; an X710 does no
    RDMA. The fabric's kind (InfiniBand, RoCE, Ethernet) must be among the NIC's protocols, and the
    port speed among its speeds.
    """

    id = "NET008"
    severity = Severity.ERROR
    title = "NIC cannot do the fabric's protocol or speed"
    rationale = "A NIC without the fabric's protocol or speed cannot link at all."
    fix = "choose a NIC model whose protocols and speeds include the fabric's (blueprint catalog nics)"
    tags = ("nic", "protocol")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        for pool in cluster.pools:
            if pool.cloud is not None:
                continue
            seen: set[int] = set()
            for ad in adapters(cluster, pool):
                if ad.nic_index in seen or not ad.ports or ad.snic.model == "cloud":
                    continue
                seen.add(ad.nic_index)
                nic = cluster.catalog.nics.get(ad.snic.model)
                if nic is None:
                    continue
                speed = ad.ports[0].speed_gbps
                speeds = "/".join(f"{s:g}" for s in nic.speeds_gbps)
                if speed not in nic.speeds_gbps:
                    yield self.finding(
                        f"pool `{pool.name}`: {ad.snic.model} ({nic.name}) runs at {speeds} Gb/s, not "
                        f"{speed:g} Gb/s",
                        nic_path(cluster, pool, ad.nic_index, "speed_gbps"),
                    )
                fab = cluster.fabrics.get(ad.snic.purpose)
                if fab is not None and fab.kind not in nic.protocols:
                    yield self.finding(
                        f"pool `{pool.name}`: {ad.snic.model} ({nic.name}) speaks "
                        f"{', '.join(nic.protocols)}; the "
                        f"{fab.name} fabric is {fab.technology} ({fab.kind})",
                        nic_path(cluster, pool, ad.nic_index, "model"),
                    )
