"""NET019: the management fabric's VLAN ids and per-leaf subnets are usable."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from blueprints.models.fabric import Underlay
from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext

if TYPE_CHECKING:
    from generator.deploy.mgmt_vlans import VlanProblem


class ManagementVlans(Rule):
    """A management VLAN id outside 1-4094, two roles on one VLAN, or a per-leaf subnet block too small or
    overlapping another address block.

    ``blueprint generate`` configures the management fabric's leaves (build/switches/management/): every host
    port is an access port of its role's VLAN (``fabrics.management.vlans.inband`` / ``bmc``, default 10 and
    20), every leaf routes each VLAN through its own subnet carved from ``inband_cidr`` / ``bmc_cidr`` and
    relays DHCP to the provisioning server (docs/switches.md, "Management network"). 802.1Q VLAN ids are
    1-4094 (0 and 4095 are reserved); in-band and BMC ports on one VLAN would undo the out-of-band
    separation NVIDIA's DGX BasePOD and SuperPOD designs keep; a block that overlaps the management, compute
    or storage networks or the switch loopbacks would route one address two ways.
    """

    id = "NET019"
    severity = Severity.ERROR
    title = "management VLAN id or subnet block unusable"
    rationale = (
        "A switch refuses a VLAN id outside 1-4094; a shared VLAN or an overlapping block mixes networks."
    )
    fix = (
        "choose distinct VLAN ids in 1-4094 and a block per role that overlaps no other network and is "
        "large enough"
    )
    tags = ("ethernet", "switches", "management")
    # generate stops on what it says: suppressed, validate would pass what generate refuses
    suppressible = False

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        if "management" not in cluster.fabrics:  # management_fabrics() would say (): its module not imported
            return
        from generator.deploy.mgmt_vlans import VlanProblem, check_ids, management_fabrics, management_plan
        from generator.plan.switch_numbers import PlanProblem

        if not management_fabrics(cluster):
            return
        problems = check_ids(cluster) + _overlaps(ctx)
        for p in problems:
            yield self.finding(p.message, p.path)
        if problems or ctx.plan is None:
            return
        try:
            management_plan(ctx.plan)
        except (VlanProblem, PlanProblem) as exc:
            yield self.finding(exc.message, exc.path)


def _overlaps(ctx: RuleContext) -> list[VlanProblem]:
    """The VLAN blocks against each other, the on-prem networks and every fabric's loopback block."""
    import ipaddress

    from generator.deploy.mgmt_vlans import ROLES, VlanProblem, settings

    cluster = ctx.cluster
    cfg = settings(cluster)
    source = cluster.fabrics["management"].source_path
    others: list[tuple[str, str]] = []
    if not cluster.is_cloud:
        from generator.deploy.addresses import onprem_blocks

        others += [(label, cidr) for _, cidr, label in onprem_blocks(cluster)]
    for name, fab in sorted(cluster.fabrics.items()):
        if fab.spec.underlay is not None or name in (*cluster.routed_fabrics, "management"):
            others.append(
                (f"fabrics.{name}.underlay.loopback_cidr", (fab.spec.underlay or Underlay()).loopback_cidr)
            )
    out: list[VlanProblem] = []
    seen: list[tuple[str, str]] = []
    # a clash between the two blocks is reported at the one the blueprint declares (checked last)
    for role in sorted(ROLES, key=lambda r: f"{r}_cidr" in cfg.model_fields_set):
        key = f"{role}_cidr"
        text = getattr(cfg, key)
        path = (*source, "vlans", key)
        try:
            net = ipaddress.IPv4Network(text)
        except ValueError as exc:
            out.append(VlanProblem(f"`{text}` is not an IPv4 network: {exc}", path))
            continue
        for what, other in [*seen, *others]:
            try:
                if net.overlaps(ipaddress.IPv4Network(other, strict=False)):
                    out.append(VlanProblem(f"{text} overlaps {what} ({other})", path))
            except ValueError:
                continue  # reported where that setting is checked
        seen.append((f"fabrics.management.vlans.{key}", text))
    return out
