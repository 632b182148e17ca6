from __future__ import annotations

import re
from collections.abc import Iterator

from blueprints.models.naming import NameSource, SwitchNames
from blueprints.models.nodes import NodePool
from generator.findings import Finding, Path, Severity
from generator.foreign import THIS_MACHINE, host_name_problem
from generator.resolve import ResolvedCluster, ResolvedFabric
from generator.rules.base import Rule, RuleContext

TIERS = ("leaf", "spine", "core")
# A subset of what host_name_problem accepts, matched first for speed (16,384 names: 0.36 s → 0.02 s): a
# label that starts with a letter is never all digits, hex (0x…) or an address literal (IPv4 starts with a
# digit, IPv6 needs ':'). Anything else gets the full check.
_PLAIN = re.compile(r"[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?")


# Host names Slurm and Ansible read as keywords, in any case: slurm.conf(5) "Default values can be specified
# with a record in which NodeName is "DEFAULT"" and "If the NodeName is "ALL" the process parsing the
# configuration will exit immediately as it is an internally reserved word" (a host `default` was no node, and
# slurmctld stopped: "no nodes configured"); `all` is also Ansible's group of every host.
RESERVED = {
    "default": "Slurm's NodeName=DEFAULT record of defaults",
    "all": "Slurm's and Ansible's word for every node",
}


def _problem(name: str) -> str | None:
    reserved = RESERVED.get(name.lower())
    if reserved:
        return f"reserved: {reserved}"
    if name.lower() in THIS_MACHINE:
        return "a name of the machine itself (/etc/hosts, RFC 6761 §6.3): ssh and Ansible would connect there"
    return None if _PLAIN.fullmatch(name) else host_name_problem(name)


class HostNames(Rule):
    """A host, switch or appliance name that is not a host name, checked on the names the blueprint produces.

    Every node, switch and appliance name becomes an Ansible inventory host, an ssh target, a DNS name and
    an OpenSM node description (a node's a Slurm node name too), so each must be one RFC 1123 label
    (letters, digits and hyphens, 1-63 characters, not starting or ending with a hyphen), not all digits
    and not an address literal:
    ``0x7f000001`` is a valid name template's output, and ``inet_aton`` (which Ansible's ssh connection
    uses through getaddrinfo) reads it as 127.0.0.1, so the play would run against the operator's own
    machine; a name starting with ``-`` reaches ssh and ansible as an option. The check runs on what the
    templates and lists render (``0x7f00000{index}`` is a well-formed template; ``0x7f000001`` is the
    problem), one finding per template or list. It cannot be suppressed.
    """

    id = "PLN002"
    severity = Severity.ERROR
    title = "host or switch name is not a safe host name"
    rationale = (
        "Names reach DNS, ssh, Ansible and Slurm; one that resolves to an address or reads as an option is "
        "an attack."
    )
    fix = (
        "start the template or name with a letter (e.g. `sw-{index:02}`), keep it to letters, digits and "
        "inner hyphens"
    )
    tags = ("names", "security")
    suppressible = False

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        specs = {p.name: p for p in cluster.blueprint.pools}
        for pool in cluster.pools:
            yield from self._pool(specs[pool.name], pool.hostnames, pool.source_path)
        for fab in cluster.fabrics.values():
            names: SwitchNames | None = getattr(fab.spec.topology, "names", None)
            if names is not None:
                yield from self._fabric(ctx, cluster, fab, names)
        for i, appliance in enumerate(cluster.blueprint.appliances):  # inventory hosts and ssh targets too
            problem = _problem(appliance.name)
            if problem is not None:
                yield self.finding(f"appliance `{appliance.name}`: {problem}", ("appliances", i, "name"))

    def _pool(self, spec: NodePool, hostnames: tuple[str, ...], path: Path) -> Iterator[Finding]:
        for i, name in enumerate(hostnames):
            problem = _problem(name)
            if problem is None:
                continue
            if spec.hostname_template is not None:
                where: Path = (*path, "hostname_template")
                what = f"hostname_template `{spec.hostname_template}` gives"
            elif spec.hostnames is not None:
                where, what = (*path, "hostnames", i), "host name"
            else:
                where, what = (*path, "hostname_prefix"), "the pool's prefix gives"
            yield self.finding(f"pool `{spec.name}`: {what} `{name}`: {problem}", where)
            return

    def _fabric(
        self, ctx: RuleContext, cluster: ResolvedCluster, fab: ResolvedFabric, names: SwitchNames
    ) -> Iterator[Finding]:
        for tier in TIERS:
            source: NameSource | None = getattr(names, tier)
            if source is None:
                continue
            base = (*fab.source_path, "topology", "names", tier)
            if source.names is not None:
                rendered = [(n, (*base, "names", i)) for i, n in enumerate(source.names)]
            elif ctx.plan is not None:  # a template: its names exist once the fabric is built
                rendered = [
                    (d.name, (*base, "template")) for d in ctx.plan.switches(fab.name) if d.role == tier
                ]
            else:
                continue  # the plan does not build: PLN001 says why
            for name, where in rendered:
                problem = _problem(name)
                if problem is not None:
                    label = f"template `{source.template}` gives" if source.template else "name"
                    yield self.finding(f"{fab.name} fabric {tier} {label} `{name}`: {problem}", where)
                    break
