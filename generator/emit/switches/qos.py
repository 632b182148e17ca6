"""The lossless RoCE class a switch applies, from the same blueprint facts as the hosts' ``roce_qos`` role
(``fabrics.<f>.lossless``; the Ansible emitter passes them to the role as ``roce_qos_*``), and NVIDIA's RoCE
values for the switch's Cumulus Linux release (``blueprints/catalog/data/switch_os.yaml``, sourced there:
the "RDMA over Converged Ethernet - RoCE" page of each release): RoCE on traffic class 3, the
``roce-lossless`` traffic pool and its ``memory-percent``, ECN thresholds in bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

from blueprints.catalog.switch_os import RoceQos
from blueprints.models.fabric import Fabric, Lossless

CNP_PRIORITY = 6  # Cumulus RoCE default: switch priority 6 -> traffic class 6 (CNP), strict
# Cumulus Linux "Interface configuration": swp ports default to MTU 9216, the largest the ASIC forwards.
SWITCH_PORT_MTU = 9216


@dataclass(frozen=True)
class LosslessClass:
    pfc: bool
    priority: int  # switch priority of RDMA traffic (PFC priority on the hosts)
    ecn: bool
    dscp: int  # DSCP the hosts mark RoCE with (cma_roce_tos = dscp * 4)
    trust: str  # dscp (NVUE trust l3) | pcp (trust l2)
    switch_mtu: int

    @property
    def nvue_trust(self) -> str:
        return "l3" if self.trust == "dscp" else "l2"

    @property
    def mode(self) -> str:
        return "lossless" if self.pfc else "lossy"


def lossless_class(spec: Fabric) -> LosslessClass | None:
    """None for a plain Ethernet fabric (no RDMA class)."""
    if not spec.technology.startswith("roce"):
        return None
    ll = spec.lossless or Lossless()
    return LosslessClass(
        pfc=ll.pfc,
        priority=ll.pfc_priority,
        ecn=ll.ecn,
        dscp=ll.dscp,
        trust=ll.trust,
        switch_mtu=max(SWITCH_PORT_MTU, spec.mtu or 0),
    )


def egress_queue_mapping(qos: LosslessClass, roce: RoceQos) -> dict[int, int]:
    """switch priority -> traffic class moves, as the RoCE page's "Change RoCE Configuration" does to put RoCE
    on another switch priority: the RoCE priority onto the RoCE traffic class, the default priority back to
    class 0. Empty with the default priority (the RoCE default already maps it)."""
    if qos.priority == roce.default_priority:
        return {}
    return {qos.priority: roce.roce_traffic_class, roce.default_priority: 0}
