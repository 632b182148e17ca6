"""RDMA network layout of cloud instances: AWS EFA interfaces per network card, Azure RDMA domains
(VMs per InfiniBand partition)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from blueprints.catalog.schema import CloudInstance


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
