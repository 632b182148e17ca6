"""Nautobot 2.x/3.x through pynautobot.

The site and its rack rows are Locations: of type ``Site`` (top level) and ``Row`` (under a Site), each
allowed to hold racks and devices (Nautobot docs "Location Types": ``content_types`` says which objects
a location of the type may hold; a rack's devices sit in the rack's location). Statuses are the
built-in ``Planned`` and ``Connected`` Status objects (Nautobot docs "Statuses": populated by migrate
for every model that has a status). Devices and racks have no description field: it goes to comments.
"""

from __future__ import annotations

from typing import Any, ClassVar

from generator.sot.backends import IdMap, MissingClient, RestBackend, SotError, known, ref, whole_length
from generator.sot.build import Desired, Key, Record
from generator.sot.changes import Found, Pending

SITE_TYPE = "Site"
ROW_TYPE = "Row"
HOLDS = ["dcim.device", "dcim.rack"]


class NautobotBackend(RestBackend):
    product = "Nautobot"
    endpoints: ClassVar[dict[str, tuple[str, str]]] = {
        "manufacturer": ("dcim", "manufacturers"),
        "role": ("extras", "roles"),
        "device_type": ("dcim", "device_types"),
        "site": ("dcim", "locations"),
        "location": ("dcim", "locations"),
        "rack": ("dcim", "racks"),
        "device": ("dcim", "devices"),
        "interface": ("dcim", "interfaces"),
        "cable": ("dcim", "cables"),
        "location_type": ("dcim", "location_types"),
        "status": ("extras", "statuses"),
    }

    @property
    def end_fields(self) -> dict[str, frozenset[str]]:
        return {"cable": frozenset({"termination_a_id", "termination_b_id"})}

    def prepare(self, desired: Desired, create: bool) -> None:
        """The statuses by name and the Site/Row location types (created when missing, unless a dry run)."""
        self.statuses = {row["name"].lower(): row["id"] for row in self.fetch("status")}
        for name in ("planned", "connected"):
            if name not in self.statuses:
                raise SotError(f"Nautobot has no status {name.title()} (extras/statuses)")
        self.site_type = self._location_type(SITE_TYPE, None, create)
        self.row_type = self._location_type(ROW_TYPE, self.site_type, create)

    def _location_type(self, name: str, parent: Any, create: bool) -> Any:
        rows = self.fetch("location_type", name=name)
        if rows:
            return rows[0]["id"]
        if not create:
            return Pending("location_type", (name,))
        payload = {"name": name, "parent": parent, "content_types": HOLDS, "nestable": False}
        return self.create("location_type", [payload])[0]

    def status(self, name: str) -> Any:
        return self.statuses[name.lower()]

    def find(self, kind: str, records: list[Record], ids: IdMap) -> dict[Key, Found]:
        return _FINDERS[kind](self, records, ids)

    def payload(self, record: Record, ids: IdMap) -> dict[str, Any]:
        f = dict(record.fields)
        if "status" in f:
            f["status"] = self.status(f["status"])
        return _PAYLOADS[record.kind](self, record, f, ids)


def _names(records: list[Record]) -> list[str]:
    return [r.key[-1] for r in records]


def _find_named(kind: str) -> Any:
    def find(b: NautobotBackend, records: list[Record], ids: IdMap) -> dict[Key, Found]:
        return b.found(b.fetch(kind, name=_names(records)), lambda row: (row["name"],))

    return find


def _find_device_types(b: NautobotBackend, records: list[Record], ids: IdMap) -> dict[Key, Found]:
    # Nautobot has no slug: a device type is its manufacturer's model (unique together)
    by_id = {ids.get(("manufacturer", (m,))): m for m in {r.key[0] for r in records}}
    rows = b.fetch("device_type", model=[r.key[1] for r in records])
    return b.found(
        rows, lambda row: (by_id[row["manufacturer"]], row["model"]) if row["manufacturer"] in by_id else None
    )


def _find_sites(b: NautobotBackend, records: list[Record], ids: IdMap) -> dict[Key, Found]:
    rows = b.fetch("site", name=_names(records))
    return b.found(rows, lambda row: (row["name"],) if row["location_type"] == b.site_type else None)


def _find_rows(b: NautobotBackend, records: list[Record], ids: IdMap) -> dict[Key, Found]:
    parents = known({ref(ids, r, "site") for r in records})
    if not parents:
        return {}
    rows = b.fetch("location", parent=parents[0], name=_names(records))
    return b.found(rows, lambda row: (row["name"],) if row.get("parent") == parents[0] else None)


def _find_racks(b: NautobotBackend, records: list[Record], ids: IdMap) -> dict[Key, Found]:
    # racks are looked up by name among the plan's rows; one elsewhere at the site is not the plan's
    rows_of_site = set(known(ref(ids, r, "location") for r in records))
    found = b.fetch("rack", name=_names(records)) if rows_of_site else []
    return b.found(found, lambda row: (row["name"],) if row["location"] in rows_of_site else None)


def _find_devices(b: NautobotBackend, records: list[Record], ids: IdMap) -> dict[Key, Found]:
    """Devices by name at the plan's site and rows: a name is unique within a location only (Nautobot 2's
    (location, tenant, name)), so another site's `gpu001` is not the plan's, and was moved and rewritten."""
    places = set(known(ref(ids, r, side) for r in records for side in ("site", "location") if side in r.refs))
    rows = b.fetch("device", name=_names(records)) if places else []
    mine = [row for row in rows if row.get("location") in places]
    return b.found(_with_description(mine), lambda row: (row["name"],))


def _find_interfaces(b: NautobotBackend, records: list[Record], ids: IdMap) -> dict[Key, Found]:
    devices = {ids[r.refs["device"]]: r.refs["device"][1][0] for r in records if r.refs["device"] in ids}
    rows = b.fetch("interface", device=list(devices)) if devices else []
    return b.found(
        rows, lambda row: (devices[row["device"]], row["name"]) if row["device"] in devices else None
    )


def _find_cables(b: NautobotBackend, records: list[Record], ids: IdMap) -> dict[Key, Found]:
    """The cables on the plan's interfaces (read back by id), keyed by their label."""
    # both ends: a cable whose A end the plan moves to another interface still holds its B end (looked up
    # on A only, it was never found, and creating it anew was refused as its B end was taken)
    ends = known(ids.get(r.refs[side]) for r in records for side in ("a", "b") if r.refs[side] in ids)
    if not ends:
        return {}
    # only the interfaces and cables asked for: one the server added (a filter it ignored) carrying a plan
    # label was deleted and made anew
    asked = set(ends)
    held = [row for row in b.fetch("interface", id=ends) if row.get("cable") and row["id"] in asked]
    cable_ids = {row["cable"] for row in held}
    rows = b.fetch("cable", id=sorted(map(str, cable_ids))) if cable_ids else []
    rows = [row for row in rows if row["id"] in cable_ids]
    b.note_holders(held, rows)
    return b.found(rows, lambda row: (row["label"],) if row.get("label") else None)


def _with_description(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for row in rows:
        row["comments"] = row.get("comments", "")
    return rows


_FINDERS = {
    "manufacturer": _find_named("manufacturer"),
    "role": _find_named("role"),
    "device_type": _find_device_types,
    "site": _find_sites,
    "location": _find_rows,
    "rack": _find_racks,
    "device": _find_devices,
    "interface": _find_interfaces,
    "cable": _find_cables,
}


def _manufacturer(b: NautobotBackend, r: Record, f: dict[str, Any], ids: IdMap) -> dict[str, Any]:
    return {"name": f["name"]}


def _role(b: NautobotBackend, r: Record, f: dict[str, Any], ids: IdMap) -> dict[str, Any]:
    return {
        "name": f["name"],
        "color": f["color"],
        "description": f["description"],
        "content_types": ["dcim.device"],
    }


def _device_type(b: NautobotBackend, r: Record, f: dict[str, Any], ids: IdMap) -> dict[str, Any]:
    return {
        "manufacturer": ref(ids, r, "manufacturer"),
        "model": f["model"],
        "u_height": f["u_height"],
        "is_full_depth": f["is_full_depth"],
        "comments": f["description"],
    }


def _site(b: NautobotBackend, r: Record, f: dict[str, Any], ids: IdMap) -> dict[str, Any]:
    return {
        "name": f["name"],
        "location_type": b.site_type,
        "status": f["status"],
        "description": f["description"],
    }


def _row(b: NautobotBackend, r: Record, f: dict[str, Any], ids: IdMap) -> dict[str, Any]:
    return {
        "name": f["name"],
        "location_type": b.row_type,
        "parent": ref(ids, r, "site"),
        "status": f["status"],
        "description": f["description"],
    }


def _rack(b: NautobotBackend, r: Record, f: dict[str, Any], ids: IdMap) -> dict[str, Any]:
    keep = ("name", "facility_id", "status", "width", "u_height", "outer_width", "outer_depth", "outer_unit")
    return {**{k: f[k] for k in keep}, "location": ref(ids, r, "location"), "comments": f["description"]}


def _device(b: NautobotBackend, r: Record, f: dict[str, Any], ids: IdMap) -> dict[str, Any]:
    racked = "rack" in r.refs
    return {
        "name": f["name"],
        "role": ref(ids, r, "role"),
        "device_type": ref(ids, r, "device_type"),
        "location": ref(ids, r, "location" if racked else "site"),
        "rack": ref(ids, r, "rack") if racked else None,
        "position": f["position"] if racked else None,
        "face": f["face"] if racked else "",
        "status": f["status"],
        "comments": f["description"],
    }


def _interface(b: NautobotBackend, r: Record, f: dict[str, Any], ids: IdMap) -> dict[str, Any]:
    keep = ("name", "label", "type", "enabled", "mgmt_only", "description")
    return {**{k: f[k] for k in keep}, "device": ref(ids, r, "device"), "status": b.status("planned")}


def _cable(b: NautobotBackend, r: Record, f: dict[str, Any], ids: IdMap) -> dict[str, Any]:
    length, unit = whole_length(f["length"], f["length_unit"])
    return {
        "termination_a_type": "dcim.interface",
        "termination_a_id": ref(ids, r, "a"),
        "termination_b_type": "dcim.interface",
        "termination_b_id": ref(ids, r, "b"),
        "type": f["type"],
        "status": f["status"],
        "label": f["label"],
        "length": length,
        "length_unit": unit,
    }


_PAYLOADS = {
    "manufacturer": _manufacturer,
    "role": _role,
    "device_type": _device_type,
    "site": _site,
    "location": _row,
    "rack": _rack,
    "device": _device,
    "interface": _interface,
    "cable": _cable,
}


def connect(url: str, token: str, progress: Any = None, budget: int | None = None) -> NautobotBackend:
    """The backend; ``budget``: the bytes the server's answers may come to in all (http.push_budget)."""
    try:
        import pynautobot  # type: ignore[import-untyped]
    except ImportError:
        raise MissingClient("pynautobot") from None

    from generator.sot.http import guarded

    api = pynautobot.api(url, token=token)
    api.http_session = guarded(
        api.http_session, url, budget
    )  # the token to --url only; bounded waits and bodies
    return NautobotBackend(api, pynautobot.RequestError, pynautobot.ContentError, progress)
