"""Fabrics: technology, topology, subnet manager or lossless settings."""

import ipaddress
import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, field_validator

from blueprints.models.base import Model, SafeName, empty_list
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

SwitchOs = Literal["cumulus", "frr"]  # the kind of OS: which one configuration file a switch gets
# fabrics.<f>.switch_os: an OS, optionally with a release (cumulus-linux@5.14); which releases exist is
# catalogue data (blueprints/catalog/data/switch_os.yaml, rule NET016), not schema.
SWITCH_OS_PATTERN = r"^(cumulus|cumulus-linux|frr)$|^cumulus(-linux)?@[0-9]{1,2}\.[0-9]{1,2}$"


def _switch_os(value: str) -> str:
    # a validator rather than Field(pattern=...): the error names the accepted forms, not the regex
    if not re.fullmatch(SWITCH_OS_PATTERN, value):
        raise ValueError(
            "expected cumulus, cumulus-linux, cumulus-linux@<release> (e.g. cumulus-linux@5.15) or frr"
        )
    return value


class Partition(Model):
    """An InfiniBand partition (OpenSM partitions.conf, linux-rdma/opensm doc/partition-config.txt)."""

    name: SafeName
    """partition name in partitions.conf"""
    pkey: int = Field(ge=1, le=0x7FFE, description="P_Key (low 15 bits; 0x7fff is the default partition)")
    pools: list[SafeName] = Field(
        default_factory=empty_list, description="pools whose HCA ports are members (empty: every CA port)"
    )
    membership: Literal["full", "limited"] = "full"
    """full members talk to every member; limited members only to full ones"""
    ipoib: bool = Field(default=False, description="create the IPoIB multicast group for this partition")


# The engines a blueprint may name: those whose settings `generate` writes in full. NVIDIA's OpenSM documents
# more (dor, ar_ftree, dfp: catalogue subnet_managers.yaml), but SHARP on a hypercube needs dor with
# dor_hyper_cube_mode, which opensm.conf does not carry yet (docs/switches.md, "Subnet manager").
RoutingEngine = Literal["ftree", "updn", "dfsssp", "sssp", "nue", "minhop", "torus-2QoS", "ar_updn"]


class SubnetManager(Model):
    kind: Literal["opensm", "ufm", "switch"] = "opensm"
    """InfiniBand subnet manager: opensm, ufm, or the switch's own"""
    flavour: Literal["opensm-upstream", "opensm-nvidia", "ufm"] | None = None
    """which SM software: opensm-upstream (the distribution's OpenSM 3.3, what playbooks/opensm.yml installs;
    default for kind opensm), opensm-nvidia (NVIDIA's OpenSM from DOCA-Host/MLNX_OFED) or ufm (default for
    kind ufm); its routing engines and SHARP settings are catalogue data (subnet_managers.yaml, NET022)"""
    ha: bool = Field(default=False, description="a standby SM on a second host/switch")
    routing_engine: RoutingEngine | None = None
    """OpenSM routing engine, e.g. ftree for fat-trees"""
    sharp: bool = Field(
        default=False, description="run the SHARP aggregation manager (IB in-network reductions)"
    )
    service_level: int = Field(default=0, ge=0, le=15)
    """InfiniBand service level NCCL traffic uses (NCCL_IB_SL)"""
    location: Literal["head-node", "ufm-appliance", "switch-embedded"] | None = Field(
        default=None,
        description="where the SM runs (default: head-node for opensm, ufm-appliance for ufm, "
        "switch-embedded for switch); Ansible installs OpenSM only on head nodes",
    )
    hosts: list[SafeName] = Field(
        default_factory=empty_list,
        max_length=2,
        description="head nodes running the SM, master first (default: the first hosts of a management pool)",
    )
    partitions: list[Partition] = Field(
        default_factory=empty_list, max_length=64, description="P_Key partitions besides the default (0x7fff)"
    )

    @field_validator("partitions")
    @classmethod
    def _one_partition_a_name(cls, partitions: list[Partition]) -> list[Partition]:
        """A partition's name is its identity in partitions.conf and in the plan (two `a` with P_Keys 5 and 6
        were both written)."""
        seen: set[str] = set()
        for part in partitions:
            if part.name in seen:
                raise ValueError(f"partition name `{part.name}` is used twice")
            seen.add(part.name)
        return partitions


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


class Underlay(Model):
    """Ethernet/RoCE switch underlay: BGP unnumbered (RFC 5549) with one private ASN per leaf."""

    asn_base: int = Field(
        default=4_200_000_000,
        ge=1,
        le=4_294_967_294,
        description="first ASN of the plan (RFC 6996 private 4-byte range 4200000000-4294967294)",
    )
    loopback_cidr: str = Field(
        default="10.254.0.0/16",
        pattern=r"^\d{1,3}(\.\d{1,3}){3}/\d{1,2}$",
        description="IPv4 block for the switches' /32 loopbacks (router ids)",
    )


class ManagementVlans(Model):
    """The management fabric's VLANs (docs/switches.md, "Management network"): every leaf puts each host port
    in the access VLAN of its role and routes it (an SVI per VLAN, its gateway, a /N per leaf carved from
    the role's block); ids 1-4094 and different (rule NET019)."""

    inband: int = Field(default=10, ge=0, le=4095, description="VLAN id of host in-band management ports")
    bmc: int = Field(default=20, ge=0, le=4095, description="VLAN id of out-of-band (BMC) ports")
    inband_cidr: str = Field(
        default="10.252.0.0/16",
        pattern=r"^\d{1,3}(\.\d{1,3}){3}/\d{1,2}$",
        description="block the in-band VLAN's per-leaf subnets are carved from",
    )
    bmc_cidr: str = Field(
        default="10.253.0.0/16",
        pattern=r"^\d{1,3}(\.\d{1,3}){3}/\d{1,2}$",
        description="block the BMC VLAN's per-leaf subnets are carved from",
    )
    dhcp_server: str | None = Field(
        default=None,
        pattern=r"^\d{1,3}(\.\d{1,3}){3}$",
        description="where the leaves relay DHCP to (default for deployment target maas: the planned "
        "management address of the first host of the first management pool, the MAAS rack controller)",
    )

    @field_validator("dhcp_server")
    @classmethod
    def _dhcp_server_address(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                ipaddress.IPv4Address(value)
            except ValueError:
                raise ValueError(f"`{value}` is no IPv4 address (each part 0-255, no leading zero)") from None
        return value


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
    underlay: Underlay | None = Field(default=None, description="Ethernet/RoCE: ASN and loopback plan")
    vlans: ManagementVlans | None = Field(
        default=None, description="management fabric only: VLAN ids and per-leaf subnets (default: 10 and 20)"
    )
    switch_os: Annotated[str, AfterValidator(_switch_os)] = Field(
        default="cumulus", json_schema_extra={"pattern": SWITCH_OS_PATTERN}
    )
    """Ethernet/RoCE compute or storage fabric: the operating system of its switches, which decides the one
    configuration file each switch gets in build/switches/ (docs/switches.md): cumulus or cumulus-linux
    (NVIDIA Cumulus Linux, the latest release the catalogue documents; cumulus-linux@5.14 names a release:
    startup.yaml, applied with NVUE) or frr (a Linux NOS running FRRouting: frr.conf, installed as
    /etc/frr/frr.conf and reloaded)"""


class Fabrics(Model):
    compute: Fabric | None = None
    """the GPU fabric (GPUDirect RDMA, NCCL)"""
    storage: Fabric | None = None
    """the storage network"""
    management: Fabric | None = None
    """the management / provisioning network"""
