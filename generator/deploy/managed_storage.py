"""Managed shared storage of a cloud target (FSx for Lustre, Azure Managed Lustre, ...): the catalogue
entry, the tier and size that meet the blueprint's capacity and throughput, and whether it runs over EFA.
DEP008 reports what these find wrong; the Pulumi programs provision what they decide."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from blueprints.catalog.schema import ManagedStorage
from generator.resolve import ResolvedCluster


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


def tib_of(spec: ManagedStorage, size: int) -> float:
    """A size in the service's unit, in TiB."""
    return size / _tib_in(spec.unit)


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
