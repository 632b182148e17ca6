from __future__ import annotations

from collections.abc import Iterator

from blueprints.models.fabric import Partition
from generator.findings import Finding, Severity
from generator.resolve import ResolvedCluster, ResolvedFabric
from generator.rules.base import Rule, RuleContext


class IbPartitions(Rule):
    """InfiniBand partitions that merge, admit every adapter, or name pools that are not on the fabric.

    OpenSM's partition file (linux-rdma/opensm doc/partition-config.txt) says "PartitionName does not need
    to be unique, PKey does need to be unique. If PKey is repeated then those partition configurations
    will be merged": a second partition reusing tenant A's P_Key makes its members full members of A's
    partition. A partition that lists no pools is written as ``ALL_CAS``: with ``membership: full`` every
    channel adapter on the fabric, including one plugged in tomorrow, is a full member, so it isolates
    nothing. Its pools must exist and have ports on the fabric (else the partition is empty). A partition
    whose members are all ``limited`` carries no traffic between them: limited members talk only to full
    members, and it has none (the SM's own port is full only in the Default partition), so this is a
    warning; so is a pool that is a limited member of every partition that names it (and so of Default): no
    two of its hosts can talk, NCCL between them included. The errors cannot be suppressed.
    """

    id = "NET020"
    severity = Severity.ERROR
    title = "InfiniBand partitions merge, admit every adapter or name absent pools"
    rationale = "OpenSM merges partitions that share a P_Key and ALL_CAS admits any adapter: tenants leak."
    fix = (
        "give every partition of a fabric its own P_Key and list its pools (pools with ports on that "
        "fabric); use `membership: limited` for a partition every adapter may join"
    )
    tags = ("infiniband", "subnet-manager", "partitions", "security")
    suppressible = False

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        if cluster.is_cloud:  # the provider runs the SM: no partitions.conf or opensm.conf is written
            return
        for fab in cluster.fabrics.values():
            sm = fab.spec.subnet_manager
            if fab.kind != "infiniband" or sm is None:
                continue
            first: dict[int, str] = {}
            for j, part in enumerate(sm.partitions):
                path = (*fab.source_path, "subnet_manager", "partitions", j)
                if part.pkey in first:
                    yield self.finding(
                        f"{fab.name} partition `{part.name}` reuses P_Key 0x{part.pkey:04x} of partition "
                        f"`{first[part.pkey]}`: OpenSM merges partitions that share a P_Key, so its members "
                        f"join `{first[part.pkey]}`",
                        (*path, "pkey"),
                    )
                first.setdefault(part.pkey, part.name)
                yield from self._members(cluster, fab, part, path)
            yield from self._pools_without_a_full_partition(fab)
            yield from self._pools_without_ipoib(cluster, fab)

    def _members(
        self, cluster: ResolvedCluster, fab: ResolvedFabric, part: Partition, path: tuple[str | int, ...]
    ) -> Iterator[Finding]:
        head = f"{fab.name} partition `{part.name}` (P_Key 0x{part.pkey:04x})"
        if not part.pools and part.membership == "full":
            yield self.finding(
                f"{head} lists no pools: every adapter on the fabric (ALL_CAS) is a full member, any HCA "
                "plugged in included",
                (*path, "pools"),
            )
        pools = {p.name: p for p in cluster.pools}
        for k, name in enumerate(part.pools):
            pool = pools.get(name)
            if pool is None:
                yield self.finding(
                    f"{head}: pool `{name}` is not a pool of this blueprint", (*path, "pools", k)
                )
            elif not pool.ports_for(fab.name):
                yield self.finding(
                    f"{head}: pool `{name}` has no port on the {fab.name} fabric", (*path, "pools", k)
                )
        if part.membership == "limited":
            yield self.finding(
                f"{head}: every member is limited, and limited members talk only to full ones (it has "
                "none): no two members can talk in it",
                (*path, "membership"),
                hint=(
                    f"one entry is one membership for all its pools, and a second entry with P_Key "
                    f"0x{part.pkey:04x} is merged into this one (an error): to let these pools reach a pool "
                    "that serves them (e.g. storage) but not each other, drop this entry and name that pool "
                    "in no partition (it stays a full member of Default, where partitioned pools are limited "
                    "members); or set `membership: full` if these pools may talk to each other"
                ),
                severity=Severity.WARNING,
            )

    def _pools_without_a_full_partition(self, fab: ResolvedFabric) -> Iterator[Finding]:
        """A pool that partitions name is a limited member of Default; if it is a full member of none of
        them, no two of its hosts can talk anywhere on the fabric (NCCL between them fails: no P_Key index
        for NCCL_IB_PKEY)."""
        sm = fab.spec.subnet_manager
        assert sm is not None
        named = dict.fromkeys(p for part in sm.partitions for p in part.pools)
        for pool in named:
            if any(pool in part.pools and part.membership == "full" for part in sm.partitions):
                continue
            j = next(j for j, part in enumerate(sm.partitions) if pool in part.pools)
            yield self.finding(
                f"{fab.name}: pool `{pool}` is a limited member of every partition that names it (and so of "
                "Default): no two of its hosts can talk on the fabric, NCCL between them included",
                (*fab.source_path, "subnet_manager", "partitions", j, "membership"),
                hint="make the pool a full member of its own partition",
                severity=Severity.WARNING,
            )

    def _pools_without_ipoib(self, cluster: ResolvedCluster, fab: ResolvedFabric) -> Iterator[Finding]:
        """A tenant pool's IPoIB runs on P_Key children in its home partition (deploy.addresses.ipoib_child),
        which needs the partition's IPoIB broadcast group: without ``ipoib: true`` its hosts get no fabric
        address at all (the parent interfaces are limited members of Default, where they cannot talk)."""
        from generator.plan.subnet_manager import home_partition

        sm = fab.spec.subnet_manager
        assert sm is not None
        for pool in dict.fromkeys(p for part in sm.partitions for p in part.pools):
            home = home_partition(sm, pool)
            if home is None:
                continue
            if home[1].ipoib:
                yield from self._long_names(cluster, fab, pool, home)
                continue
            yield self.finding(
                f"{fab.name}: pool `{pool}` runs in partition `{home[1].name}` (0x{home[1].pkey:04x}), "
                "which has no IPoIB group: its hosts get no IPoIB address on the fabric (the ports' own "
                "interfaces are limited members of Default, where they cannot reach each other)",
                (*fab.source_path, "subnet_manager", "partitions", home[0]),
                hint="set `ipoib: true` on the partition: each host then gets a P_Key child interface in it",
                severity=Severity.WARNING,
            )

    def _long_names(
        self, cluster: ResolvedCluster, fab: ResolvedFabric, pool: str, home: tuple[int, Partition]
    ) -> Iterator[Finding]:
        """A P_Key child is named ``<port>.<pkey>``: past 15 characters (IFNAMSIZ) it cannot be, and those
        ports get no IPoIB address."""
        from generator.deploy.addresses import child_name
        from generator.plan.subnet_manager import FULL_MEMBER

        rp = next((p for p in cluster.pools if p.name == pool), None)
        pkey = FULL_MEMBER | home[1].pkey
        long = [p.netdev for p in rp.ports_for(fab.name) if p.netdev_known] if rp is not None else []
        long = [n for n in long if child_name(n, pkey) is None]
        if long:
            yield self.finding(
                f"{fab.name}: pool `{pool}`'s IPoIB children in partition `{home[1].name}` would be named "
                f"{long[0]}.{pkey:04x} and the like, past the 15 characters of an interface name: "
                f"{len(long)} port(s) get no IPoIB address",
                (*fab.source_path, "subnet_manager", "partitions", home[0]),
                hint="declare shorter interface names under pools[].ports (udev or the vendor's naming)",
                severity=Severity.WARNING,
            )
