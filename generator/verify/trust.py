"""Which discovered devices may be taken for the plan devices they name.

A NodeDescription is whatever the host's administrator (or anyone with root on it, or a rogue HCA's
firmware) sets: `gpu001 mlx5_0` on a device plugged into a spare leaf port would otherwise make it a full
member of gpu001's partitions. So a name is trusted only as the plan and the operator allow: the GUID the
site recorded for that name (``--node-name-map``) when one was given, else the device sitting on its
planned port of an identified switch. A name claimed twice is never trusted. ``identity_problem`` is the
one place that decides. Devices are identified as generator/verify/identify.py does for verify-cabling
(GUIDs first, then every real form of node description, then position); a device identified by position
only (firmware-default or ``localhost`` description) must sit on its planned port like any other, and
once the site gave its GUID record, position alone is not enough: its GUID must be recorded for the name.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from generator.verify.model import others_named, problems_text


class IdentityError(ValueError):
    """Discovered devices claim plan names they may not be trusted with (message: one located line each)."""


@dataclass(frozen=True)
class PortClaim:
    """A discovered HCA port whose node description names a planned port ``host rdma/port``."""

    host: str
    rdma: str
    port: int
    node_guid: int
    port_guid: int
    peer: tuple[int, int] | None  # (switch node GUID, switch port) the dump shows it cabled to
    where: str  # file:line of its record
    how: str = "description"  # how it was identified: guid | description | position

    @property
    def name(self) -> str:
        return f"{self.host} {self.rdma}"


@dataclass
class Trust:
    """What identity may rest on: the plan's cabling and the switches identified in the dump."""

    planned_peer: dict[tuple[str, str, int], tuple[str, str]]  # (host, rdma, port) → (switch, its port)
    switch_names: dict[int, str]  # switch node GUID → plan switch name (each name once)
    recorded: dict[int, str] = field(default_factory=dict)  # site-recorded GUID → name (node-name map)

    def __post_init__(self) -> None:
        self.recorded_names = set(self.recorded.values())


def identity_problem(claim: PortClaim, trust: Trust) -> str | None:
    """Why ``claim`` may not be taken for the planned port it names; None when it may."""
    if trust.recorded:
        recorded = trust.recorded.get(claim.port_guid) or trust.recorded.get(claim.node_guid)
        if recorded is not None:
            return None if recorded == claim.name else f"the site recorded its GUID as {recorded!r}"
        if claim.name in trust.recorded_names:
            return f"the site recorded other GUIDs for {claim.name!r}"
        if claim.how == "position":
            return "its node description is not set and the site's record (--node-name-map) lacks its GUID"
    planned = trust.planned_peer.get((claim.host, claim.rdma, claim.port))
    if planned is None:
        return "the plan has no such port on this fabric"
    if claim.peer is None:
        return "the dump does not say which switch port it is cabled to"
    switch = trust.switch_names.get(claim.peer[0])
    if switch is None:
        return f"it hangs on switch 0x{claim.peer[0]:016x}, which is not identified as a plan switch"
    if (switch, str(claim.peer[1])) != planned:
        return f"it is on {switch} port {claim.peer[1]}; the plan cables it to {planned[0]} port {planned[1]}"
    return None


def trusted_claims(claims: list[PortClaim], trust: Trust) -> list[PortClaim]:
    """``claims`` when every one is trusted, else IdentityError naming each refused one at its line."""
    by_name: dict[tuple[str, str, int], list[PortClaim]] = {}
    for c in claims:
        by_name.setdefault((c.host, c.rdma, c.port), []).append(c)
    problems: list[str] = []
    for group in by_name.values():
        for c in group:
            if len(group) > 1:
                others = others_named(group, c, lambda o: o.where)
                reason: str | None = f"the same name is also claimed at {others}"
            else:
                reason = identity_problem(c, trust)
            if reason is not None:
                problems.append(
                    f"{c.where}: {c.name}/{c.port} (port GUID 0x{c.port_guid:016x}) is not trusted: {reason}"
                )
    if problems:
        raise IdentityError(
            problems_text(problems)
            + "\nno partition or GUID file was written: fix the cabling or the node descriptions, or give "
            "the GUIDs the site recorded with --node-name-map"
        )
    return claims
