"""The switch-OS registry: one module per switch operating system whose configuration build/switches/ writes.

A module here defines ``SWITCH_OS = SwitchOs(...)``: the spellings `fabrics.<f>.switch_os` uses for it, the
one configuration file a switch gets, how playbooks/switches.yml reaches the switch, and the renderer. The
switches emitter (generator/emit/switches/__init__.py) reads only these records; catalogue facts per
release (Cumulus Linux NVUE spellings, RoCE QoS) stay in blueprints/catalog/data/switch_os.yaml.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from generator.emit.switches.qos import LosslessClass
    from generator.emit.switches.underlay import SwitchUnderlay

# switch, lossless class (None: plain Ethernet), MTU, the fabric's switch_os value -> the file's text
Renderer = Callable[["SwitchUnderlay", "LosslessClass | None", int, str], str]


@dataclass(frozen=True)
class SwitchOs:
    kind: str  # the OS (inventory `cb_switch_os`)
    names: tuple[str, ...]  # its spellings in fabrics.<f>.switch_os (before an optional `@release`)
    config_file: str  # the one configuration file per switch: <fabric>/<switch>/<config_file>
    connection: Mapping[str, object]  # Ansible group vars: how playbooks/switches.yml reaches the switch
    render: Renderer
    # further group vars from the switch_os value (Cumulus Linux: the release the file is written for)
    release_vars: Callable[[str], Mapping[str, object]] = field(default=lambda switch_os: {})


def discover(package: str, path: Sequence[str]) -> dict[str, SwitchOs]:
    """The SWITCH_OS record of every module directly in ``path``, by kind; a spelling used twice is a bug."""
    found: dict[str, SwitchOs] = {}
    for info in pkgutil.iter_modules(list(path)):
        if info.name.startswith("_"):
            continue
        record = getattr(importlib.import_module(f"{package}.{info.name}"), "SWITCH_OS", None)
        if not isinstance(record, SwitchOs):
            continue
        taken = {n for r in found.values() for n in r.names}
        if record.kind in found or taken & set(record.names):
            raise RuntimeError(f"switch OS {record.kind} is defined twice ({info.name})")
        found[record.kind] = record
    return dict(sorted(found.items()))


@cache
def _cached(path: tuple[str, ...]) -> dict[str, SwitchOs]:
    return discover(__name__, path)


def switch_oses() -> dict[str, SwitchOs]:
    """kind -> record of every switch OS (cached per package path)."""
    return dict(_cached(tuple(__path__)))


def switch_os_of(switch_os: str) -> SwitchOs:
    """The record for a `fabrics.<f>.switch_os` value (`cumulus-linux@5.14` -> Cumulus Linux)."""
    name = switch_os.partition("@")[0]
    for record in switch_oses().values():
        if name in record.names:
            return record
    raise KeyError(f"no switch OS named {name}")
