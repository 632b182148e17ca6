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
    """InfiniBand subnet manager: opensm, ufm, or the switch's own"""
    ha: bool = Field(default=False, description="a standby SM on a second host/switch")
    routing_engine: (
        Literal["ftree", "updn", "dfsssp", "sssp", "nue", "minhop", "torus-2QoS", "ar_updn"] | None
    ) = None
    """OpenSM routing engine, e.g. ftree for fat-trees"""
    sharp: bool = Field(
        default=False, description="run the SHARP aggregation manager (IB in-network reductions)"
    )
    service_level: int = Field(default=0, ge=0, le=15)
    """InfiniBand service level NCCL traffic uses (NCCL_IB_SL)"""


class Lossless(Model):
    pfc: bool = True
    """priority flow control on"""
    pfc_priority: int = Field(default=3, ge=0, le=7)
    """the priority PFC protects (RDMA traffic class)"""
    ecn: bool = True
    """explicit congestion notification on"""
    dscp: int = Field(default=26, ge=0, le=63)
    """DSCP value of RDMA traffic"""
    trust: Literal["dscp", "pcp"] = "dscp"
    """what switches classify traffic by: dscp or pcp"""


class Fabric(Model):
    technology: Technology
    """link technology and speed, e.g. infiniband-ndr or roce-v2-400 (`blueprint catalog fabrics`)"""
    topology: Topology | None = Field(default=None, description="absent for a single node or a cloud fabric")
    subnet_manager: SubnetManager | None = None
    """InfiniBand only: the subnet manager"""
    lossless: Lossless | None = None
    """RoCE only: lossless Ethernet settings"""
    mtu: int | None = Field(default=None, ge=1024, le=9216)
    """MTU in bytes"""
    adaptive_routing: bool = False
    """switches spread each flow over the equal-cost paths (InfiniBand adaptive routing, Spectrum-X);
    without it Ethernet ECMP hashes whole flows onto one path and flows collide"""


class Fabrics(Model):
    compute: Fabric | None = None
    """the GPU fabric (GPUDirect RDMA, NCCL)"""
    storage: Fabric | None = None
    """the storage network"""
    management: Fabric | None = None
    """the management / provisioning network"""
