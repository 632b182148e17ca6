"""NetBox 4.x through pynetbox.

Endpoints and fields follow NetBox's REST API (NetBox docs "REST API overview" and the /api/schema/ of
4.x): ``dcim/manufacturers``, ``dcim/device-roles``, ``dcim/device-types``, ``dcim/sites``,
``dcim/locations``, ``dcim/racks``, ``dcim/devices`` (``role`` since 3.6, its only name from 4.0),
``dcim/interfaces`` and ``dcim/cables`` with ``a_terminations``/``b_terminations`` lists of
``{object_type, object_id}`` (since 3.3). Statuses are choice values (``planned``, ``connected``). An
existing device type is matched by its slug, the key the devicetype-library's files and NetBox's own
importer use; manufacturers and roles by name or slug, whichever the site has.
"""

from __future__ import annotations

from typing import Any, ClassVar

from generator.sot.backends import IdMap, MissingClient, RestBackend, known, ref
from generator.sot.build import Desired, Key, Record
from generator.sot.changes import Found

INTERFACE = "dcim.interface"


class NetBoxBackend(RestBackend):
    product = "NetBox"
    endpoints: ClassVar[dict[str, tuple[str, str]]] = {
        "manufacturer": ("dcim", "manufacturers"),
        "role": ("dcim", "device_roles"),
        "device_type": ("dcim", "device_types"),
        "site": ("dcim", "sites"),
        "location": ("dcim", "locations"),
        "rack": ("dcim", "racks"),
        "device": ("dcim", "devices"),
        "interface": ("dcim", "interfaces"),
        "cable": ("dcim", "cables"),
    }

    @property
    def end_fields(self) -> dict[str, frozenset[str]]:
        return {"cable": frozenset({"a_terminations", "b_terminations"})}

    def prepare(self, desired: Desired, create: bool) -> None:
        return None

    def status(self, name: str) -> Any:
        return name.lower()

    def find(self, kind: str, records: list[Record], ids: IdMap) -> dict[Key, Found]:
        return _FINDERS[kind](self, records, ids)

    def payload(self, record: Record, ids: IdMap) -> dict[str, Any]:
        f = dict(record.fields)
        refs = {name: ref(ids, record, name) for name in record.refs}
        if record.kind == "cable":
            return {
                "a_terminations": [{"object_type": INTERFACE, "object_id": refs.pop("a")}],
                "b_terminations": [{"object_type": INTERFACE, "object_id": refs.pop("b")}],
                **f,
            }
        if record.kind == "device":
            racked = "rack" in refs
            f.update({"position": f["position"] if racked else None, "face": f["face"] if racked else ""})
            refs.setdefault("rack", None)
            refs.setdefault("location", None)
        return {**f, **refs}


def _by_name_or_slug(kind: str) -> Any:
    def find(b: NetBoxBackend, records: list[Record], ids: IdMap) -> dict[Key, Found]:
        names = [r.fields["name"] for r in records]
        slug_to_key = {r.fields["slug"]: r.key for r in records}
        rows = b.fetch(kind, name=names) + b.fetch(kind, slug=list(slug_to_key))
        by_name = b.found(rows, lambda row: (row["name"],) if row["name"] in names else None)
        by_slug = b.found(rows, lambda row: slug_to_key.get(row["slug"]))
        return {**by_slug, **by_name}

    return find


def _find_device_types(b: NetBoxBackend, records: list[Record], ids: IdMap) -> dict[Key, Found]:
    slug_to_key = {r.fields["slug"]: r.key for r in records}
    return b.found(b.fetch("device_type", slug=list(slug_to_key)), lambda row: slug_to_key.get(row["slug"]))


def _site_ids(records: list[Record], ids: IdMap) -> list[Any]:
    return known({ref(ids, r, "site") for r in records})


def _find_in_site(kind: str) -> Any:
    def find(b: NetBoxBackend, records: list[Record], ids: IdMap) -> dict[Key, Found]:
        sites = _site_ids(records, ids)
        if not sites:
            return {}
        rows = b.fetch(kind, site_id=sites[0], name=[r.key[-1] for r in records])
        # held to the site asked for: a server that ignored the filter had a device of another site (a
        # production box of the same name) rewritten and moved into the plan's
        return b.found(rows, lambda row: (row["name"],) if row.get("site") == sites[0] else None)

    return find


def _find_racks(b: NetBoxBackend, records: list[Record], ids: IdMap) -> dict[Key, Found]:
    """Racks by name among the plan's locations (or in none): a rack name is unique within its location only,
    so one of the same name in another location of the site (a lab's `r01-01`) is not the plan's, and was
    moved and rewritten; it is left alone, and the plan's is created beside it. Looked up while the plan's
    locations are still to create too (a dry run): the push adopts one in no location then, and the dry run
    said "create" for it."""
    sites = _site_ids(records, ids)
    places = set(known(ref(ids, r, "location") for r in records))
    if not sites:
        return {}
    rows = b.fetch("rack", site_id=sites[0], name=[r.key[-1] for r in records])
    # one at the site with no location yet (made by hand before the first push) is adopted and moved
    return b.found(rows, lambda row: (row["name"],) if row.get("location") in (*places, None) else None)


def _find_interfaces(b: NetBoxBackend, records: list[Record], ids: IdMap) -> dict[Key, Found]:
    devices = {ids[r.refs["device"]]: r.refs["device"][1][0] for r in records if r.refs["device"] in ids}
    rows = b.fetch("interface", device_id=list(devices)) if devices else []
    return b.found(
        rows, lambda row: (devices[row["device"]], row["name"]) if row["device"] in devices else None
    )


def _find_cables(b: NetBoxBackend, records: list[Record], ids: IdMap) -> dict[Key, Found]:
    """The cables on the plan's A-end interfaces (read back by id), keyed by label, ends as payloads."""
    # both ends: a cable whose A end the plan moves to another interface still holds its B end (looked up
    # on A only, it was never found, and creating it anew was refused as its B end was taken)
    ends = known(ids.get(r.refs[side]) for r in records for side in ("a", "b") if r.refs[side] in ids)
    if not ends:
        return {}
    # only the interfaces asked for: a cable on another one the server added (a filter it ignored) carried
    # a plan label and was deleted and made anew
    asked = set(ends)
    held = [row for row in b.fetch("interface", id=ends) if row.get("cable") and row["id"] in asked]
    cable_ids = {row["cable"] for row in held}
    rows = (
        [row for row in b.fetch("cable", id=sorted(cable_ids)) if row["id"] in cable_ids] if cable_ids else []
    )
    for row in rows:
        for side in ("a_terminations", "b_terminations"):
            row[side] = [
                {"object_type": t["object_type"], "object_id": t["object_id"]} for t in row.get(side) or []
            ]
    b.note_holders(held, rows)
    return b.found(rows, lambda row: (row["label"],) if row.get("label") else None)


_FINDERS = {
    "manufacturer": _by_name_or_slug("manufacturer"),
    "role": _by_name_or_slug("role"),
    "device_type": _find_device_types,
    "site": _by_name_or_slug("site"),
    "location": _find_in_site("location"),
    "rack": _find_racks,
    "device": _find_in_site("device"),
    "interface": _find_interfaces,
    "cable": _find_cables,
}


def connect(url: str, token: str, progress: Any = None, budget: int | None = None) -> NetBoxBackend:
    """The backend; ``budget``: the bytes the server's answers may come to in all (http.push_budget)."""
    try:
        import pynetbox  # type: ignore[import-untyped]
    except ImportError:
        raise MissingClient("pynetbox") from None

    from generator.sot.http import guarded

    api = pynetbox.api(url, token=token)
    api.http_session = guarded(
        api.http_session, url, budget
    )  # the token to --url only; bounded waits and bodies
    return NetBoxBackend(api, pynetbox.RequestError, pynetbox.ContentError, progress)
