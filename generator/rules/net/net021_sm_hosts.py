from __future__ import annotations

from collections.abc import Iterator

from blueprints.models.fabric import SubnetManager
from generator.findings import Finding, Path, Severity
from generator.resolve import ResolvedFabric, ResolvedPool
from generator.rules.base import Rule, RuleContext


class SmHosts(Rule):
    """Subnet manager ``hosts`` that are repeated, not hosts of the blueprint, or not on the fabric.

    ``subnet_manager.hosts`` names the head nodes that run OpenSM, master first; ``blueprint generate``
    writes an ``opensm.conf`` per host (``sm_priority`` 15 for the master, 14 for the standby: the highest
    priority is master, IBA 14.4.1) and an Ansible inventory of them. The same host twice with
    ``ha: true`` writes one host with both priorities (no standby, and which file wins is an accident); a
    host in no pool gets an inventory entry Ansible connects to by that name, on whatever machine DNS
    says; a host with no port on the fabric has no HCA for OpenSM to bind to. ``ha: true`` with one host
    has no standby. It cannot be suppressed. Warnings: an SM host (listed or chosen) whose port's RDMA
    device is not published, which the opensm role will not bind OpenSM to until ``pools[].ports`` says; a
    listed host no SM runs on (a second host with ``ha: false``, any host away from ``location:
    head-node``), which ``generate`` drops.
    """

    id = "NET021"
    severity = Severity.ERROR
    title = "subnet manager hosts repeated, unknown or off the fabric"
    rationale = (
        "The SM runs only on the hosts listed: each must be a distinct host with a port on the fabric."
    )
    fix = "list distinct hosts of the blueprint's pools that have a port on the fabric (two with ha: true)"
    tags = ("infiniband", "subnet-manager")
    suppressible = False

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        if cluster.is_cloud:  # the provider runs the SM: no partitions.conf or opensm.conf is written
            return
        owner = {h: p for p in cluster.pools for h in p.hostnames}  # host → its pool, one map for both checks
        for fab in cluster.fabrics.values():
            sm = fab.spec.subnet_manager
            if fab.kind != "infiniband" or sm is None:
                continue
            if sm.hosts:
                yield from self._hosts(fab, sm, owner)
                yield from self._ignored(ctx, fab, sm)
            yield from self._bindable(ctx, fab, owner)

    def _ignored(self, ctx: RuleContext, fab: ResolvedFabric, sm: SubnetManager) -> Iterator[Finding]:
        """Hosts the plan leaves out: with ``ha: false`` only the first runs an SM (the second got no
        opensm.conf and no inventory entry, and nothing said so); away from head nodes, none of them."""
        from generator.plan.subnet_manager import sm_plan

        plan = sm_plan(ctx.cluster, fab.name, ctx.plan)
        members = {m.name for m in plan.members}
        base: Path = (*fab.source_path, "subnet_manager", "hosts")
        seen: set[str] = set()
        for i, host in enumerate(sm.hosts):
            if host in members or host in seen:  # a repeat is _hosts' error
                seen.add(host)
                continue
            seen.add(host)
            why = (
                f"ha: false runs one subnet manager, on `{sm.hosts[0]}`"
                if plan.location == "head-node"
                else f"the subnet manager runs on {plan.location} (hosts are for location: head-node)"
            )
            yield self.finding(
                f"{fab.name} subnet manager host `{host}` is ignored: {why}; `generate` writes no "
                f"opensm.conf for `{host}` and leaves it out of subnet_manager/inventory.yml",
                (*base, i),
                severity=Severity.WARNING,
                hint=(
                    "set ha: true to run a standby there, or remove the host from the list"
                    if plan.location == "head-node"
                    else "remove subnet_manager.hosts, or set location: head-node with kind: opensm"
                ),
            )

    def _bindable(
        self, ctx: RuleContext, fab: ResolvedFabric, owner: dict[str, ResolvedPool]
    ) -> Iterator[Finding]:
        """Each head node the SM runs on, listed or chosen, needs the RDMA device of its port on the fabric:
        OpenSM binds to it (opensm.conf ``guid``), and the opensm role refuses a host without one rather
        than bind to a placeholder that may be another adapter (docs/ports.md). ``owner``: check's map."""
        from generator.plan.subnet_manager import sm_plan, sm_port_device

        plan = sm_plan(ctx.cluster, fab.name, ctx.plan)
        if plan.location != "head-node":
            return
        for m in plan.members:
            pool = owner.get(m.name)
            if pool is None or not pool.ports_for(fab.name) or sm_port_device(ctx.cluster, m.name, fab.name):
                continue  # not a host, or off the fabric: _hosts says so
            yield self.finding(
                f"{fab.name} subnet manager runs on `{m.name}`, whose {fab.name} port has no published "
                f"RDMA device name (pool `{pool.name}`): OpenSM cannot be bound to it, and the opensm role "
                "stops there until it is declared",
                (*fab.source_path, "subnet_manager"),
                severity=Severity.WARNING,
                hint=f"declare the port under pools[].ports of pool `{pool.name}` (role {fab.name}, rdma: "
                "the name `ibv_devices` prints), or list SM hosts whose names the catalogue publishes",
            )

    def _hosts(
        self, fab: ResolvedFabric, sm: SubnetManager, owner: dict[str, ResolvedPool]
    ) -> Iterator[Finding]:
        base: Path = (*fab.source_path, "subnet_manager", "hosts")
        seen: set[str] = set()
        for i, host in enumerate(sm.hosts):
            pool = owner.get(host)
            if host in seen:
                yield self.finding(f"{fab.name} subnet manager host `{host}` is listed twice", (*base, i))
            elif pool is None:
                yield self.finding(
                    f"{fab.name} subnet manager host `{host}` is not a host of any pool", (*base, i)
                )
            elif not pool.ports_for(fab.name):
                yield self.finding(
                    f"{fab.name} subnet manager host `{host}` has no port on the {fab.name} fabric",
                    (*base, i),
                )
            seen.add(host)
        if sm.ha and len(seen) < 2:
            yield self.finding(
                f"{fab.name} subnet manager has ha: true but {len(seen)} distinct host(s): no standby", base
            )
