"""Apply a build to a source of truth, kind by kind in import order, each kind's writes in batches.

Each kind is read back first (what the site has), then its change set is computed and applied, so the
ids the next kind refers to are known. A dry run reads only: what it would create is shown with a
placeholder id, and everything that refers to it counts as new or changed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from generator.safetext import inline
from generator.sot.backends import UNREADABLE, Backend, IdMap, SotError
from generator.sot.build import KINDS, Desired, chunks
from generator.sot.changes import Found, KindChanges, Update, diff_kind

# Objects per POST/PATCH: one request is one database transaction at the server, so a batch must finish
# well inside NetBox's documented 120 s gunicorn timeout even for cables (~1 s of server CPU a cable
# row was measured through the bulk import on NetBox 4.4; the REST API is faster per object).
DEFAULT_BATCH = 50
T = TypeVar("T")


@dataclass
class PushResult:
    changes: list[KindChanges] = field(default_factory=list)
    connected: int = 0
    ids: IdMap = field(default_factory=dict)

    @property
    def written(self) -> int:
        return sum(len(c.creates) + len(c.updates) for c in self.changes) + self.connected


def push(
    backend: Backend,
    desired: Desired,
    *,
    apply: bool,
    batch: int = DEFAULT_BATCH,
    progress: Callable[[str], None] = lambda text: None,
) -> PushResult:
    """Read, compare and (unless ``apply`` is false) write every kind of the build."""
    read(backend, "the statuses, types and roles", lambda: backend.prepare(desired, create=apply))
    result = PushResult()
    for kind in KINDS:
        records = desired.records[kind]
        found = read(backend, f"the {kind} objects", partial(backend.find, kind, records, result.ids))
        result.ids.update({(kind, key): f.id for key, f in found.items()})
        planned = [(r, backend.payload(r, result.ids)) for r in records]
        changes = diff_kind(kind, planned, found)
        result.changes.append(changes)
        _ends_free(backend, changes, result.ids)
        if apply:
            _apply(backend, changes, result.ids, batch, progress)
    return result


def read(backend: Backend, what: str, call: Callable[[], T]) -> T:
    """``call``'s result; SotError when the server's objects lack the fields or types the API gives them
    (a row without `name`, a `manufacturer` that is a list): internal errors (exit 3) before."""
    try:
        return call()
    except UNREADABLE as exc:
        raise SotError(
            f"{backend.product} answered {what} with objects its API does not give ({type(exc).__name__}): "
            "check --url (the API's own address) and --kind"
        ) from None


def _ends_free(backend: Backend, changes: KindChanges, ids: IdMap) -> None:
    """SotError, before anything of the kind is written, when a cable to create (a new one, or a rewired one
    re-created) ends on an interface a cable the push does not delete holds: the server refuses that create,
    and a rewired cable deleted before it was lost (the site's record of a patched link gone). A dry run is
    refused the same, so it shows what the push would stop at."""
    ends = backend.end_fields.get(changes.kind, frozenset())
    if not ends:
        return
    rewired = [u for u in changes.updates if ends & set(u.changed)]
    freed = {u.id for u in rewired}
    for record in [u.record for u in rewired] + [r for r, _ in changes.creates]:
        for side in ("a", "b"):
            target = record.refs[side]
            holder = backend.holders.get(ids.get(target))
            if holder is None or holder[0] in freed:
                continue
            held_by = (
                f"cable {inline(holder[1][:80])} (id {holder[0]})" if holder[1] else f"cable id {holder[0]}"
            )
            raise SotError(
                f"{changes.kind} {inline('/'.join(record.key))}: its {side.upper()} end "
                f"{inline(':'.join(target[1]))} is held by {backend.product} {held_by}, which the build does "
                "not have: no cable deleted or created; remove or re-patch that cable at the site first"
            )


def _apply(
    backend: Backend, changes: KindChanges, ids: IdMap, batch: int, progress: Callable[[str], None]
) -> None:
    """Updates first: a grown plan moves devices out of the rack units its new devices take. A cable
    whose ends change is deleted and created anew (Nautobot refuses to change a cable's terminations;
    in NetBox a moved end may land on an interface another moved cable still holds)."""
    ends = backend.end_fields.get(changes.kind, frozenset())
    rewired = [u for u in changes.updates if ends & set(u.changed)]
    _updates(backend, changes.kind, [u for u in changes.updates if u not in rewired], batch, progress)
    for part in chunks(rewired, batch):
        backend.delete(changes.kind, [u.id for u in part])
        progress(f"{changes.kind}: removed {len(part)} to re-create with new ends")
    creates = [(u.record, u.planned) for u in rewired] + changes.creates
    kind, total = changes.kind, len(creates)
    done = 0
    for part in chunks(creates, batch):
        made = backend.create(kind, [payload for _, payload in part])
        ids.update({(kind, record.key): new_id for (record, _), new_id in zip(part, made, strict=True)})
        done += len(part)
        progress(f"{kind}: created {done}/{total}")


def _updates(
    backend: Backend, kind: str, updates: list[Update], batch: int, progress: Callable[[str], None]
) -> None:
    done = 0
    for part in chunks(updates, batch):
        backend.update(kind, [u.payload() for u in part])
        done += len(part)
        progress(f"{kind}: updated {done}/{len(updates)}")


def mark_connected(
    backend: Backend,
    desired: Desired,
    result: PushResult,
    *,
    apply: bool,
    batch: int = DEFAULT_BATCH,
    progress: Callable[[str], None] = lambda text: None,
) -> int:
    """Set every planned cable of the build that is not yet ``connected`` to connected; the count."""
    connected = read(backend, "the statuses", partial(backend.status, "connected"))
    found: dict[Any, Found] = read(
        backend, "the cable objects", partial(backend.find, "cable", desired.records["cable"], result.ids)
    )
    todo = [f.id for f in found.values() if str(f.current.get("status")) != str(connected)]
    if apply:
        done = 0
        for part in chunks(todo, batch):
            backend.update("cable", [{"id": i, "status": connected} for i in part])
            done += len(part)
            progress(f"cable: connected {done}/{len(todo)}")
    result.connected = len(todo)
    return len(todo)
