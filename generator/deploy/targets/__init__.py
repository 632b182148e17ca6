"""The deployment-target registry: one :class:`CloudTarget` record per `deployment.target` with a program.

A target is one module in this package defining ``TARGET = CloudTarget(...)``: its Pulumi title and
components, the addresses the provider keeps per subnet, the default access path, its subnet layout, the
model of its `pulumi stack output --json`, its zone rule and its provider-only settings, each fact with its
source beside it in that module. The tables that used to list targets (the Pulumi emitter, the address
plan, the access path, the stack-outputs reader, rules DEP005-DEP007) read these records. The target's
program itself is generator/emit/pulumi_targets/<name>.py with templates/pulumi/<name>/__main__.py.

`none` (no program: only the on-prem inventory) is not a record; ``onprem(target)`` covers it.
The names (and whether each is a cloud provider) are the one list blueprints/models/targets.yaml, which the
blueprint schema and the resolver read too: a module whose name is not there is refused.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

from blueprints.models.targets import NO_TARGET, TARGETS

if TYPE_CHECKING:
    from generator.deploy.address_plan import AddressPlan, CloudNetwork
    from generator.deploy.stack_outputs import StackOutputs

# region, zone -> why the zone is not one of the region's (None: it is)
ZoneCheck = Callable[[str, str], "str | None"]
SubnetLayout = Callable[["CloudNetwork", "AddressPlan"], None]


@dataclass(frozen=True)
class CloudTarget:
    name: str  # the deployment.target value
    title: str  # what the generated Pulumi project deploys (README, project description)
    components: str  # what the program creates, for the README
    subnet_reserved: int  # addresses the provider keeps in every subnet
    stack_outputs: type[StackOutputs]  # what its program exports (`blueprint inventory --from-stack`)
    default_access: str = "vpn"  # deployment.cloud.access.via when the blueprint declares none
    subnet_layout: SubnetLayout | None = None  # the subnets its program creates from the host network
    # the shortest prefix the provider takes for the host network (its largest VPC/VCN), with its source;
    # 0: no limit the program meets
    network_largest_prefix: int = 0
    network_largest_source: str = ""
    zone_required: bool = False  # GPU placement is zonal: deployment.cloud.zone must be set (DEP005)
    zone_check: ZoneCheck | None = None  # whether the zone belongs to the region (DEP005)
    # what deployment.cloud.reservation_id must name for `capacity: reservation` (DEP006); empty: the
    # program creates the reservation itself when none is named (AWS On-Demand Capacity Reservation)
    reservation_id: str = ""
    # why the program cannot take `capacity: reservation` at all (DEP006); empty: it can
    reservation_refused: str = ""
    capacity_blocks: bool = False  # sells fixed-length GPU capacity blocks (capacity: capacity-block)
    # why a block of that many hours is not sold (None: it is); checked by DEP006 on capacity_hours
    capacity_block_hours: Callable[[int], str | None] | None = None
    capacity_block_max_instances: int = 0  # instances one block holds (0: no limit known)
    # deployment.cloud settings that mean something only on this provider: key -> why (DEP007)
    own_settings: Mapping[str, str] = field(default_factory=dict)

    @property
    def provider(self) -> bool:
        """A cloud provider (deployment.cloud) rather than on-prem bare metal (targets.yaml says which)."""
        return TARGETS[self.name].provider


def discover(package: str, path: Sequence[str]) -> dict[str, CloudTarget]:
    """The TARGET record of every module directly in ``path``, by name; a name defined twice is a bug."""
    found: dict[str, CloudTarget] = {}
    for info in pkgutil.iter_modules(list(path)):
        if info.name.startswith("_"):
            continue
        record = getattr(importlib.import_module(f"{package}.{info.name}"), "TARGET", None)
        if not isinstance(record, CloudTarget):
            continue
        if record.name in found or record.name == NO_TARGET:
            raise RuntimeError(f"deployment target {record.name} is defined twice ({info.name})")
        if record.name not in TARGETS:
            raise RuntimeError(
                f"deployment target {record.name} ({info.name}) is not in blueprints/models/targets.yaml, "
                "the list the blueprint schema reads: add it there"
            )
        found[record.name] = record
    return dict(sorted(found.items()))


@cache
def _cached(path: tuple[str, ...]) -> dict[str, CloudTarget]:
    return discover(__name__, path)


def cloud_targets() -> dict[str, CloudTarget]:
    """name -> record of every target with a program (cached per package path), sorted by name."""
    return dict(_cached(tuple(__path__)))


def cloud_target(name: str) -> CloudTarget | None:
    return cloud_targets().get(name)


def deploy_targets() -> tuple[str, ...]:
    """The targets `generate` writes a Pulumi program for."""
    return tuple(cloud_targets())


def provider_targets() -> tuple[str, ...]:
    """The cloud providers (a `deployment.cloud:` section) among them."""
    return tuple(name for name, t in cloud_targets().items() if t.provider)


def onprem(target: str) -> bool:
    """On-prem bare metal: the on-prem address plan (generator/deploy/addresses.py) applies. Read from the
    one list (targets.yaml, which names every module here and `none`, tests/unit/test_registries.py), so
    `validate` of an on-prem blueprint imports no target module (~25 ms: AWS's stack-output patterns)."""
    entry = TARGETS.get(target)
    return entry is not None and not entry.provider
