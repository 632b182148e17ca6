"""The address plan of a deployment: cloud targets carve their subnets here (each target's
``subnet_layout``), on-prem targets take theirs from generator/deploy/addresses.py. DEP010 reports the
problems it records; the Pulumi programs write the subnets it decides."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple, cast

from generator.deploy.addresses import FABRIC_STATIC_OFFSET, checked_network, onprem_plan, split
from generator.deploy.targets import cloud_target, onprem
from generator.resolve import ResolvedCluster, ResolvedPool

if TYPE_CHECKING:
    from blueprints.models.deployment import CloudSettings


Network = ipaddress.IPv4Network | ipaddress.IPv6Network  # what ipaddress.ip_network returns


# First host offset for static fabric addresses the MAAS program hands out (deploy/addresses.py).
MAAS_STATIC_OFFSET = FABRIC_STATIC_OFFSET


# AWS FSx for Lustre / EFS and Azure Managed Lustre take addresses from the cluster subnet; keep headroom.
STORAGE_ADDRESS_HEADROOM = 64


@dataclass(frozen=True)
class Subnet:
    name: str  # stable key, e.g. "compute-rail3", "gpu-nic2", "host0"
    cidr: str
    hosts: int  # addresses this plan needs in it (nodes or interfaces)


@dataclass
class AddressPlan:
    subnets: list[Subnet] = field(default_factory=list)
    problems: list[tuple[tuple[str | int, ...], str]] = field(
        default_factory=list
    )  # (blueprint path, message)

    def cidr(self, name: str) -> str:
        return next(s.cidr for s in self.subnets if s.name == name)


def _split(base: str, parts: int) -> list[Network] | None:
    return split(ipaddress.ip_network(base, strict=False), parts)


def usable(net: Network, reserved: int) -> int:
    return max(0, net.num_addresses - reserved)


def carve(
    plan: AddressPlan,
    base: str,
    path: tuple[str | int, ...],
    names: list[str],
    hosts: int,
    reserved: int,
    what: str,
) -> None:
    if not names or checked_network(base, path, plan.problems) is None:
        return
    nets = _split(base, len(names))
    if nets is None:
        plan.problems.append((path, f"{base} cannot be split into {len(names)} subnets for {what}"))
        return
    for name, net in zip(names, nets, strict=True):
        if usable(net, reserved) < hosts:
            plan.problems.append(
                (
                    path,
                    f"{what}: subnet {net} ({name}) holds {usable(net, reserved)} addresses, "
                    f"{hosts} are needed",
                )
            )
        plan.subnets.append(Subnet(name, str(net), hosts))


def rails(cluster: ResolvedCluster) -> int:
    return max((len(p.ports_for("compute")) for p in cluster.pools), default=0)


class CloudNetwork(NamedTuple):
    """What every cloud target's subnet layout (generator/deploy/targets/<name>.py) starts from: the
    blueprint's host network, split in two."""

    cloud: CloudSettings
    path: tuple[str | int, ...]  # blueprint path of network_cidr, for the problems
    reserved: int  # addresses the provider keeps in each subnet
    pools: list[ResolvedPool]  # the pools with a cloud instance type
    nodes: int
    first: Network  # cluster subnet = first half of network_cidr
    small: Network  # first /24 (or smaller) of the second half: public / storage subnets
    # the longest prefix the managed file systems' subnet may have (the service's table by their delivered
    # size, managed_storage.subnet_prefix); None: the service documents none
    storage_prefix: int | None = None


def address_plan(cluster: ResolvedCluster) -> AddressPlan:
    """Subnets the target's program creates, with the reasons they do not fit (if any)."""
    plan = AddressPlan()
    dep = cluster.blueprint.deployment
    if onprem(cluster.target):
        return _onprem_address_plan(cluster, plan)
    target = cloud_target(cluster.target)
    if target is None or target.subnet_layout is None or dep.cloud is None:
        return plan
    net = _cloud_network(cluster, dep.cloud, target.subnet_reserved, plan)
    if net is None:
        return plan
    whole = net.first.supernet()  # the host network as written
    if whole.prefixlen < target.network_largest_prefix:
        plan.problems.append(
            (
                net.path,
                f"{whole} is larger than {target.title} takes: use a /{target.network_largest_prefix} or "
                f"smaller network ({target.network_largest_source})",
            )
        )
        return plan
    target.subnet_layout(net, plan)
    return plan


def _onprem_address_plan(cluster: ResolvedCluster, plan: AddressPlan) -> AddressPlan:
    # The on-prem plan (generator/deploy/addresses.py) is what the MAAS program and the inventory use.
    onprem = onprem_plan(cluster)
    plan.problems.extend(onprem.problems)
    if onprem.problems:
        return plan
    plan.subnets.append(Subnet("management", onprem.management_cidr, len(onprem.management)))
    plan.subnets += [Subnet(s.name, s.cidr, s.used) for s in onprem.subnets]
    return plan


def _cloud_network(
    cluster: ResolvedCluster, cloud: CloudSettings, reserved: int, plan: AddressPlan
) -> CloudNetwork | None:
    """The host network split for the cloud layouts; None (with the problem recorded) when it is unusable."""
    path: tuple[str | int, ...] = ("deployment", "cloud", "network_cidr")
    net = checked_network(cloud.network_cidr, path, plan.problems)
    if net is None:
        return None
    if net.prefixlen > 26:
        plan.problems.append((path, f"{net} is too small: use a /26 or larger network"))
        return None
    # Cluster subnet = first half; the second half holds the small public / storage subnets.
    first, rest = net.subnets(prefixlen_diff=1)
    small = cast("Network", next(rest.subnets(new_prefix=max(rest.prefixlen, 24))))
    pools = [p for p in cluster.pools if p.cloud is not None]
    nodes = sum(p.count for p in pools)
    return CloudNetwork(cloud, path, reserved, pools, nodes, first, small, storage_subnet_prefix(cluster))


@dataclass(frozen=True)
class StorageSubnet:
    """The subnet the target's managed file systems need together, from the service's table by size."""

    prefix: int
    total_tib: float  # their delivered sizes summed
    table_tib: int  # the largest size the vendor's table reaches (its last prefix is taken past it)

    @property
    def past_table(self) -> bool:
        return self.total_tib > self.table_tib


def storage_subnet(cluster: ResolvedCluster) -> StorageSubnet | None:
    """None: no managed file system, or a service without a table. Past the table's last size, its last
    prefix (DEP008 warns: the vendor publishes nothing larger)."""
    from generator.deploy.managed_storage import managed_storage_spec, size_managed, storage_efa, tib_of

    spec = managed_storage_spec(cluster)
    if spec is None or not spec.subnet_prefix:
        return None
    efa = storage_efa(cluster, spec)
    sizes = [
        tib_of(spec, size_managed(spec, st.capacity_tib, st.throughput_gbytes, efa).size)
        for st in cluster.blueprint.storage
        if st.kind == "managed"
    ]
    if not sizes:
        return None
    table = sorted(spec.subnet_prefix.items())
    prefix = next((prefix for tib, prefix in table if sum(sizes) <= tib), table[-1][1])
    return StorageSubnet(prefix, sum(sizes), table[-1][0])


def storage_subnet_prefix(cluster: ResolvedCluster) -> int | None:
    need = storage_subnet(cluster)
    return None if need is None else need.prefix
