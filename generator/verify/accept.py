"""Accepted differences: what a site knows is not as planned (``verify-cabling --accept FILE``).

A YAML file the site keeps next to its blueprint::

    absent:                       # devices known not to be there (never installed, out for repair)
      - {device: a05-ibleaf-su2-r8, reason: never installed}
    cables:                       # planned cables whose finding is acknowledged (missing, miswired, rate)
      - {cable: <plan cable id>, reason: spare optic on order}
    ports:                        # switch ports with something the plan does not cable (a UFM appliance)
      - {device: a05-ibleaf-su1-r1, port: 40, reason: UFM appliance}
      - {device: c-leaf-su1-r0, port: swp20s1, reason: UFM appliance}   # Ethernet: the interface name

Every entry must name something of the plan's fabric (a located error otherwise), so a typo cannot
silently acknowledge nothing. Acknowledged findings are still listed, marked accepted, and the command
exits 0 when nothing else differs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
)

from generator.findings import BlueprintError
from generator.foreign import ByteBudget, ForeignInputError, json_path, pydantic_refusal, read_foreign_text
from generator.load import SourceMap, parse_yaml
from generator.plan.model import Plan
from generator.verify.diff import CableResult, Verification
from generator.verify.identify import PlanIndex, front_panel

MAX_ACCEPT_BYTES = 4 * 1024 * 1024  # one line per acknowledged item; a fabric has at most ~315k cables


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    reason: str = Field(default="", max_length=500)


class _Absent(_Entry):
    device: str = Field(min_length=1, max_length=200)


class _Cable(_Entry):
    cable: str = Field(min_length=1, max_length=200)


class _Port(_Entry):
    device: str = Field(min_length=1, max_length=200)
    # IBA PortNum is 8-bit (see ibnetdiscover.MAX_PORT); or an Ethernet switch's interface name (swp20s1),
    # read as verify-cabling reads LLDP (PlanIndex.switch_port)
    # strict: in lax mode `port: true` and `port: 1.0` (and "1.0", "+1", "0_1") were taken as port 1, and an
    # acknowledgement meant for no port passed as one. A number written in quotes ("40") is still a number.
    port: StrictInt | StrictStr = Field(union_mode="left_to_right")

    @field_validator("port", mode="before")
    @classmethod
    def _number_or_name(cls, v: object) -> object:
        if isinstance(v, bool) or not isinstance(v, int | str):
            raise ValueError(
                f"a port number (1 to 255) or a switch's front-panel interface (swp17, swp9s1, Eth1/17), "
                f"not {_yaml_type(v)}"
            )
        return int(v) if isinstance(v, str) and _DECIMAL.fullmatch(v) else v

    @field_validator("port")
    @classmethod
    def _bounded(cls, v: int | str) -> int | str:
        if isinstance(v, int) and not 1 <= v <= 255:
            raise ValueError("a port number is from 1 to 255")
        if isinstance(v, str) and not front_panel(v):
            raise ValueError("a port number, or a switch's front-panel interface (swp17, swp9s1, Eth1/17)")
        return v


_DECIMAL = re.compile(r"[0-9]{1,3}")  # a port number in quotes, as lax mode read it ("40"; "040" is 40 too)


def _yaml_type(v: object) -> str:
    """What YAML made of a value, in the user's words (`true` is a boolean, `1.0` a float)."""
    names = {bool: "a boolean", float: "a float", type(None): "null", list: "a list", dict: "a mapping"}
    return names.get(type(v), f"a {type(v).__name__}")


class _AcceptFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    absent: list[_Absent] = []
    cables: list[_Cable] = []
    ports: list[_Port] = []


@dataclass
class Accepted:
    source: str
    absent: dict[str, str] = field(default_factory=dict)  # device → reason
    cables: dict[str, str] = field(default_factory=dict)  # plan cable id → reason
    ports: dict[tuple[str, str], str] = field(default_factory=dict)  # (switch, port) → reason


def _located(doc: SourceMap, path: tuple[str | int, ...]) -> str:
    return f"{doc.locate(path)}: {json_path(path)}"


def read_accept(path: str | Path, plan: Plan, fabric: str, budget: ByteBudget | None = None) -> Accepted:
    """The accept file, every entry checked against the plan's ``fabric``; ForeignInputError (located)."""
    source = str(path)
    text = read_foreign_text(path, MAX_ACCEPT_BYTES, budget)
    try:
        doc = parse_yaml(text, source)
    except BlueprintError as exc:
        f = exc.findings[0]
        raise ForeignInputError(str(f.location or source), f.message) from None
    try:
        model = _AcceptFile.model_validate(doc.data if doc.data is not None else {})
    except ValidationError as exc:  # at the offending key's file:line:col, as every other refusal here
        raise pydantic_refusal(str(doc.locate(exc.errors()[0]["loc"])), exc.errors()) from None
    return _checked(model, plan, fabric, doc)


def _checked(
    model: _AcceptFile,
    plan: Plan,
    fabric: str,
    doc: SourceMap,
) -> Accepted:
    links = plan.links_of(fabric)
    devices = {ep.device for ln in links for ep in (ln.a, ln.b)}
    cables = {ln.id for ln in links}
    switches = {d.name: d for d in plan.switches(fabric)}
    out = Accepted(doc.file)
    for i, a in enumerate(model.absent):
        if a.device not in devices:
            where = _located(doc, ("absent", i, "device"))
            raise ForeignInputError(where, f"{a.device!r} is not a device of the {fabric} fabric")
        out.absent[a.device] = a.reason or "known absent"
    for i, c in enumerate(model.cables):
        if c.cable not in cables:
            where = _located(doc, ("cables", i, "cable"))
            raise ForeignInputError(where, f"{c.cable!r} is not a planned cable of the {fabric} fabric")
        out.cables[c.cable] = c.reason or "acknowledged"
    index = PlanIndex(plan, fabric) if any(isinstance(p.port, str) for p in model.ports) else None
    for i, p in enumerate(model.ports):
        sw = switches.get(p.device)
        if sw is None:
            where = _located(doc, ("ports", i, "device"))
            raise ForeignInputError(where, f"{p.device!r} is not a switch of the {fabric} fabric")
        port = (
            index.switch_port(p.device, p.port) if index is not None and isinstance(p.port, str) else p.port
        )
        if port is None or (isinstance(port, int) and port > sw.ports):
            where = _located(doc, ("ports", i, "port"))
            raise ForeignInputError(where, f"{p.device} has {sw.ports} ports; there is no port {p.port}")
        out.ports[(p.device, str(port))] = p.reason or "acknowledged"
    return out


def _reason(r: CableResult, acc: Accepted) -> str:
    """Why ``r`` is acknowledged ("" when it is not)."""
    if r.cable is not None and r.cable in acc.cables:
        return acc.cables[r.cable]
    if r.status == "absent" and r.a.device in acc.absent:
        return acc.absent[r.a.device]
    if r.status == "missing":
        for e in (r.a, r.b):
            if e.device in acc.absent:
                return acc.absent[e.device]
    if r.status == "unexpected":
        for e in (r.a, r.b):
            if e.known and (e.device, e.port) in acc.ports:
                return acc.ports[(e.device, e.port)]
    return ""


def apply_accepted(v: Verification, acc: Accepted) -> Verification:
    """``v`` with every acknowledged finding marked with its reason."""
    v.results = [
        r._replace(accepted=reason) if r.status != "ok" and (reason := _reason(r, acc)) else r
        for r in v.results
    ]
    v.accepted_from = acc.source
    return v
