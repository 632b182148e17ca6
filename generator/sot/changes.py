"""The change set between what a build says and what a site holds, one kind at a time.

Objects a site commonly has already (manufacturers, roles, device types, the site and its rows) are
adopted as they are: the site owns them, and a library device type or a role's colour is not ours to
change. Racks, devices, interfaces and cables are the plan's: fields that differ are updated. A status is
set when an object is created and never reset by a later push (a cable marked connected stays so).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from generator.safetext import inline
from generator.sot.build import Key, Record

ADOPTED = frozenset({"manufacturer", "role", "device_type", "site", "location"})
# Fields written on create only: status moves on at the site (planned -> active/connected); slugs and
# content types identify an adopted object and are the site's.
CREATE_ONLY = frozenset({"status", "slug", "content_types", "location_type"})


@dataclass(frozen=True)
class Pending:
    """The id of an object this change set creates (unknown until it is created: a dry run)."""

    kind: str
    key: Key

    def __str__(self) -> str:
        return f"<new {self.kind} {'/'.join(self.key)}>"


@dataclass(frozen=True)
class Found:
    """An object the site holds: its id and its fields in the shape of a create payload."""

    id: Any
    current: dict[str, Any]


@dataclass
class Update:
    record: Record
    id: Any
    changed: dict[str, tuple[Any, Any]]  # field -> (now, planned)
    planned: dict[str, Any] = field(default_factory=dict)  # the whole create payload

    def payload(self) -> dict[str, Any]:
        return {"id": self.id, **{name: new for name, (_, new) in self.changed.items()}}


@dataclass
class KindChanges:
    kind: str
    creates: list[tuple[Record, dict[str, Any]]] = field(default_factory=list)
    updates: list[Update] = field(default_factory=list)
    unchanged: int = 0

    @property
    def empty(self) -> bool:
        return not self.creates and not self.updates


def same(now: Any, planned: Any) -> bool:
    """Equal as the API means it: None and "" alike, 48.0 and 48 alike, ids compared as text."""
    if now in (None, "") and planned in (None, ""):
        return True
    if _number(now) is not None and _number(planned) is not None:
        return _number(now) == _number(planned)
    if isinstance(now, list) and isinstance(planned, list):
        return len(now) == len(planned) and all(same(a, b) for a, b in zip(now, planned, strict=True))
    if isinstance(now, dict) and isinstance(planned, dict):
        return now.keys() == planned.keys() and all(same(now[k], planned[k]) for k in now)
    return str(now) == str(planned) if now is not None and planned is not None else now == planned


def _number(value: Any) -> float | None:
    """A number, or a decimal a server sent as text ("1.0"); None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(value) if isinstance(value, str) and value.strip() else None
    except ValueError:
        return None


def diff_kind(
    kind: str, planned: list[tuple[Record, dict[str, Any]]], found: dict[Key, Found]
) -> KindChanges:
    """Creates for records the site lacks, updates for the plan's fields that differ, counts of the rest."""
    changes = KindChanges(kind)
    for record, payload in planned:
        there = found.get(record.key)
        if there is None:
            changes.creates.append((record, payload))
            continue
        changed = {} if kind in ADOPTED else _changed(payload, there.current)
        if changed:
            changes.updates.append(Update(record, there.id, changed, payload))
        else:
            changes.unchanged += 1
    return changes


def _changed(payload: dict[str, Any], current: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    return {
        name: (current.get(name), value)
        for name, value in payload.items()
        if name not in CREATE_ONLY and not same(current.get(name), value)
    }


def describe(changes: list[KindChanges], limit: int = 20) -> list[str]:
    """The change set as text lines: per kind the counts, then up to ``limit`` of each change."""
    lines = []
    for c in changes:
        lines.append(
            f"{c.kind}: {len(c.creates)} to create, {len(c.updates)} to update, {c.unchanged} unchanged"
        )
        for record, _ in c.creates[:limit]:
            lines.append(f"  + {inline('/'.join(record.key))}")
        if len(c.creates) > limit:
            lines.append(f"  + ... {len(c.creates) - limit} more")
        for u in c.updates[:limit]:
            said = ", ".join(f"{k}: {_show(old)} -> {_show(new)}" for k, (old, new) in u.changed.items())
            lines.append(f"  ~ {inline('/'.join(u.record.key))}: {said}")
        if len(c.updates) > limit:
            lines.append(f"  ~ ... {len(c.updates) - limit} more")
    return lines


def _show(value: Any) -> str:
    """A value as the report shows it: what the server holds is foreign text, kept on its line (a description
    holding `\n  + evil` printed a change line of its own, and its escape sequences reached the terminal)."""
    return '""' if value in (None, "") else inline(str(value))
