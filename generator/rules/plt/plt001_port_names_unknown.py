from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class PortNamesUnknown(Rule):
    """Host port names the generator needs but nobody published.

    NCCL (``NCCL_IB_HCA``, ``NCCL_SOCKET_IFNAME``), the RoCE QoS role, IPoIB/RoCE addressing, the
    expected LLDP/ibnetdiscover files and NetBox need the real RDMA device and interface name of every
    cabled host port. They come from the catalogue's port map (``blueprints/catalog/data/platforms.yaml``,
    each row with its vendor document) or from the blueprint (``pools[].ports``). For a server without a
    published table (an HGX or PCIe box, a custom ``spec``) the generator does not guess: it leaves the
    settings that need the names out, keeps placeholder ids in the plan, and reports the ports here.
    On a cloud shape without a catalogue entry it cannot emit the provider's NCCL settings either.
    """

    id = "PLT001"
    severity = Severity.WARNING
    title = "host port names are not published: declare them"
    rationale = "A wrong device or interface name sends NCCL and QoS to the wrong adapters."
    fix = (
        "declare the ports under pools[].ports (role, rdma, netdev, faceplate; compute ports in rail "
        "order), read from `ibv_devices`, `ip link` and the server's manual; see docs/ports.md"
    )
    tags = ("ports", "nccl")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        from generator.platform.ports import platform_of

        cluster = ctx.cluster
        for pool in cluster.pools:
            where = (*pool.source_path, "server" if pool.server_id != "custom" else "spec")
            if pool.cloud is not None:
                if platform_of(cluster.catalog, pool.server_id) is None:
                    yield self.finding(
                        f"pool `{pool.name}`: no port map or vendor NCCL settings for `{pool.server_id}` in "
                        "the catalogue; NCCL settings that name its interfaces are left out",
                        where,
                    )
                continue
            used = [f for f in ("compute", "storage") if f in cluster.fabrics]
            unknown = [p for p in pool.ports if p.purpose in used and not (p.rdma_known and p.netdev_known)]
            if not unknown:
                continue
            what = sorted({p.purpose for p in unknown})
            rdma = sum(1 for p in unknown if not p.rdma_known)
            netdev = sum(1 for p in unknown if not p.netdev_known)
            needs = "NCCL_IB_HCA, QoS interfaces" if rdma else "QoS interfaces, NCCL_SOCKET_IFNAME"
            yield self.finding(
                f"pool `{pool.name}` (`{pool.server_id}`): {len(unknown)} {'/'.join(what)} port(s) have no "
                f"published names ({rdma} RDMA device(s), {netdev} interface(s) unknown); {needs} "
                "and addressing that need them are left out",
                where,
            )
