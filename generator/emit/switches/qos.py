"""The lossless RoCE class a switch applies, from the same blueprint facts as the hosts' ``roce_qos`` role
(``fabrics.<f>.lossless``; the Ansible emitter passes them to the role as ``roce_qos_*``).

Defaults follow NVIDIA Cumulus Linux "RDMA over Converged Ethernet - RoCE" (user guide 5.x, "Default RoCE
Configuration" table): switch priority 3 -> traffic class 3 for RoCE, 6 -> 6 for CNPs, ECN absolute
thresholds 150 KB (min) to 1500 KB (max) on the RoCE class, PFC on the RoCE priority in lossless mode,
trust L3 (DSCP). NVUE has no way to set a buffer size per port: the lossless buffer profile is the
``default-lossless`` traffic pool holding the RoCE switch priority (user guide "Quality of Service",
"Lossless and lossy traffic pools").
"""

from __future__ import annotations

from dataclasses import dataclass

from blueprints.models.fabric import Fabric, Lossless

ECN_MIN_THRESHOLD_BYTES = (
    150_000  # Cumulus Linux RoCE default table: "Port ECN absolute threshold 150-1500 KB"
)
ECN_MAX_THRESHOLD_BYTES = 1_500_000
ECN_PROBABILITY_PERCENT = 100  # mark every packet above the max threshold (Cumulus RoCE default)
CNP_PRIORITY = 6  # Cumulus RoCE default: switch priority 6 -> traffic class 6 (CNP), strict
# Cumulus Linux "Interface configuration": swp ports default to MTU 9216, the largest the ASIC forwards.
SWITCH_PORT_MTU = 9216
LOSSLESS_POOL = "default-lossless"


@dataclass(frozen=True)
class LosslessClass:
    pfc: bool
    priority: int  # switch priority = traffic class of RDMA traffic (PFC priority on the hosts)
    ecn: bool
    dscp: int  # DSCP the hosts mark RoCE with (cma_roce_tos = dscp * 4)
    trust: str  # dscp (NVUE trust l3) | pcp (trust l2)
    host_mtu: int | None  # fabrics.<f>.mtu (None: the host role's default)
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
        host_mtu=spec.mtu,
        switch_mtu=max(SWITCH_PORT_MTU, spec.mtu or 0),
    )
