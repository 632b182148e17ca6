from __future__ import annotations

from collections.abc import Iterator

from generator.deploy.addresses import onprem_plan
from generator.deploy.targets import onprem
from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext

# The node OSes the host_fabric role cannot address interfaces on: it writes netplan and runs `netplan
# apply`; RHEL 9, and Rocky 9 built from it, does not ship netplan: its network is NetworkManager's (Red
# Hat, "Configuring and managing networking", RHEL 9: NetworkManager with nmcli / nmstate and keyfiles).
NO_NETPLAN = ("rhel-9", "rocky-9")


class HostFabricNeedsNetplan(Rule):
    """Fabric addresses to configure on an OS whose network the ``host_fabric`` role cannot write.

    On bare metal the generator plans an address for every compute and storage port whose interface is
    known (port map or ``pools[].ports``) and hands them to the ``host_fabric`` Ansible role
    (``host_fabric_interfaces`` in the pool's group_vars), which writes them to netplan and runs ``netplan
    apply``. RHEL 9 and Rocky 9 do not ship netplan: their network is NetworkManager's. The build would
    write a file nothing reads and fail at ``netplan apply``, leaving IPoIB / RoCE interfaces without the
    addresses NCCL, LNet and the routes need. The role's platforms are Ubuntu and Debian.
    """

    id = "SFT009"
    severity = Severity.ERROR
    title = "fabric addresses the host_fabric role cannot configure on the node OS"
    rationale = "The role configures the fabric interfaces with netplan only; RHEL 9 and Rocky 9 ship none."
    fix = "pin software.os to ubuntu-22.04, ubuntu-24.04 or debian-12: the OSes the host_fabric role writes"
    tags = ("software", "os", "network")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        os = cluster.software.os
        if os not in NO_NETPLAN or not onprem(cluster.target):
            return
        configured: list[str] = []
        interfaces: set[str] = set()
        plan = onprem_plan(cluster)
        for pool in cluster.pools:
            # the interfaces group_vars._fabric_vars hands the role: the planned ports with a known interface
            planned = plan.fabric.get(pool.hostnames[0], []) if pool.hostnames else []
            names = {a.interface for a in planned if a.interface is not None}
            if names:
                configured.append(pool.name)
                interfaces |= names
        if not configured:
            return
        yield self.finding(
            f"software.os {os}: {len(configured)} pool(s) ({', '.join(configured)}) have fabric addresses "
            f"to configure on {len(interfaces)} interface(s) ({', '.join(sorted(interfaces))}), and the "
            "host_fabric role configures them with netplan only, which this OS does not ship "
            "(NetworkManager)",
            ("software", "os"),
        )
