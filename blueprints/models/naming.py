"""Site naming: host and switch names from templates or explicit lists, and leaf port layouts.

A template is literal name characters with fields in braces, optionally zero-padded to a width:
``a05-p1-dgx-{index:02}`` → ``a05-p1-dgx-01``. Only the fields listed for the use are accepted, so a
template can never reach anything but the numbers the plan knows (no attribute access, no format specs
beyond a width). Port layouts list the switch ports, in order, that face nodes (``down``) and spines
(``up``): ``"1-18"``, ``"33-50"``, ``"1,3,5-8"``.
"""

import re
from collections.abc import Mapping
from typing import Annotated

from pydantic import Field, StringConstraints, field_validator, model_validator

from blueprints.models.base import SAFE_NAME, Model

_FIELD = re.compile(r"\{([a-z_0-9]+)(?::(0?)(\d{1,2}))?\}")
# fullmatch, never `$` (which also matches before a final newline: `"gpu-{index}\n"` passed)
_TEMPLATE = re.compile(r"(?:[a-z0-9-]|\{[a-z_0-9]+(?::0?\d{1,2})?\})+")
# switch names keep the site's case (`R01-P1-IBLEAF-1-2`): switches are named in DNS, LLDP and OpenSM,
# which compare names without case, so two names differing only in case are refused as one name
_SWITCH_TEMPLATE = re.compile(r"(?:[A-Za-z0-9-]|\{[a-z_0-9]+(?::0?\d{1,2})?\})+")
SwitchName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9-]{0,39}$")]
_RANGE = re.compile(r"^\s*(\d{1,4})\s*(?:-\s*(\d{1,4}))?\s*$")

HOST_FIELDS = ("pool", "index", "su", "su_index", "rack", "slot")
SWITCH_FIELDS = ("fabric", "index", "su", "rail", "rail0", "pod", "group")


def template_fields(template: str) -> list[str]:
    return [m.group(1) for m in _FIELD.finditer(template)]


def check_template(template: str, allowed: tuple[str, ...]) -> str:
    switch = allowed is SWITCH_FIELDS
    if not (_SWITCH_TEMPLATE if switch else _TEMPLATE).fullmatch(template):
        letters = "letters" if switch else "lower-case letters"
        raise ValueError(  # repr: a newline or escape in the template is shown, never printed
            f"{template!r} is not a name template: {letters}, digits, '-' and fields like {{index:02}}"
        )
    bad = [f for f in template_fields(template) if f not in allowed]
    if bad:
        raise ValueError(f"{template!r}: unknown field(s) {', '.join(bad)}; allowed: {', '.join(allowed)}")
    return template


def render_template(template: str, values: Mapping[str, object]) -> str:
    """Fill the fields; a field whose value is None (e.g. ``su`` of a pool with no SU) raises KeyError."""

    def one(m: re.Match[str]) -> str:
        value = values.get(m.group(1))
        if value is None:
            raise KeyError(m.group(1))
        width = int(m.group(3) or 0)
        return f"{value:0{width}d}" if isinstance(value, int) else str(value)

    return _FIELD.sub(one, template)


def parse_ports(text: str) -> list[int]:
    """``"1-18,33"`` → [1, ..., 18, 33]; ports are 1-based and listed once."""
    out: list[int] = []
    for part in text.split(","):
        m = _RANGE.match(part)
        if not m:
            raise ValueError(f"`{part.strip()}` is not a port or a range like 1-18")
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if lo < 1 or hi < lo:
            raise ValueError(f"`{part.strip()}`: ports count from 1 and ranges go up")
        out.extend(range(lo, hi + 1))
    if len(set(out)) != len(out):
        raise ValueError(f"`{text}` lists a port twice")
    return out


class NameSource(Model):
    """Names of one switch tier: a template, or the names in build order."""

    template: str | None = Field(default=None, description="e.g. ib-leaf-su{su}-r{rail}")
    names: list[SwitchName] | None = Field(default=None, max_length=100_000)
    """the tier's switch names in build order (instead of a template)"""

    @field_validator("template")
    @classmethod
    def _template(cls, v: str | None) -> str | None:
        return check_template(v, SWITCH_FIELDS) if v is not None else v

    @model_validator(mode="after")
    def _one(self) -> "NameSource":
        if (self.template is None) == (self.names is None):
            raise ValueError("give exactly one of `template` or `names`")
        return self


class SwitchNames(Model):
    """Site names of a fabric's switches, per tier (unnamed tiers keep the tool's names)."""

    leaf: NameSource | None = None
    """names of the leaf switches"""
    spine: NameSource | None = None
    """names of the spine switches"""
    core: NameSource | None = None
    """names of the core switches (3 tiers)"""


def layout_ports(down: str, up: str) -> tuple[list[int], list[int]]:
    """A leaf layout's down and up ports; a port listed both ways is refused (two cables on one port).
    The one check of every layout, the blueprint's ``port_layout`` and a catalogue switch's alike."""
    down_ports, up_ports = parse_ports(down), parse_ports(up)
    both = set(down_ports) & set(up_ports)
    if both:
        raise ValueError(f"ports {sorted(both)[:8]} are listed both down and up")
    return down_ports, up_ports


def layout_misfit(down: list[int], up: list[int], ports: int, uplinks: int) -> tuple[str, str] | None:
    """Why a layout does not fit a leaf with ``ports`` node-facing ports and ``uplinks`` dedicated uplink
    ports numbered after them (SN2201: 48 x 1G, then 4 x 100G as ports 49-52; 0 for a switch without):
    (the layout key it concerns, "" for both; the message), or None when it fits."""
    capacity = ports + uplinks
    too_big = [p for p in (*down, *up) if p > capacity]
    if too_big:
        return "", f"port {too_big[0]} is beyond the leaf's {capacity} ports"
    if not uplinks:
        return None
    # the uplinks run at the uplink ports' speed, the node ports at theirs
    wrong_up = [p for p in up if p <= ports]
    if wrong_up:
        return "up", (
            f"uplink port {wrong_up[0]} is one of the leaf's {ports} node ports; its uplinks are "
            f"ports {ports + 1}-{capacity}"
        )
    wrong_down = [p for p in down if p > ports]
    if wrong_down:
        return "down", (
            f"node port {wrong_down[0]} is one of the leaf's uplink ports {ports + 1}-{capacity}; "
            f"its node ports are 1-{ports}"
        )
    return None


class PortLayout(Model):
    """Which leaf ports face nodes and which face spines, in the order they are used."""

    down: str = Field(description="node-facing ports, e.g. 1-18")
    up: str = Field(description="spine-facing ports, e.g. 33-50")

    @model_validator(mode="after")
    def _ports(self) -> "PortLayout":
        layout_ports(self.down, self.up)
        return self


def is_safe_name(name: str) -> bool:
    return bool(SAFE_NAME.fullmatch(name))  # fullmatch: `$` would accept a final newline
