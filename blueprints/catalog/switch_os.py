"""Switch operating systems and their releases (``data/switch_os.yaml``).

``fabrics.<f>.switch_os`` names an OS and optionally a release: ``frr``, ``cumulus`` / ``cumulus-linux``
(the latest Cumulus Linux release the catalogue documents) or ``cumulus-linux@5.14``. The facts per release
(NVUE key spellings, RoCE QoS values) and their sources live in the YAML; this module types, loads and
looks them up.
"""

from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from blueprints.catalog.load import validated_file

# The spellings of Cumulus Linux in fabrics.<f>.switch_os, the OS whose releases this catalogue documents;
# any other name is its own OS (its record: generator/emit/switches/systems/<name>.py).
CUMULUS_NAMES = ("cumulus", "cumulus-linux")


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # built on first use


class RoceQos(_Entry):
    """RoCE QoS as NVIDIA documents it for a release (sources in the YAML)."""

    roce_traffic_class: int
    default_priority: int
    lossless_pool: str
    lossless_memory_percent: int = Field(ge=0, le=100)
    lossy_pool: str
    lossy_memory_percent: int = Field(ge=0, le=100)
    ecn_min_threshold_bytes: int = Field(gt=0)
    ecn_max_threshold_bytes: int = Field(gt=0)
    ecn_probability_percent: int = Field(ge=0, le=100)


class NvueRelease(_Entry):
    """How one Cumulus Linux release spells the NVUE keys that changed between releases."""

    docs: str
    state_key: str  # the leaf that turns a feature on: `enable` (<= 5.14) or `state` (5.15)
    state_on: str  # its value: `on` or `enabled`
    flag_on: str  # value of a boolean leaf such as aspath-ignore: `on` or `enabled`
    interface_ipv4: str  # `ip` (<= 5.14) or `ipv4` (5.15): interface <id> <this> address <prefix>
    ecn_on: str
    roce: RoceQos
    # management leaves (generator/emit/switches/management.py): how the release writes a DHCP relay
    # (`server-group`: `service dhcp-relay <vrf> server-group <g> server|upstream-interface` and
    # `downstream-interface <svi> server-group-name <g>`, 5.14 and later) and the default bridge
    dhcp_relay: Literal["server-group"] = "server-group"  # the <= 5.13 form is not written
    bridge_domain: str = "br_default"


class _Family(_Entry):
    releases: dict[str, NvueRelease]


class _Document(_Entry):
    roce_documented: RoceQos
    cumulus_linux: _Family = Field(alias="cumulus-linux")


@cache
def _document() -> _Document:
    return validated_file(_Document, "switch_os.yaml")


def _version_key(release: str) -> tuple[int, ...]:
    return tuple(int(part) for part in release.split("."))


def releases() -> tuple[str, ...]:
    """Cumulus Linux releases the catalogue documents, oldest first."""
    return tuple(sorted(_document().cumulus_linux.releases, key=_version_key))


def latest_release() -> str:
    return releases()[-1]


def split(switch_os: str) -> tuple[str, str | None]:
    """(kind, release as written or None) of a switch_os value the model accepted."""
    name, _, release = switch_os.partition("@")
    return ("cumulus" if name in CUMULUS_NAMES else name), (release or None)


def os_kind(switch_os: str) -> str:
    return split(switch_os)[0]


def unknown_release(switch_os: str) -> str | None:
    """The release written in ``switch_os`` when the catalogue does not document it, else None."""
    kind, release = split(switch_os)
    return release if kind == "cumulus" and release is not None and release not in releases() else None


def nvue_release(switch_os: str) -> tuple[str, NvueRelease]:
    """(release, its NVUE facts) for a Cumulus switch_os; the latest release when none is written.

    Raises KeyError for a release the catalogue does not document (NET016 reports it first)."""
    kind, release = split(switch_os)
    if kind != "cumulus":
        raise KeyError(f"{switch_os} is not a Cumulus Linux switch OS")
    name = release or latest_release()
    return name, _document().cumulus_linux.releases[name]
