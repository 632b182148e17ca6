"""Deployment facts shared by the DEP rules and the Pulumi emitter (no Rule classes here).

Everything is a pure function of the ResolvedCluster: which pools a target provisions, the address plan,
the managed-storage sizing and the OS images. The rules report what these functions find wrong; the
emitter writes what they decide, so the two never disagree.
"""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple, cast

from blueprints.catalog.schema import CloudImage, CloudInstance, ManagedStorage
from generator.deploy.addresses import FABRIC_STATIC_OFFSET, onprem_plan
from generator.deploy.targets import cloud_target, onprem
from generator.resolve import ResolvedCluster, ResolvedPool

if TYPE_CHECKING:
    from blueprints.models.deployment import CloudSettings

Network = ipaddress.IPv4Network | ipaddress.IPv6Network  # what ipaddress.ip_network returns

# First host offset for static fabric addresses the MAAS program hands out (deploy/addresses.py).
MAAS_STATIC_OFFSET = FABRIC_STATIC_OFFSET
# AWS FSx for Lustre / EFS and Azure Managed Lustre take addresses from the cluster subnet; keep headroom.
STORAGE_ADDRESS_HEADROOM = 64

# MAAS image names for software.os (Ubuntu series ship with MAAS; others need a custom image name).
MAAS_SERIES = {"ubuntu-22.04": "jammy", "ubuntu-24.04": "noble"}


def instance_type(pool: ResolvedPool) -> str:
    return pool.server_id.partition("/")[2]


def default_image(cluster: ResolvedCluster) -> CloudImage | None:
    """The catalogue's default image for the target and software.os (data/cloud.yaml `images`)."""
    return cluster.catalog.images.get(cluster.target, {}).get(cluster.blueprint.software.os)


def image_for(cluster: ResolvedCluster) -> dict[str, str] | None:
    """The image the cloud target boots: the blueprint's `cloud.image`, else the catalogue default."""
    cloud = cluster.blueprint.deployment.cloud
    if cloud is not None and cloud.image:
        return {"id": cloud.image}
    default = default_image(cluster)
    return dict(default.image) if default is not None else None


def image_tuned(cluster: ResolvedCluster) -> bool:
    """The default image carries the vendor's HPC stack and tuning (Azure HPC images): keep it."""
    cloud = cluster.blueprint.deployment.cloud
    default = default_image(cluster)
    return default is not None and default.tuned and not (cloud is not None and cloud.image)


def maas_series(cluster: ResolvedCluster) -> str | None:
    maas = cluster.blueprint.deployment.maas
    if maas is not None and maas.distro_series:
        return maas.distro_series
    return MAAS_SERIES.get(cluster.blueprint.software.os)


# ----------------------------------------------------------------------------------------- address plan


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
    net = ipaddress.ip_network(base, strict=False)
    bits = math.ceil(math.log2(parts)) if parts > 1 else 0
    if net.prefixlen + bits > 30:
        return None
    subnets: list[Network] = list(net.subnets(prefixlen_diff=bits))
    return subnets[:parts]


def usable(net: Network, reserved: int) -> int:
    return max(0, net.num_addresses - reserved)


def _check_cidr(text: str, path: tuple[str | int, ...], plan: AddressPlan) -> bool:
    try:
        net = ipaddress.ip_network(text, strict=False)
    except ValueError as exc:
        plan.problems.append((path, f"`{text}` is not an IPv4 network: {exc}"))
        return False
    if str(net) != text:
        plan.problems.append((path, f"`{text}` has host bits set; the network is {net}"))
        return False
    return True


def carve(
    plan: AddressPlan,
    base: str,
    path: tuple[str | int, ...],
    names: list[str],
    hosts: int,
    reserved: int,
    what: str,
) -> None:
    if not names or not _check_cidr(base, path, plan):
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
    if net is not None:
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
    if not _check_cidr(cloud.network_cidr, path, plan):
        return None
    net = ipaddress.ip_network(cloud.network_cidr)
    if net.prefixlen > 26:
        plan.problems.append((path, f"{net} is too small: use a /26 or larger network"))
        return None
    # Cluster subnet = first half; the second half holds the small public / storage subnets.
    first, rest = net.subnets(prefixlen_diff=1)
    small = cast("Network", next(rest.subnets(new_prefix=max(rest.prefixlen, 24))))
    pools = [p for p in cluster.pools if p.cloud is not None]
    nodes = sum(p.count for p in pools)
    return CloudNetwork(cloud, path, reserved, pools, nodes, first, small)


# ----------------------------------------------------------------------------------- managed storage


@dataclass(frozen=True)
class StorageSizing:
    service: str
    protocol: str
    tier: int  # MB/s per TiB (0 = not provisioned per TiB)
    size: int  # in `unit`
    unit: str
    sku: str | None
    efa: bool
    throughput_gbytes: float  # what the chosen tier delivers at `size` (0 when not provisioned)
    notes: tuple[str, ...]


def _round_up(size: int, tier_min: int, step: int, big_from: int | None, step_big: int | None) -> int:
    """Valid sizes are the minimum, then multiples of the step (of the big step above `big_from`)."""
    if size <= tier_min:
        return tier_min
    if big_from is not None and step_big and size > big_from:
        return math.ceil(size / step_big) * step_big
    return math.ceil(size / max(step, 1)) * max(step, 1)


def _tib_in(unit: str) -> float:
    return 1024.0 if unit == "GiB" else 1099.511627776  # 1 TiB in GiB / in GB


class TierChoice(NamedTuple):
    tier: int  # MB/s per TiB
    size: int  # in the service's unit


def _tier_step(spec: ManagedStorage, t: int, efa: bool) -> int:
    tier = spec.tiers[t]
    return tier.efa_step if efa and tier.efa_step else tier.step


def _first_fitting_tier(
    spec: ManagedStorage, want: int, throughput_gbytes: float | None, efa: bool
) -> TierChoice | None:
    """The slowest tier that holds `want` within its maximum and delivers the throughput asked."""
    per_tib = _tib_in(spec.unit)
    for t in sorted(spec.tiers):
        tier = spec.tiers[t]
        size = _round_up(want, tier.min, _tier_step(spec, t, efa), tier.big_from, tier.step_big)
        if tier.max is not None and size > tier.max:
            continue
        if throughput_gbytes and t > 0 and t * (size / per_tib) / 1000 < throughput_gbytes:
            continue
        return TierChoice(t, size)
    return None


def _fallback_tier(
    spec: ManagedStorage, want: int, throughput_gbytes: float | None, efa: bool, notes: list[str]
) -> TierChoice:
    """No tier both holds the capacity and delivers the throughput. If throughput is the problem, grow the
    capacity of the fastest tier until it delivers; otherwise take the tier that holds the most."""
    tiers = sorted(spec.tiers)
    fits = [
        t
        for t in tiers
        if (top := spec.tiers[t].max) is None
        or _round_up(
            want, spec.tiers[t].min, spec.tiers[t].step, spec.tiers[t].big_from, spec.tiers[t].step_big
        )
        <= top
    ]
    if fits and throughput_gbytes:
        t = fits[-1]
        tier = spec.tiers[t]
        need = math.ceil(throughput_gbytes * 1000 / t * _tib_in(spec.unit)) if t else 0
        size = _round_up(max(want, need), tier.min, _tier_step(spec, t, efa), tier.big_from, tier.step_big)
        notes.append(
            f"capacity raised to {size} {spec.unit} so the {t} MB/s/TiB tier delivers "
            f"{throughput_gbytes:g} GB/s"
        )
        return TierChoice(t, size)
    t = max(tiers, key=lambda k: spec.tiers[k].max or 0)
    tier = spec.tiers[t]
    return TierChoice(t, _round_up(want, tier.min, _tier_step(spec, t, efa), tier.big_from, tier.step_big))


def _sizing_notes(
    spec: ManagedStorage,
    chosen: TierChoice,
    want: int,
    capacity_tib: float | None,
    throughput_gbytes: float | None,
) -> tuple[float, list[str]]:
    """The throughput the chosen tier delivers at its size, and what the user should know about it."""
    t, size = chosen
    notes: list[str] = []
    tier = spec.tiers[t]
    if tier.max is not None and size > tier.max:
        notes.append(f"{size} {spec.unit} exceeds the {spec.service} maximum of {tier.max} {spec.unit}")
    if want and size != want:
        notes.append(f"{capacity_tib:g} TiB rounded up to {size} {spec.unit} ({spec.service} sizes)")
    delivered = t * (size / _tib_in(spec.unit)) / 1000 if t else 0.0
    if throughput_gbytes and t:
        notes.append(
            f"{spec.service} {t} MB/s/TiB tier at {size} {spec.unit} delivers {delivered:.1f} GB/s "
            f"(asked {throughput_gbytes:g})"
        )
    if throughput_gbytes and t == 0:
        notes.append(
            f"{spec.service} does not provision throughput per TiB; {throughput_gbytes:g} GB/s is not "
            "guaranteed"
        )
    return delivered, notes


def size_managed(
    spec: ManagedStorage, capacity_tib: float | None, throughput_gbytes: float | None, efa: bool
) -> StorageSizing:
    """The smallest valid size and tier giving the requested capacity and throughput (both optional)."""
    notes: list[str] = []
    want = math.ceil((capacity_tib or 0) * _tib_in(spec.unit))
    chosen = _first_fitting_tier(spec, want, throughput_gbytes, efa)
    if chosen is None:
        chosen = _fallback_tier(spec, want, throughput_gbytes, efa, notes)
    delivered, more = _sizing_notes(spec, chosen, want, capacity_tib, throughput_gbytes)
    sku = spec.sku.format(tier=chosen.tier) if spec.sku else None
    return StorageSizing(
        spec.service,
        spec.protocol,
        chosen.tier,
        chosen.size,
        spec.unit,
        sku,
        efa,
        round(delivered, 3),
        tuple(notes + more),
    )


def managed_storage_spec(cluster: ResolvedCluster) -> ManagedStorage | None:
    cloud = cluster.blueprint.deployment.cloud
    if cloud is None:
        return None
    return cluster.catalog.managed_storage.get(cluster.target, {}).get(cloud.managed_storage)


def storage_efa(cluster: ResolvedCluster, spec: ManagedStorage) -> bool:
    """AWS: serve FSx for Lustre over EFA when every GPU instance type can use it."""
    gpu_insts = [p.cloud for p in cluster.pools if p.cloud is not None]
    return (
        cluster.target == "aws"
        and spec.protocol == "lustre"
        and bool(gpu_insts)
        and all(i.fsx_efa for i in gpu_insts)
    )


# --------------------------------------------------------------------------------------- AWS EFA layout


@dataclass(frozen=True)
class EfaInterface:
    network_card_index: int
    device_index: int
    interface_type: str  # "efa" (EFA with ENA, takes an IP address) or "efa-only"


def efa_layout(inst: CloudInstance, efa_only_cards: bool) -> list[EfaInterface]:
    """One EFA per network card: card 0 / device 0 carries the ENA (primary, `efa`); every other card uses
    device index 1 as `efa-only` (no IP address) or `efa` (with ENA) — AWS's layout for multi-card types."""
    out = [EfaInterface(0, 0, "efa")]
    for card in range(1, inst.efa_interfaces):
        out.append(EfaInterface(card, 1, "efa-only" if efa_only_cards else "efa"))
    return out


def rdma_domains(count: int, max_vms: int | None) -> list[int]:
    """Split ``count`` VMs into the fewest RDMA domains of at most ``max_vms``, sizes as even as possible."""
    if not max_vms or count <= max_vms:
        return [count]
    n = math.ceil(count / max_vms)
    base, extra = divmod(count, n)
    return [base + (1 if i < extra else 0) for i in range(n)]
