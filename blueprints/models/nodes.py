"""Node pools: what the servers are and how many."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from blueprints.models.base import Model, SafeName

GpuInterconnect = Literal[
    "nvlink2", "nvlink3", "nvlink4", "nvlink5", "pcie3", "pcie4", "pcie5", "pcie6", "infinity-fabric", "none"
]


class PcieSlot(Model):
    gen: int = Field(ge=3, le=6, description="PCIe generation of the NIC slot")
    lanes: Literal[1, 2, 4, 8, 16, 32] = 16


class NicSpec(Model):
    purpose: Literal["compute", "storage", "management"] = "compute"
    model: str = Field(description="NIC catalogue id, e.g. cx7")
    count: int = Field(ge=1, le=64)
    ports: int = Field(default=1, ge=1, le=2, description="cabled ports per NIC")
    speed_gbps: float = Field(gt=0, le=1600)
    pcie: PcieSlot | None = Field(default=None, description="slot the NIC sits in; default: the NIC's own")
    cage_ports: int = Field(default=1, ge=1, le=2, description="2 when ports leave through twin-port cages")


class ServerSpec(Model):
    """An explicit server, for hardware the catalogue does not list."""

    gpu: str | None = Field(description="GPU catalogue id, e.g. h100-sxm; null for CPU-only servers")
    gpus: int = Field(ge=0, le=128)
    gpu_interconnect: GpuInterconnect
    nvlink_domain_gpus: int | None = Field(default=None, ge=0, le=1024)
    nvswitches: int = Field(default=0, ge=0, le=64)
    pcie_gen: int = Field(default=5, ge=3, le=6)
    nics: list[NicSpec] = Field(default_factory=list, max_length=16)
    power_kw: float = Field(gt=0, le=200)
    rack_units: int = Field(ge=1, le=60)


# OS names: RDMA devices (mlx5_11), interfaces (ibp220s0, enp6s0), faceplate labels (OSFP1P1, slot1-port2).
PortName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,39}$")]


class DeclaredPort(Model):
    """One host port whose names the catalogue does not know (an HGX/PCIe/custom server)."""

    role: Literal["compute", "storage", "inband", "frontend", "bmc"] = Field(
        description="compute = rail port (in rail order), storage, inband = host management, bmc = out-of-band"
    )
    faceplate: PortName | None = Field(default=None, description="label on the chassis, e.g. OSFP1P1")
    rdma: PortName | None = Field(default=None, description="RDMA device, e.g. mlx5_11 (ibv_devices)")
    netdev: PortName | None = Field(default=None, description="network interface, e.g. ibp220s0 (ip link)")
    pci: PortName | None = Field(default=None, description="PCI address, e.g. 0000:dc:00.0")
    gpu: int | None = Field(default=None, ge=0, le=127, description="GPU paired with this port")


class PoolPlacement(Model):
    nodes_per_rack: int | None = Field(
        default=None, ge=1, le=96, description="default: fill by power and space"
    )
    rows: list[int] | None = Field(default=None, description="rows (0-based) this pool may use")


class NodePool(Model):
    name: SafeName
    role: Literal["gpu", "storage", "login", "management"] = "gpu"
    count: int = Field(ge=1, le=200_000)
    server: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9._/-]{1,80}$",
        description="server catalogue id (dgx-h100) or a cloud instance type as provider/type (aws/p5.48xlarge)",
    )
    spec: ServerSpec | None = None
    hostname_prefix: SafeName | None = Field(default=None, description="default: the pool name")
    placement: PoolPlacement = Field(default_factory=PoolPlacement)
    ports: list[DeclaredPort] | None = Field(
        default=None,
        max_length=64,
        description="host port names (RDMA device, interface, faceplate) per role, in rail order; they "
        "replace the catalogue's port map for every role they list (docs/ports.md)",
    )

    @model_validator(mode="after")
    def _server_or_spec(self) -> NodePool:
        if (self.server is None) == (self.spec is None):
            raise ValueError("give exactly one of `server` (a catalogue id) or `spec` (an explicit server)")
        return self
