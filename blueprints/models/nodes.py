"""Node pools: what the servers are and how many."""

from typing import Annotated, Literal

from pydantic import Field, StringConstraints, field_validator, model_validator

from blueprints.models.base import Model, SafeName, empty_list
from blueprints.models.naming import HOST_FIELDS, check_template

GpuInterconnect = Literal[
    "nvlink2", "nvlink3", "nvlink4", "nvlink5", "pcie3", "pcie4", "pcie5", "pcie6", "infinity-fabric", "none"
]


class PcieSlot(Model):
    gen: int = Field(ge=3, le=6, description="PCIe generation of the NIC slot")
    lanes: Literal[1, 2, 4, 8, 16, 32] = 16
    """PCIe lanes of the slot (x16 by default)"""


class NicSpec(Model):
    purpose: Literal["compute", "storage", "management"] = "compute"
    """which network the NIC serves: compute, storage or management"""
    model: str = Field(description="NIC catalogue id, e.g. cx7")
    count: int = Field(ge=1, le=64)
    """NICs of this kind per server"""
    ports: int = Field(default=1, ge=1, le=2, description="cabled ports per NIC")
    speed_gbps: float = Field(gt=0, le=1600)
    """line rate per port in Gb/s"""
    pcie: PcieSlot | None = Field(default=None, description="slot the NIC sits in; default: the NIC's own")
    cage_ports: int = Field(default=1, ge=1, le=2, description="2 when ports leave through twin-port cages")


class ServerSpec(Model):
    """An explicit server, for hardware the catalogue does not list."""

    gpu: str | None = Field(description="GPU catalogue id, e.g. h100-sxm; null for CPU-only servers")
    gpus: int = Field(ge=0, le=128)
    """GPUs per server (0 for CPU-only)"""
    gpu_interconnect: GpuInterconnect
    """GPU-to-GPU link inside the server: nvlink2..5, pcie3..6, infinity-fabric or none"""
    nvlink_domain_gpus: int | None = Field(default=None, ge=0, le=1024)
    """GPUs in one NVLink domain (default: the server's GPUs; 72 for an NVL72 rack)"""
    nvswitches: int = Field(default=0, ge=0, le=64)
    """NVSwitch chips in the server"""
    pcie_gen: int = Field(default=5, ge=3, le=6)
    """PCIe generation of the server's slots"""
    nics: list[NicSpec] = Field(default_factory=empty_list, max_length=16)
    """network adapters, one entry per kind"""
    power_kw: float = Field(gt=0, le=200)
    """maximum power draw in kW"""
    rack_units: int = Field(ge=1, le=60)
    """height in rack units"""


# OS names: RDMA devices (mlx5_11), interfaces (ibp220s0, enp6s0), faceplate labels (OSFP1P1, slot1-port2).
PortName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,39}$")]
# Linux interface names: shorter than IFNAMSIZ (16), no '/', ':' or white space (net/core/dev.c
# dev_valid_name; `eth0:1` is an address label of ifconfig, not an interface)
NETDEV_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$"
NetdevName = Annotated[str, StringConstraints(pattern=NETDEV_PATTERN)]


class DeclaredPort(Model):
    """One host port whose names the catalogue does not know (an HGX/PCIe/custom server)."""

    role: Literal["compute", "storage", "inband", "frontend", "bmc"] = Field(
        description="compute = rail port (in rail order), storage, inband = host management, bmc = "
        "out-of-band"
    )
    faceplate: PortName | None = Field(default=None, description="label on the chassis, e.g. OSFP1P1")
    rdma: PortName | None = Field(default=None, description="RDMA device, e.g. mlx5_11 (ibv_devices)")
    netdev: NetdevName | None = Field(default=None, description="network interface, e.g. ibp220s0 (ip link)")
    pci: PortName | None = Field(default=None, description="PCI address, e.g. 0000:dc:00.0")
    gpu: int | None = Field(default=None, ge=0, le=127, description="GPU paired with this port")
    label: PortName | None = Field(
        default=None,
        description="what the site calls this port's adapter, e.g. HCA-1: the name hosts report in their "
        "node description (`<host> HCA-1`) and cable labels print; NCCL and QoS keep the RDMA device name",
    )


class PoolPlacement(Model):
    nodes_per_rack: int | None = Field(
        default=None, ge=1, le=96, description="default: fill by power and space"
    )
    rows: list[int] | None = Field(default=None, description="rows (0-based) this pool may use")


class NodePool(Model):
    name: SafeName
    """pool name: lower-case letters, digits and dashes; default host name prefix"""
    role: Literal["gpu", "storage", "login", "management"] = "gpu"
    """what the nodes do: gpu, storage, login or management"""
    count: int = Field(ge=1, le=200_000)
    """number of nodes"""
    server: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9._/-]{1,80}$",
        description="server catalogue id (dgx-h100) or a cloud instance type as provider/type "
        "(aws/p5.48xlarge)",
    )
    spec: ServerSpec | None = None
    """an explicit server, when the catalogue does not list it (instead of `server`)"""
    hostname_prefix: SafeName | None = Field(default=None, description="default: the pool name")
    hostname_template: str | None = Field(
        default=None,
        description="site host names, e.g. a05-p1-dgx-{index:02}; fields: pool, index, su, su_index, "
        "rack, slot "
        "(rack/slot need placement.nodes_per_rack; su/su_index need the compute scalable_unit)",
    )
    hostnames: list[SafeName] | None = Field(
        default=None, max_length=200_000, description="explicit host names, one per node, in order"
    )
    placement: PoolPlacement = Field(default_factory=dict, validate_default=True)  # its defaults: base.py
    """where the pool's nodes go in the site"""
    ports: list[DeclaredPort] | None = Field(
        default=None,
        max_length=64,
        description="host port names (RDMA device, interface, faceplate) per role, in rail order; they "
        "replace the catalogue's port map for every role they list (docs/ports.md)",
    )

    @field_validator("hostname_template")
    @classmethod
    def _template(cls, v: str | None) -> str | None:
        return check_template(v, HOST_FIELDS) if v is not None else v

    @model_validator(mode="after")
    def _names(self) -> "NodePool":
        given = [
            k for k in ("hostname_prefix", "hostname_template", "hostnames") if getattr(self, k) is not None
        ]
        if len(given) > 1:
            raise ValueError(f"give at most one of {', '.join(given)}")
        if self.hostnames is not None and len(self.hostnames) != self.count:
            raise ValueError(f"`hostnames` lists {len(self.hostnames)} names for {self.count} nodes")
        if self.hostnames is not None and len(set(self.hostnames)) != len(self.hostnames):
            raise ValueError("`hostnames` lists a name twice")
        return self

    @field_validator("ports")
    @classmethod
    def _one_port_an_interface(cls, ports: list[DeclaredPort] | None) -> list[DeclaredPort] | None:
        """An interface is one port: declared under two roles (a compute rail and a storage port) it was
        addressed and QoS-classed twice, or its cables got one label."""
        seen: dict[str, int] = {}
        for j, port in enumerate(ports or ()):
            if port.netdev is None:
                continue
            first = seen.setdefault(port.netdev, j)
            if first != j:
                raise ValueError(
                    f"ports[{j}] ({port.role}) has netdev {port.netdev!r}, already ports[{first}]'s "
                    f"({ports[first].role}): give each port its own interface"  # type: ignore[index]
                )
        return ports

    @model_validator(mode="after")
    def _labels(self) -> "NodePool":
        """A site label names one adapter (both ports of a dual-port adapter may share it): two adapters
        with one label, or a label that is another port's RDMA device name, would make `<host> HCA-1`
        mean two things."""
        ports = [p for p in self.ports or () if p.label is not None]
        adapters: dict[str, set[str]] = {}
        for port in ports:
            adapter = port.rdma.casefold() if port.rdma else f"ports[{id(port)}]"
            adapters.setdefault(str(port.label).casefold(), set()).add(adapter)
        if twice := sorted(label for label, found in adapters.items() if len(found) > 1):
            raise ValueError(f"`ports` label {twice[0]!r} names two adapters")
        devices = {p.rdma.casefold(): p.rdma for p in self.ports or () if p.rdma}
        for port in ports:
            other = devices.get(str(port.label).casefold())
            if other is not None and other.casefold() != (port.rdma or "").casefold():
                raise ValueError(f"`ports` label {port.label!r} is another port's RDMA device name")
        return self

    @model_validator(mode="after")
    def _server_or_spec(self) -> "NodePool":
        if (self.server is None) == (self.spec is None):
            raise ValueError("give exactly one of `server` (a catalogue id) or `spec` (an explicit server)")
        return self
