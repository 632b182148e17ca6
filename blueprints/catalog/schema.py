"""Typed entries of the hardware catalogue (the data lives in ``data/*.yaml``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class NvlinkSpec(Entry):
    generation: int
    links: int


class Gpu(Entry):
    name: str
    vendor: Literal["nvidia", "amd"]
    memory_gb: float
    tdp_w: float
    bf16_tflops: float
    form_factor: str
    nvlink: NvlinkSpec | None = None
    nvlink_bridge_gpus: int = 0
    infinity_fabric_gbps: float | None = None
    pcie_gen: int
    sm_arch: int
    nvls: bool = False


class NvlinkGeneration(Entry):
    link_gbytes_bidir: float
    article_per_gpu_gbytes: float
    latency_class: str
    gpus: tuple[str, ...]


class PcieGeneration(Entry):
    x16_gbytes_per_dir: float
    gt_per_s: float
    article_x16_gbytes: float | None = None

    def gbytes_per_dir(self, lanes: int) -> float:
        return self.x16_gbytes_per_dir * lanes / 16


class Interconnects(Entry):
    nvlink: dict[int, NvlinkGeneration]
    pcie: dict[int, PcieGeneration]


class FabricTech(Entry):
    kind: Literal["infiniband", "roce", "ethernet"]
    speed_gbps: float
    latency_us: float
    width: str | None = None
    speed_token: str | None = None
    lane_gbps: float | None = None
    article_row: str | None = None


class PcieLink(Entry):
    gen: int = Field(ge=3, le=6)
    lanes: int = Field(default=16, ge=1, le=32)


class Nic(Entry):
    name: str
    speeds_gbps: tuple[float, ...]
    protocols: tuple[Literal["infiniband", "ethernet", "roce"], ...]
    pcie: PcieLink
    ports: int
    form_factor: str
    power_w: float


class SwitchUplinks(Entry):
    count: int
    speed_gbps: float


class Switch(Entry):
    name: str
    manufacturer: str | None = None  # vendor as NetBox names it (device-type manufacturer); None = unknown
    technology: Literal["infiniband", "ethernet"]
    speed_gbps: float
    ports: int
    cages: int
    ports_per_cage: int
    splits: dict[float, int] = {}
    form_factor: str
    rack_units: int
    power_w: float
    latency_ns: float
    sharp: bool = False
    managed: bool = False
    sharp_port: int | None = None
    uplinks: SwitchUplinks | None = None

    def ports_at(self, speed_gbps: float) -> int:
        """Logical ports available at ``speed_gbps`` (native or a supported split), 0 if none."""
        if speed_gbps == self.speed_gbps:
            return self.ports
        return self.splits.get(speed_gbps, 0)


class Medium(Entry):
    name: str
    kind: Literal["dac", "acc", "aoc", "mmf", "smf", "utp"]
    preference: int
    netbox_type: str
    reach_by_speed_m: dict[float, float]
    lengths_m: tuple[float, ...]
    part_numbers: dict[float, str] = {}
    needs_transceivers: bool


class Transceiver(Entry):
    name: str
    part_number: str | None
    medium: Literal["mmf", "smf"]
    speed_gbps: float
    form_factor: str
    ports: int
    reach_m: float
    power_w: float


class ServerNic(Entry):
    purpose: Literal["compute", "storage", "management"]
    model: str
    count: int = Field(ge=1)
    ports: int = Field(default=1, ge=1, le=2)
    speed_gbps: float
    cage_ports: int = Field(default=1, ge=1, le=2)


class Server(Entry):
    name: str
    manufacturer: str | None = None  # vendor for DGX-class systems; None for OEM / generic boxes
    gpu: str | None
    gpus: int
    gpu_interconnect: str
    nvswitches: int
    nvlink_domain_gpus: int
    pcie_gen: int
    power_kw: float
    rack_units: int
    nics: tuple[ServerNic, ...]


class CloudInstance(Entry):
    gpu: str
    gpus: int
    gpu_interconnect: str
    nvswitches: int = 0
    fabric: str
    network_cards: int
    nic_gbps: float
    total_gbps: float
    # Provider layout details (see the field notes in data/cloud.yaml); defaults suit a plain instance.
    efa_interfaces: int = 0
    fsx_efa: bool = False
    capacity_blocks: bool = False
    host_nics: int = 1
    gpu_nic_type: str | None = None
    gpu_nic_mtu: int | None = None
    rdma_domain_max_vms: int | None = None
    bare_metal: bool = False
    boot_disk_type: str | None = None
    reservation_provisioning_model: str | None = None  # GCP provisioning model when consuming a reservation


class StorageTier(Entry):
    """Capacity rules of one throughput tier of a managed file system (sizes in the service's unit)."""

    min: int
    step: int
    max: int | None = None
    efa_step: int | None = None
    big_from: int | None = None
    step_big: int | None = None


class StorageClient(Entry):
    """Where a managed file system's client comes from (an apt repository; `{kernel}` = uname -r)."""

    repo: str
    suite: str  # `{codename}` = the Ubuntu release codename
    components: list[str] = []
    key_url: str
    packages: list[str]


class ManagedStorage(Entry):
    service: str
    protocol: Literal["lustre", "nfs"]
    sku: str | None = None
    unit: Literal["GiB", "GB"] = "GiB"
    tiers: dict[int, StorageTier]
    mount_options: str = "_netdev"  # fstab options the vendor documents for its clients
    client: StorageClient | None = None  # None: the image or the site's repository provides it


class CloudImage(Entry):
    """A default boot image for one cloud and OS (data/cloud.yaml `images`)."""

    image: dict[str, str]  # the provider's lookup keys (AMI owner/name, marketplace URN parts, image family)
    driver_branch: str | None = None  # NVIDIA driver branch the image ships, when it names one
    tuned: bool = False  # the image carries the vendor's HPC stack and tuning (Ansible keeps it)


class PerfConstant(Entry):
    value: float
    unit: str
    source: str


class MappedPort(Entry):
    """One host port as the platform's vendor publishes it (any name the vendor does not give is null)."""

    role: Literal["compute", "storage", "inband", "frontend", "bmc"]
    faceplate: str | None = None  # name printed on the chassis / in the vendor table (OSFP1P1)
    cage: int | None = None  # twin-port cage number (OSFP<n>)
    cage_port: int | None = None  # sub-port inside the cage (P<n>)
    pci: str | None = None  # PCI address, where published
    rdma: str | None = None  # RDMA device (mlx5_11)
    netdev: str | None = None  # network interface (ibp220s0)
    # The link layer the interface name belongs to (an IPoIB name like ibp220s0 is not the Ethernet one).
    netdev_link: Literal["infiniband", "ethernet"] | None = None
    gpu: int | None = None  # GPU the vendor pairs with this port (DGX "GPU" column)
    speed_gbps: float | None = None
    source: str  # document and table (or repository path) this row comes from


class PlatformSetting(Entry):
    """One NCCL / libfabric / plug-in environment variable the platform's vendor publishes."""

    name: str = Field(pattern=r"^[A-Z][A-Z0-9_]{0,63}$")
    value: str = Field(pattern=r"^[A-Za-z0-9_.,:=/^+-]{0,400}$")
    source: str


class PlatformPlugin(Entry):
    """A network plug-in the platform needs for NCCL, and where its image installs it."""

    name: str  # aws-ofi-nccl | gib | tcpxo | nccl-rdma-sharp-plugins
    min_version: str | None = None
    path: str | None = None  # file the image installs (checked by the nccl role)
    profile: str | None = None  # vendor script that sets the plug-in's environment (sourced by jobs)
    source: str


class KeptFile(Entry):
    """A file the platform's image ships that tunes NCCL; the roles keep it instead of writing their own."""

    path: str = Field(pattern=r"^/[A-Za-z0-9._/-]{1,200}$")
    why: str
    source: str


class Platform(Entry):
    """Port map and vendor-published NCCL settings of one server model or cloud shape."""

    name: str
    source: str  # the document (with release) the port table comes from; "none published" if so
    ports: tuple[MappedPort, ...] = ()
    nccl_env: tuple[PlatformSetting, ...] = ()
    plugin: PlatformPlugin | None = None
    keep_files: tuple[KeptFile, ...] = ()
    ships_driver: bool = False  # the image (DGX OS, cloud HPC/DL image) already carries the GPU driver
    ships_driver_source: str | None = None


class ArchSupport(Entry):
    """What a GPU architecture needs from the software stack."""

    sm_archs: tuple[int, ...]
    min_cuda: str  # first CUDA toolkit that builds for the architecture
    source: str
    # Default pins for blueprints that give no `software:` (the architecture's minimum supported stack).
    default_driver_branch: str | None = None
    default_cuda: str | None = None


class CudaDriver(Entry):
    """Minimum Linux x86_64 driver of a CUDA toolkit release."""

    min_driver: str  # e.g. 570.26
    source: str

    @property
    def branch(self) -> int:
        return int(self.min_driver.split(".")[0])


class OfedNicLimit(Entry):
    """A NIC model an OFED stack (or one release line of it) does not support."""

    ofed: Literal["doca", "mlnx", "inbox"]
    nic: str  # nics.yaml id
    version_prefix: str | None = None  # only this release line (e.g. "2.9"); None = every version
    source: str


class SoftwareCompat(Entry):
    architectures: dict[str, ArchSupport]
    cuda_drivers: dict[str, CudaDriver]
    ofed_nic_limits: tuple[OfedNicLimit, ...] = ()

    def arch_of(self, sm_arch: int) -> tuple[str, ArchSupport] | None:
        return next(((k, a) for k, a in self.architectures.items() if sm_arch in a.sm_archs), None)
