"""Fabrics: technology, topology, subnet manager or lossless settings."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from blueprints.models.base import Model
from blueprints.models.topology import Topology

Technology = Literal[
    "infiniband-edr",
    "infiniband-hdr",
    "infiniband-ndr200",
    "infiniband-ndr",
    "infiniband-xdr",
    "roce-v2-100",
    "roce-v2-200",
    "roce-v2-400",
    "ethernet-100",
    "ethernet-25",
    "ethernet-1",
]


class SubnetManager(Model):
    kind: Literal["opensm", "ufm", "switch"] = "opensm"
    ha: bool = Field(default=False, description="a standby SM on a second host/switch")
    routing_engine: (
        Literal["ftree", "updn", "dfsssp", "sssp", "nue", "minhop", "torus-2QoS", "ar_updn"] | None
    ) = None
    sharp: bool = Field(
        default=False, description="run the SHARP aggregation manager (IB in-network reductions)"
    )
    service_level: int = Field(default=0, ge=0, le=15)


class Lossless(Model):
    pfc: bool = True
    pfc_priority: int = Field(default=3, ge=0, le=7)
    ecn: bool = True
    dscp: int = Field(default=26, ge=0, le=63)
    trust: Literal["dscp", "pcp"] = "dscp"


class Fabric(Model):
    technology: Technology
    topology: Topology | None = Field(default=None, description="absent for a single node or a cloud fabric")
    subnet_manager: SubnetManager | None = None
    lossless: Lossless | None = None
    mtu: int | None = Field(default=None, ge=1024, le=9216)
    adaptive_routing: bool = Field(
        default=False,
        description="switches spread each flow over the equal-cost paths (InfiniBand adaptive routing, Spectrum-X); "
        "without it Ethernet ECMP hashes whole flows onto one path and flows collide",
    )


class Fabrics(Model):
    compute: Fabric | None = None
    storage: Fabric | None = None
    management: Fabric | None = None
