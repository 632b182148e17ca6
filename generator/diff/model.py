"""What changes between two physical plans, in the terms a data-centre team works in."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from generator.plan.model import Device, Link, Plan


@dataclass(frozen=True)
class Relocation:
    """A device that stays in the design but sits somewhere else (it must be unplugged and moved)."""

    name: str
    old_rack: str | None
    old_u: int | None
    new_rack: str | None
    new_u: int | None


@dataclass(frozen=True)
class Replacement:
    """Same name, different hardware (e.g. a QM8700 leaf becomes a QM9700 for HDR → NDR)."""

    name: str
    old_model: str
    new_model: str


# NamedTuples, as the plan's Link: a growth of 100k GPUs moves 65,000 cables, and a frozen dataclass costs
# a Python call and a setattr per field for each (benchmarks/day2.py diff).
class CableMove(NamedTuple):
    """Same cable id, a different port at one or both ends."""

    old: Link
    new: Link
    ends: tuple[str, ...]  # "a", "b"

    @property
    def id(self) -> str:
        return self.new.id


class CableChange(NamedTuple):
    """Same cable id, but the cable itself changes (speed, medium, orderable length): re-pulled, on the same
    ports or, at ``ends``, on others (a cable that moves to a port of another speed or a longer run is a new
    cable there, not the old one moved)."""

    old: Link
    new: Link
    fields: tuple[str, ...]
    ends: tuple[str, ...] = ()  # "a", "b": the ends that also land on another port

    @property
    def id(self) -> str:
        return self.new.id


class Relabel(NamedTuple):
    """One step of relabelling a renamed device (generator/diff/renames.py ``relabel_order``)."""

    old: str  # the device's name in the old plan
    new: str  # and in the new one
    before: str  # the label on it when the step begins: ``old``, or a temporary label
    after: str  # the label it gets: ``new``, or a temporary one (a cycle of renames is opened with one)

    @property
    def temporary(self) -> bool:
        return self.after != self.new


@dataclass(frozen=True)
class PortSpeed:
    device: str
    port: str
    old_gbps: float
    new_gbps: float


@dataclass(frozen=True)
class PlanDiff:
    old: Plan = field(repr=False, compare=False)
    new: Plan = field(repr=False, compare=False)
    fabrics: tuple[str, ...] | None  # None = every fabric
    devices_added: tuple[Device, ...]
    devices_removed: tuple[Device, ...]
    devices_replaced: tuple[Replacement, ...]
    devices_relocated: tuple[Relocation, ...]
    cables_added: tuple[Link, ...]
    cables_removed: tuple[Link, ...]
    cables_moved: tuple[CableMove, ...]
    cables_changed: tuple[CableChange, ...]
    port_speeds: tuple[PortSpeed, ...]
    racks_added: tuple[str, ...]
    racks_removed: tuple[str, ...]
    racks_affected: tuple[str, ...]
    links_down: tuple[str, ...]  # old cable ids whose link goes down during the change
    devices_down: tuple[str, ...]  # devices that are powered off / unplugged (removed, replaced, relocated)
    disruptions: tuple[str, ...]  # why the change is not live, in words
    conflicts: tuple[str, ...] = ()  # inconsistencies between the plans (a new cable on a port still in use)
    racks_renamed: tuple[tuple[str, str], ...] = ()  # (old id, new id) of a rack in the same row and position
    site_renamed: tuple[str, str] | None = None  # (old, new) site name: the first part of every cable label
    # (old, new) name of a device at the same place with the same cables (generator/diff/renames.py): not in
    # devices_added/removed, its cables not moved; the device and every cable label naming it change
    devices_renamed: tuple[tuple[str, str], ...] = ()
    # the same renames as steps in a safe order: a name reused by another renamed device is given once its
    # holder is relabelled, and a cycle (two switches swapping names) goes through a temporary label
    device_relabels: tuple[Relabel, ...] = ()

    @property
    def identical(self) -> bool:
        return not (
            self.devices_added
            or self.devices_removed
            or self.devices_replaced
            or self.devices_relocated
            or self.cables_added
            or self.cables_removed
            or self.cables_moved
            or self.cables_changed
            or self.port_speeds
            or self.racks_added
            or self.racks_removed
            or self.racks_renamed  # nothing moves, but every cable label naming the rack changes
            or self.site_renamed  # nothing moves, but every cable label changes
            or self.devices_renamed  # nothing moves, but the device's label and its cables' change
        )

    @property
    def relabelled(self) -> bool:
        """Labels change where nothing moves: a rack, a device or the site renamed."""
        return bool(self.racks_renamed or self.site_renamed or self.devices_renamed)

    @property
    def live(self) -> bool:
        """True when the change only adds: no running link goes down and no device is unplugged."""
        return not self.links_down and not self.devices_down and not self.conflicts
