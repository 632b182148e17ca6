from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class StoragePool(Rule):
    """A shared storage served by a `pool` the blueprint does not have.

    `storage[].pool` names the node pool whose servers export the file system; its first host is the
    server the clients mount. A name with no pool behind it left the storage without a server: the mount
    was dropped from every host's Ansible variables, and the build said nothing.
    """

    id = "PLN003"
    severity = Severity.ERROR
    title = "storage served by a pool the blueprint does not have"
    rationale = "The clients mount the pool's first host; without the pool there is nothing to mount."
    fix = "name one of the blueprint's pools, or give the storage's `server`"
    tags = ("storage",)
    suppressible = False  # generate would drop the mount

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        pools = [p.name for p in ctx.cluster.blueprint.pools]
        for i, st in enumerate(ctx.cluster.blueprint.storage):
            if st.pool is not None and st.pool not in pools:
                yield self.finding(
                    f"storage `{st.name}` (entry {i + 1}) is served by pool `{st.pool}`, which the blueprint "
                    f"does not have (pools: {', '.join(pools)})",
                    ("storage", i, "pool"),
                )
