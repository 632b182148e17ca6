"""Typed entries of the hardware catalogue (the data lives in ``data/*.yaml``)."""

import math
import re
from typing import Annotated, Any, ClassVar, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator

from blueprints.models.base import VersionStr
from blueprints.models.naming import layout_misfit, layout_ports, parse_ports
from blueprints.models.nodes import NetdevName
from blueprints.models.software import Software

# A catalogue extension is user input like the blueprint: ids keep a safe pattern (they reach file names,
# YAML, shell-sourced files and NetBox slugs), free text is one bounded line without template braces, and
# numbers are finite and bounded so no entry can make the planner's work explode.
CATALOG_ID_RE = r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$"
CatalogId = Annotated[str, StringConstraints(pattern=CATALOG_ID_RE)]
MAX_TEXT = 200
MAX_NUMBER = 1e18  # finite and bounded; counts that size the plan have tighter bounds below
_FORBIDDEN_TEXT = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029{}]")
# resolve reads the NVLink generation from the name (nvlink4 -> 4) and GPU005 the PCIe one (pcie5 -> 5)
GpuInterconnect = Annotated[str, StringConstraints(pattern=r"^(nvlink[1-9]|pcie[1-9]|infinity-fabric|none)$")]
# Counts that multiply into plan size (ports, GPUs, NICs) get their own, tighter bounds.
PortCount = Annotated[int, Field(ge=0, le=1024)]
SmallCount = Annotated[int, Field(ge=0, le=256)]
Generation = Annotated[int, Field(ge=1, le=16)]


def _check_value(value: Any, where: str) -> None:
    if isinstance(value, str):
        if len(value) > MAX_TEXT:
            raise ValueError(f"{where}: text longer than {MAX_TEXT} characters")
        bad = _FORBIDDEN_TEXT.search(value)
        if bad:
            raise ValueError(f"{where}: character {bad.group()!r} is not allowed in catalogue text")
    elif isinstance(value, bool):
        return
    elif isinstance(value, int | float):
        if not math.isfinite(value) or not 0 <= value <= MAX_NUMBER:
            raise ValueError(f"{where}: {value!r} is outside 0..{MAX_NUMBER:g}")
    elif isinstance(value, dict):
        for k, v in value.items():
            _check_value(k, f"{where} key")
            _check_value(v, f"{where}.{k}")
    elif isinstance(value, tuple | list):
        for i, v in enumerate(value):
            _check_value(v, f"{where}[{i}]")


class Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # built on first use
    _own_pattern: ClassVar[frozenset[str]] = frozenset()  # fields whose own pattern replaces the text rule

    @model_validator(mode="after")
    def _bounded(self) -> "Entry":
        for name in type(self).model_fields:
            value = getattr(self, name)
            if not isinstance(value, BaseModel) and name not in self._own_pattern:
                _check_value(value, name)
        return self


class NvlinkSpec(Entry):
    generation: Generation
    links: SmallCount


class Gpu(Entry):
    name: str
    vendor: Literal["nvidia", "amd"]
    memory_gb: float
    tdp_w: float
    bf16_tflops: float
    form_factor: str
    nvlink: NvlinkSpec | None = None
    nvlink_bridge_gpus: SmallCount = 0
    infinity_fabric_gbps: float | None = None  # both directions, all links
    infinity_fabric_links: SmallCount | None = None  # xGMI links to peer GPUs
    # the GPU's host PCIe generation; None where the vendor gives the host link as something else (GB200:
    # NVLink-C2C to Grace) or gives no generation: rules and the model then refuse a PCIe path for it
    pcie_gen: Generation | None = None
    # host PCIe width; None (the default, for a site's own GPU entries too) where no vendor text gives it:
    # the model then refuses a GPU-GPU path over PCIe rather than assume one
    pcie_lanes: int | None = Field(default=None, ge=1, le=32)
    sm_arch: int = Field(ge=0, le=1000)
    nvls: bool = False
    rccl_msccl: bool = False  # RCCL turns its MSCCL algorithms on for this GPU's node by default


class NvlinkGeneration(Entry):
    link_gbytes_bidir: float
    article_per_gpu_gbytes: float
    latency_class: str
    gpus: tuple[CatalogId, ...]


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
    ports: Annotated[int, Field(ge=1, le=16)]
    form_factor: str
    power_w: float


class SwitchUplinks(Entry):
    count: SmallCount
    speed_gbps: float


class SwitchPortLayout(Entry):
    """Leaf ports facing nodes / spines, in use order (``"1-18"``); absent = 1.. down, then up.

    Checked as the blueprint's own ``port_layout`` is (blueprints/models/naming.py), so a bad one is refused
    at its line in the catalogue file, not met by the planner (which then failed with exit 3)."""

    down: str
    up: str

    @field_validator("down", "up")
    @classmethod
    def _ports(cls, v: str) -> str:
        parse_ports(v)  # here too, so the error names the key (`down: abc`), not only the layout
        return v

    @model_validator(mode="after")
    def _apart(self) -> "SwitchPortLayout":
        layout_ports(self.down, self.up)
        return self


class Switch(Entry):
    name: str
    manufacturer: str | None = None  # vendor as NetBox names it (device-type manufacturer); None = unknown
    technology: Literal["infiniband", "ethernet"]
    speed_gbps: float
    ports: Annotated[int, Field(ge=1, le=1024)]
    cages: PortCount
    ports_per_cage: Annotated[int, Field(ge=1, le=8)]
    splits: dict[float, PortCount] = {}
    form_factor: str
    rack_units: SmallCount
    power_w: float
    # True where no vendor text gives the figure (PWR006 names it so the site declares its own); a site's
    # own entry is its own figure
    power_estimated: bool = False
    latency_ns: float
    sharp: bool = False
    managed: bool = False
    sharp_port: PortCount | None = None
    uplinks: SwitchUplinks | None = None
    port_layout: SwitchPortLayout | None = None  # a model's usual leaf layout, with its source

    @model_validator(mode="after")
    def _layout_fits(self) -> "Switch":
        """A layout must fit the leaf at one speed at least (its native one or a split): the planner checks
        the fabric's own speed (generator/plan/site_names.py), with the same function."""
        if self.port_layout is None:
            return self
        down, up = layout_ports(self.port_layout.down, self.port_layout.up)
        uplinks = self.uplinks.count if self.uplinks else 0
        radix = {self.speed_gbps: self.ports, **{s: k for s, k in self.splits.items() if k}}
        misfits = {s: layout_misfit(down, up, k, uplinks) for s, k in radix.items()}
        if any(m is None for m in misfits.values()):
            return self
        speed = max(radix, key=lambda s: radix[s])  # the speed with the most ports: the nearest fit
        key, message = misfits[speed] or ("", "")
        # the field first, as _field_named in load.py reads it to point at the key's line
        raise ValueError(f"port_layout{'.' + key if key else ''}: {message} (at {speed:g} Gb/s)")

    def ports_at(self, speed_gbps: float) -> int:
        """Logical ports available at ``speed_gbps`` (native or a supported split), 0 if none."""
        if speed_gbps == self.speed_gbps:
            return self.ports
        return self.splits.get(speed_gbps, 0)


class Medium(Entry):
    name: str
    kind: Literal["dac", "acc", "aoc", "mmf", "smf", "utp"]
    preference: SmallCount
    netbox_type: str
    reach_by_speed_m: dict[float, float]
    lengths_m: tuple[float, ...]
    part_numbers: dict[float, str] = {}
    needs_transceivers: bool
    infiniband_max_gbps: float | None = None  # fastest InfiniBand rate it carries (None: as reach allows)

    @field_validator("lengths_m")
    @classmethod
    def _centimetres(cls, lengths: tuple[float, ...]) -> tuple[float, ...]:
        """An orderable length is the plan's cable length everywhere it is shown, NetBox's import included,
        whose Cable.length holds 2 decimals (DecimalField(max_digits=8, decimal_places=2), netbox dcim
        migration 0132_cable_length): `7.125` reached netbox/cables.csv and the import refused it."""
        for i, length in enumerate(lengths):
            if math.isfinite(length) and abs(length * 100 - round(length * 100)) > 1e-6:
                raise ValueError(
                    f"lengths_m[{i}]: {length!r} has more than 2 decimals; give lengths in whole centimetres "
                    f"(e.g. {math.ceil(length * 100 - 1e-6) / 100:g})"
                )
        return lengths


class Transceiver(Entry):
    name: str
    part_number: str | None
    medium: Literal["mmf", "smf"]
    speed_gbps: float
    form_factor: str
    ports: Annotated[int, Field(ge=1, le=16)]
    reach_m: float
    power_w: float | None  # None: no published figure
    protocols: tuple[Literal["infiniband", "ethernet"], ...] = ("infiniband", "ethernet")


class ServerNic(Entry):
    purpose: Literal["compute", "storage", "management"]
    model: CatalogId
    count: int = Field(ge=1, le=64)
    ports: int = Field(default=1, ge=1, le=2)
    speed_gbps: float
    cage_ports: int = Field(default=1, ge=1, le=2)


class Server(Entry):
    name: str
    manufacturer: str | None = None  # vendor for DGX-class systems; None for OEM / generic boxes
    gpu: CatalogId | None
    gpus: SmallCount
    gpu_interconnect: GpuInterconnect
    nvswitches: SmallCount
    nvlink_domain_gpus: PortCount
    pcie_gen: Generation
    power_kw: float
    power_estimated: bool = False  # as Switch.power_estimated
    rack_units: SmallCount
    nics: tuple[ServerNic, ...] = Field(max_length=64)

    @property
    def nodes_per_nvlink_domain(self) -> int:
        """How many of these servers one NVLink domain spans: more than one when NVLink leaves the server
        (GB200 NVL72: 72 GPUs over 18 trays of 4), else 1."""
        if self.gpus <= 0 or self.nvlink_domain_gpus <= self.gpus:
            return 1
        return max(1, self.nvlink_domain_gpus // self.gpus)


class CloudInstance(Entry):
    gpu: CatalogId
    gpus: SmallCount
    gpu_interconnect: GpuInterconnect
    nvswitches: SmallCount = 0
    fabric: CatalogId
    network_cards: SmallCount
    nic_gbps: float
    total_gbps: float
    # Provider layout details (see the field notes in data/cloud.yaml); defaults suit a plain instance.
    efa_interfaces: SmallCount = 0
    fsx_efa: bool = False
    capacity_blocks: bool = False
    host_nics: SmallCount = 1
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


# A repository suite or package name with at most the one placeholder the deploy layer fills in
# (`{codename}`, `{kernel}`); any other brace is refused like in all catalogue text.
_APT_WORD = r"[A-Za-z0-9._+~:-]*"


# an apt package name; `{kernel}` = uname -r, `=` pins a version (apt's `name=version`)
ClientPackage = Annotated[
    str,
    StringConstraints(pattern=rf"^{_APT_WORD}(=?\{{kernel\}})?{_APT_WORD}(={_APT_WORD})?$", max_length=120),
]


class StorageClient(Entry):
    """Where a managed file system's client comes from (an apt repository; `{kernel}` = uname -r)."""

    _own_pattern: ClassVar[frozenset[str]] = frozenset({"repo", "suite", "packages", "packages_by_os"})
    # `{codename}` = the Ubuntu release codename (in the repository URL too: Azure's amlfs-<codename>)
    repo: Annotated[
        str, StringConstraints(pattern=r"^https://[A-Za-z0-9./_-]*(\{codename\})?[A-Za-z0-9./_-]*$")
    ]
    suite: Annotated[str, StringConstraints(pattern=rf"^{_APT_WORD}(\{{codename\}})?{_APT_WORD}$")]
    components: list[str] = []
    key_url: str
    packages: list[ClientPackage] = []
    # software.os -> packages, for services that publish one versioned package per release (AMLFS)
    packages_by_os: dict[
        Annotated[str, StringConstraints(pattern=r"^[a-z]+-[0-9.]+$")], list[ClientPackage]
    ] = {}

    def packages_for(self, os: str) -> list[str]:
        """The packages for one OS release; empty when the service publishes none for it."""
        return list(self.packages_by_os.get(os, self.packages))


class ManagedStorage(Entry):
    _own_pattern: ClassVar[frozenset[str]] = frozenset({"sku"})
    service: str
    protocol: Literal["lustre", "nfs"]
    # a provider SKU name; `{tier}` (only that placeholder) is replaced by the throughput tier
    sku: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9._-]*(\{tier\})?[A-Za-z0-9._-]*$")] | None = (
        None
    )
    unit: Literal["GiB", "GB"] = "GiB"
    tiers: dict[int, StorageTier]
    mount_options: str = "_netdev"  # fstab options the vendor documents for its clients
    client: StorageClient | None = None  # None: the image or the site's repository provides it
    # the subnet a file system needs by its size: largest capacity in TiB -> the longest subnet prefix the
    # vendor documents for it; {}: the service takes its addresses elsewhere or documents no table
    subnet_prefix: dict[int, int] = {}


class AccessPath(Entry):
    """One documented way from the operator's controller into private nodes (data/cloud.yaml `access`):
    an OpenSSH ProxyCommand; `%h`/`%p` are ssh's tokens, `{project}`/`{zone}` the stack's values."""

    _own_pattern: ClassVar[frozenset[str]] = frozenset({"proxy_command"})
    target: Literal["aws", "gcp"]
    # the node's stack output ssh connects to (%h): the instance id, or the instance name (= hostname)
    host: Literal["instance", "name"]
    proxy_command: Annotated[
        str,
        StringConstraints(pattern=r"^[^\x00-\x1f{}]*(\{(project|zone)\}[^\x00-\x1f{}]*)*$", max_length=300),
    ]
    ssh_options: dict[str, str] = {}  # further `-o` options the vendor sets with it


class CloudImage(Entry):
    """A default boot image for one cloud and OS (data/cloud.yaml `images`)."""

    image: dict[str, str]  # the provider's lookup keys (AMI owner/name, marketplace URN parts, image family)
    driver_branch: str | None = None  # NVIDIA driver branch the image ships, when it names one
    tuned: bool = False  # the image carries the vendor's HPC stack and tuning (Ansible keeps it)


class PerfConstant(Entry):
    value: float
    unit: str
    source: str


PortText = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,39}$")]


class MappedPort(Entry):
    """One host port as the platform's vendor publishes it (any name the vendor does not give is null)."""

    role: Literal["compute", "storage", "inband", "frontend", "bmc"]
    # Every name below reaches cable labels, NCCL_IB_HCA, ibstat's argv, lnet.conf and ibnetdiscover's quoted
    # descriptions: the characters of a blueprint's own port names (blueprints/models/nodes.py PortName),
    # which every vendor name in the shipped catalogue uses, so no space or quote can split or end one there.
    faceplate: PortText | None = None  # name printed on the chassis / in the vendor table (OSFP1P1)
    cage: int | None = None  # twin-port cage number (OSFP<n>)
    cage_port: int | None = None  # sub-port inside the cage (P<n>)
    pci: PortText | None = None  # PCI address, where published
    rdma: PortText | None = None  # RDMA device (mlx5_11)
    netdev: NetdevName | None = None  # network interface (ibp220s0)
    # The link layer the interface name belongs to (an IPoIB name like ibp220s0 is not the Ethernet one).
    netdev_link: Literal["infiniband", "ethernet"] | None = None
    # The interface name the vendor publishes for the other link layer (DGX Table 5 "Optional").
    netdev_optional: NetdevName | None = None
    gpu: int | None = None  # GPU the vendor pairs with this port (DGX "GPU" column)
    speed_gbps: float | None = None
    source: str  # document and table (or repository path) this row comes from


class PlatformSetting(Entry):
    """One NCCL / libfabric / plug-in environment variable the platform's vendor publishes."""

    name: str = Field(pattern=r"^[A-Z][A-Z0-9_]{0,63}$")
    value: str = Field(pattern=r"^[A-Za-z0-9_.,:=/^+-]{0,400}$")
    source: str


# A Debian package name, optionally pinned (`name=version`).
AptPackage = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9.+-]*(=[A-Za-z0-9.+~:-]+)?$")]


class PluginInstallStep(Entry):
    """One apt repository of a plug-in install and the packages installed from it, in the vendor's order."""

    repo: str = Field(pattern=r"^deb [A-Za-z0-9 :/._+=\[\]-]{1,300}$")
    packages: tuple[AptPackage, ...]


PROFILE_LINE_RE = r"^export [A-Z][A-Z0-9_]{0,63}=([A-Za-z0-9_./:-]|\$\{[A-Z][A-Z0-9_]{0,63}\}){0,60}$"
# One word of a command line the role runs as argv (no shell): flags, paths, registry hosts.
ArgvWord = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_./:=-]{1,200}$")]


class ContainerInstall(Entry):
    """A plug-in installed by running its vendor's installer image, which copies it into a host directory."""

    login: tuple[ArgvWord, ...]  # registry login the vendor runs first (argv)
    login_path: str = Field(pattern=r"^/[A-Za-z0-9._/-]{1,200}$")  # appended to PATH for the login command
    # the directory the vendor removes before installing (what a previous install left)
    removes: str = Field(pattern=r"^/[A-Za-z0-9._/-]{1,200}$")
    image: str = Field(pattern=r"^[a-z0-9.-]+(/[a-z0-9._-]+)+:[A-Za-z0-9._-]{1,128}$")  # with its tag
    run: tuple[ArgvWord, ...]  # `docker run` options (name, network, host mounts)
    args: tuple[ArgvWord, ...]  # the installer's own command
    source: str


class PluginInstall(Entry):
    """How the plug-in's vendor installs it on a VM (Debian family), step by step, as published."""

    apt_keys: tuple[Annotated[str, StringConstraints(pattern=r"^https://[A-Za-z0-9./_-]{1,200}$")], ...] = ()
    steps: tuple[PluginInstallStep, ...] = ()
    # A profile line may expand a variable (${LD_LIBRARY_PATH}); its pattern admits a brace only right
    # after `$` around a variable name, so no template delimiter can form.
    _own_pattern: ClassVar[frozenset[str]] = frozenset({"profile_lines"})

    container: ContainerInstall | None = None
    # Lines the vendor appends to the plug-in's profile after installing it, on these distributions
    # ("Debian 12": name and major release; "Ubuntu": any release).
    profile_lines: tuple[Annotated[str, StringConstraints(pattern=PROFILE_LINE_RE)], ...] = ()
    profile_lines_on: tuple[
        Annotated[str, StringConstraints(pattern=r"^[A-Z][A-Za-z]{1,30}( [0-9]{1,3})?$")], ...
    ] = ()
    hold: tuple[Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9.+-]*$")], ...] = ()
    # /etc/profile.d file that sources the plug-in's profile for login shells
    login_profile: str | None = Field(default=None, pattern=r"^/etc/profile\.d/[A-Za-z0-9._-]{1,100}\.sh$")
    source: str


class SlurmSetting(Entry):
    """One slurm.conf setting the vendor's Slurm cluster sets for its job prolog (timers, prolog flags)."""

    name: Literal["PrologFlags", "PrologEpilogTimeout", "MessageTimeout", "BatchStartTimeout"]
    value: str = Field(pattern=r"^[A-Za-z0-9,]{1,64}$")


class JobScript(Entry):
    """A script the vendor's Slurm cluster runs as the job prolog and epilog on the platform's nodes (e.g.
    slurm-gcp's RxDM prolog for TCPXO), fetched from a pinned commit; the nccl role installs it at ``path``
    and the Slurm fragment names it as Prolog= and Epilog=."""

    # raw.githubusercontent.com at a full commit id: the bytes cannot change under the pin
    url: str = Field(
        pattern=r"^https://raw\.githubusercontent\.com/[A-Za-z0-9._-]{1,100}/[A-Za-z0-9._-]{1,100}/[0-9a-f]{40}"
        r"/[A-Za-z0-9._/-]{1,150}$"
    )
    path: str = Field(pattern=r"^/[A-Za-z0-9._/-]{1,200}$")
    mode: str = Field(pattern=r"^0[0-7]{3}$")  # the script's
    dir_mode: str = Field(pattern=r"^0[0-7]{3}$")  # the directory holding it
    slurm_conf: tuple[SlurmSetting, ...] = ()
    source: str


class PlatformPlugin(Entry):
    """A network plug-in the platform needs for NCCL, and where its image installs it."""

    name: str  # aws-ofi-nccl | gib | tcpxo | nccl-rdma-sharp-plugins
    min_version: str | None = None
    path: str | None = None  # file the image installs (checked by the nccl role)
    profile: str | None = None  # vendor script that sets the plug-in's environment (sourced by jobs)
    source: str
    install: PluginInstall | None = None  # the vendor's install steps, when it publishes them
    job_script: JobScript | None = None  # per-job work of the plug-in (e.g. TCPXO's RxDM), as a Slurm prolog


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
    default_nccl: str | None = None  # an NCCL release built for default_cuda
    default_nccl_source: str | None = None
    # The NVIDIA kernel-module flavour the architecture needs (None: either; the role keeps proprietary).
    kernel_modules: Literal["open", "proprietary"] | None = None
    kernel_modules_source: str | None = None


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


class NcclCudaBuilds(Entry):
    """The CUDA releases NVIDIA publishes builds of one NCCL release for (``<nccl>-1+cuda<X.Y>``)."""

    nccl: str  # e.g. 2.12.12
    cuda: tuple[str, ...]  # major.minor of each build
    source: str


class OfedOsAdded(Entry):
    """An OFED release whose release notes add the first release of an OS major version.

    A lower bound on its release line only: releases of the same line (``5.6`` of ``5.6-2.0.9.0``) come
    out in version order, so the line's earlier releases lack the OS. Another line (an LTS branch such as
    5.4-3.x, which NVIDIA updates with "support for new major operating systems") may have added it on
    its own, so nothing is said about other lines.
    """

    ofed: Literal["doca", "mlnx"]
    os: str  # a software.os value (blueprints/models/software.py), e.g. rhel-9
    os_release: str  # the vendor's name of the release added, e.g. RHEL 9.0
    added_in: str  # full release, e.g. 5.6-2.0.9.0
    source: str


class FabricManagerMatch(Entry):
    """That Fabric Manager must be the installed driver's exact version (its package names, per OS family and
    driver branch: DriverPackages.fabricmanager)."""

    source: str


# A package name in NVIDIA's CUDA repository; ``<branch>`` stands for the driver branch (570 of 570.124.06)
PackageName = Annotated[
    str, StringConstraints(pattern=r"^([a-z0-9][a-z0-9.+-]*)?(<branch>[a-z0-9.+-]*)?$", min_length=1)
]


def for_branch(name: str, branch: str) -> str:
    return name.replace("<branch>", branch)


# Driver branches a range may name (software.driver_branch is three or four digits)
BranchNumber = Annotated[int, Field(ge=100, le=9999)]


class BranchPackage(Entry):
    """A package's name in NVIDIA's CUDA repository for the driver branches ``first`` to ``last`` (inclusive;
    ``<branch>`` in ``name`` stands for the branch): NVIDIA renames packages between branches (IMEX, Fabric
    Manager and NSCQ lose the branch from their names at 580), so each range has its own source."""

    first: BranchNumber
    last: BranchNumber
    name: PackageName
    source: str

    @model_validator(mode="after")
    def _ordered(self) -> "BranchPackage":
        if self.last < self.first:
            raise ValueError(f"branches {self.first} to {self.last}: the last is before the first")
        return self


def package_for(ranges: tuple[BranchPackage, ...], branch: str) -> BranchPackage | None:
    """The range holding ``branch`` (software.driver_branch), None where no range is recorded for it."""
    number = int(branch)
    return next((p for p in ranges if p.first <= number <= p.last), None)


class DriverFlavour(Entry):
    """The packages of one kernel-module flavour of the driver (proprietary or open) in NVIDIA's repo."""

    packages: tuple[PackageName, ...]  # what the role installs
    version_package: PackageName  # the package whose version is the driver version
    module_stream: PackageName | None = (
        None  # DNF module stream of nvidia-driver (RHEL 8/9), e.g. <branch>-open
    )
    source: str


# The values a blueprint's software.os takes (blueprints/models/software.py): what a catalogue entry for an OS
# may name, since an entry for any other spelling (rhel9 for rhel-9) would never match a blueprint.
SOFTWARE_OS: tuple[str, ...] = get_args(Software.model_fields["os"].annotation)


def software_os(value: str) -> str:
    if value not in SOFTWARE_OS:
        raise ValueError(f"`{value}` is not a software.os value; known: {', '.join(SOFTWARE_OS)}")
    return value


# A directory of NVIDIA's CUDA repository: a distribution release's (rhel9) or an architecture's (sbsa)
RepoDir = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$")]


class CudaRepo(Entry):
    """NVIDIA's CUDA repository: ``<url><distribution dir>/<architecture dir>/`` (the distribution's directory
    is the driver_packages entry's ``repo_dirs``), keyed by Ansible's ``ansible_architecture``."""

    url: Annotated[str, StringConstraints(pattern=r"^https://[A-Za-z0-9.-]+/[A-Za-z0-9._/-]*/$")]
    arch_dirs: dict[str, RepoDir]
    source: str


# The packages an NVSwitch system adds to the driver: Fabric Manager and the NSCQ library
NvswitchPackage = Literal["fabricmanager", "nscq"]


class DriverPackages(Entry):
    """NVIDIA's driver packages for the OS releases of one family (names with ``<branch>``)."""

    os: tuple[str, ...]  # software.os values (blueprints/models/software.py)
    repo_dirs: dict[str, RepoDir]  # each os value's directory of the CUDA repository (rocky-9: rhel9)
    repo_dirs_source: str
    repo_key: Annotated[
        str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    ]  # file name of the CUDA repository's signing key, under the repository URL
    repo_key_source: str
    proprietary: DriverFlavour
    open: DriverFlavour
    # Fabric Manager and NSCQ (NVSwitch systems) per range of driver branches
    fabricmanager: tuple[BranchPackage, ...]
    nscq: tuple[BranchPackage, ...]
    # of a site's entry that gives Fabric Manager and NSCQ one name each, for every branch
    source: str | None = None
    versionlock_package: PackageName | None = None  # what community.general.yum_versionlock needs (DNF)
    versionlock_source: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _one_name_for_every_branch(cls, data: Any) -> Any:
        """A site's entry may name its mirror's Fabric Manager / NSCQ package once (``nscq: libnvidia-nscq``):
        that name for every branch, with the entry's ``source``."""
        if not isinstance(data, dict):
            return data
        out = dict(data)
        for key in ("fabricmanager", "nscq"):
            if isinstance(out.get(key), str):
                source = out.get("source") or "the catalogue entry of this OS"
                out[key] = ({"first": 100, "last": 9999, "name": out[key], "source": source},)
        return out

    @field_validator("os")
    @classmethod
    def _known_os(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(software_os(os) for os in value)

    @model_validator(mode="after")
    def _a_dir_per_os(self) -> "DriverPackages":
        missing = [os for os in self.os if os not in self.repo_dirs]
        extra = [os for os in self.repo_dirs if os not in self.os]
        if missing or extra:
            raise ValueError(
                "repo_dirs: one CUDA repository directory for each os value "
                + (f"(none for {', '.join(missing)})" if missing else f"({', '.join(extra)} is not in os)")
            )
        return self

    def flavour(self, kind: str) -> DriverFlavour:
        return self.open if kind == "open" else self.proprietary

    def nvswitch_for(self, which: NvswitchPackage, branch: str) -> BranchPackage | None:
        """The Fabric Manager or NSCQ range holding ``branch``, None where none is recorded."""
        return package_for(self.fabricmanager if which == "fabricmanager" else self.nscq, branch)


class SlurmImexSwitch(Entry):
    """Slurm's switch plugin that gives each job its own IMEX channel: its SwitchType value and the first
    Slurm release whose plugin isolates jobs (software.slurm at or above it: the build configures it)."""

    switch_type: Annotated[str, StringConstraints(pattern=r"^switch/[a-z0-9_]+$")]
    since: VersionStr
    source: str


class ImexFacts(Entry):
    """NVIDIA IMEX on multi-node NVLink systems: the package per range of driver branches, the systemd
    service, the main config file, its key naming the node list, and the node list's path; and Slurm's
    plugin for a channel per job (None: no recorded plugin, jobs share channel 0)."""

    packages: tuple[BranchPackage, ...]
    service: Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._-]*$")]
    service_source: str
    config_file: Annotated[str, StringConstraints(pattern=r"^/[A-Za-z0-9._/-]+$")]
    config_source: str
    node_config_key: Annotated[str, StringConstraints(pattern=r"^[A-Z][A-Z0-9_]*$")]
    nodes_config_file: Annotated[str, StringConstraints(pattern=r"^/[A-Za-z0-9._/-]+$")]
    nodes_config_source: str
    slurm_switch: SlurmImexSwitch | None = None

    def package_for(self, branch: str) -> BranchPackage | None:
        """The entry whose branches hold ``branch`` (software.driver_branch), None where none is recorded."""
        return package_for(self.packages, branch)


class SoftwareCompat(Entry):
    architectures: dict[str, ArchSupport]
    cuda_drivers: dict[str, CudaDriver]
    ofed_nic_limits: tuple[OfedNicLimit, ...] = ()
    nccl_cuda_builds: tuple[NcclCudaBuilds, ...] = ()
    ofed_os_added: tuple[OfedOsAdded, ...] = ()
    fabric_manager: FabricManagerMatch | None = None
    driver_packages: tuple[DriverPackages, ...] = ()
    cuda_repo: CudaRepo | None = None
    imex: ImexFacts | None = None

    def driver_packages_for(self, os: str) -> DriverPackages | None:
        return next((d for d in self.driver_packages if os in d.os), None)

    def kernel_modules(self, sm_arch: int) -> Literal["open", "proprietary"]:
        """The flavour a GPU of ``sm_arch`` gets: open where its architecture's entry requires it."""
        found = self.arch_of(sm_arch)
        return "open" if found is not None and found[1].kernel_modules == "open" else "proprietary"

    def arch_of(self, sm_arch: int) -> tuple[str, ArchSupport] | None:
        return next(((k, a) for k, a in self.architectures.items() if sm_arch in a.sm_archs), None)
