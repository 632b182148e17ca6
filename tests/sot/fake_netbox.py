"""A stand-in NetBox 4 REST API for the `sot push` tests: the few endpoints the NetBox backend uses.

No NetBox runs on this machine (it needs its own PostgreSQL/Redis stack and source checkout), so this
implements the documented behaviour the client relies on, and records every request:
- list endpoints paginate ``{"count", "next", "previous", "results"}`` and filter on repeated query
  parameters (``?name=a&name=b``), ``site_id``, ``device_id`` and ``id``;
- a POST of a JSON list creates every object (201, the list back, ids assigned); a PATCH of a list of
  ``{"id": ...}`` objects updates each ("REST API overview": creating / updating multiple objects);
- related objects come back nested ``{"id", "url", "display"}``, choice fields as ``{"value", "label"}``,
  cables with ``a_terminations``/``b_terminations`` of ``{"object_type", "object_id", "object"}``, and an
  interface shows the cable on it.
Unknown fields, a missing required reference or a duplicate name are refused with 400, as NetBox does.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

# endpoint -> (fields it accepts, reference fields -> endpoint, choice fields, unique-name scope)
ENDPOINTS: dict[str, tuple[set[str], dict[str, str], set[str]]] = {
    "manufacturers": ({"name", "slug", "description"}, {}, set()),
    "device-roles": ({"name", "slug", "color", "description"}, {}, set()),
    "device-types": (
        {"manufacturer", "model", "slug", "u_height", "is_full_depth", "description"},
        {"manufacturer": "manufacturers"},
        set(),
    ),
    "sites": ({"name", "slug", "status", "description"}, {}, {"status"}),
    "locations": ({"site", "name", "slug", "status", "description"}, {"site": "sites"}, {"status"}),
    "racks": (
        {"site", "location", "name", "facility_id", "status", "width", "u_height", "outer_width",
         "outer_depth", "outer_unit", "description"},
        {"site": "sites", "location": "locations"},
        {"status", "width", "outer_unit"},
    ),
    "devices": (
        {"name", "role", "device_type", "site", "location", "rack", "position", "face", "status", "description"},
        {"role": "device-roles", "device_type": "device-types", "site": "sites", "location": "locations",
         "rack": "racks"},
        {"status", "face"},
    ),
    "interfaces": (
        {"device", "name", "label", "type", "speed", "enabled", "mgmt_only", "description"},
        {"device": "devices"},
        {"type"},
    ),
    "cables": (
        {"a_terminations", "b_terminations", "type", "status", "label", "length", "length_unit"},
        {},
        {"status", "type", "length_unit"},
    ),
}
REQUIRED = {
    "device-types": ("manufacturer", "model", "slug"),
    "cables": ("a_terminations", "b_terminations"),
    "devices": ("name", "role", "device_type", "site"),
    "interfaces": ("device", "name", "type"),
    "racks": ("site", "name"),
}
# the unique-together fields NetBox enforces on the endpoints the tests create
UNIQUE = {
    "interfaces": ("device", "name"),
    "manufacturers": ("name",),
    "device-roles": ("name",),
    "sites": ("name",),
    "device-types": ("slug",),
    "devices": ("site", "name"),
}
# NetBox returns decimals (rack unit position, cable length) as numbers with a fraction
DECIMALS = {"position", "length"}


class FakeNetBox:
    def __init__(self) -> None:
        self.db: dict[str, dict[int, dict[str, Any]]] = {name: {} for name in ENDPOINTS}
        self.index: dict[str, dict[tuple, int]] = {name: {} for name in UNIQUE}
        self.requests: list[tuple[str, str, Any]] = []
        self.next_id = 1
        self.version: str | None = "4.4.10"  # /api/status/'s netbox-version (None: the endpoint refuses)
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def writes(self) -> list[tuple[str, str, Any]]:
        return [r for r in self.requests if r[0] in ("POST", "PATCH", "PUT", "DELETE")]

    # --- objects ------------------------------------------------------------------------------

    def add(self, endpoint: str, obj: dict[str, Any]) -> dict[str, Any]:
        error = self._check(endpoint, obj, None)
        if error:
            raise ValueError(error)
        return self._store(endpoint, obj, None)

    def _check(self, endpoint: str, obj: dict[str, Any], oid: int | None) -> str | None:
        fields, refs, _ = ENDPOINTS[endpoint]
        unknown = set(obj) - fields - {"id"}
        if unknown:
            return f"unknown fields {sorted(unknown)}"
        if oid is None:
            missing = [f for f in REQUIRED.get(endpoint, ("name",)) if not obj.get(f)]
            if missing:
                return f"{missing}: This field is required."
        for side in ("a_terminations", "b_terminations"):
            for t in obj.get(side) or []:
                held = self.db["interfaces"].get(t["object_id"], {}).get("cable")
                if held is not None and held != oid:
                    return f"{side}: interface {t['object_id']} already has cable {held}"
        for name, target in refs.items():
            if obj.get(name) is not None and obj[name] not in self.db[target]:
                return f"{name}: object {obj[name]} does not exist"
        return self._unique(endpoint, obj, oid)

    def _unique(self, endpoint: str, obj: dict[str, Any], oid: int | None) -> str | None:
        key = UNIQUE.get(endpoint)
        if key is None:
            return None
        current = self.db[endpoint].get(oid, {}) if oid is not None else {}
        value = tuple(obj.get(k, current.get(k)) for k in key)
        holder = self.index[endpoint].get(value)
        if holder is not None and holder != oid:
            return f"{endpoint} with this {'/'.join(key)} already exists"
        return None

    def _store(self, endpoint: str, obj: dict[str, Any], oid: int | None) -> dict[str, Any]:
        if oid is None:
            oid, self.next_id = self.next_id, self.next_id + 1
            self.db[endpoint][oid] = {"id": oid}
        stored = self.db[endpoint][oid]
        key = UNIQUE.get(endpoint)
        if key is not None:
            self.index[endpoint].pop(tuple(stored.get(k) for k in key), None)
        for k, v in obj.items():
            if k != "id":
                stored[k] = float(v) if k in DECIMALS and v is not None else v
        if key is not None:
            self.index[endpoint][tuple(stored.get(k) for k in key)] = oid
        if endpoint == "cables":
            for side in ("a_terminations", "b_terminations"):
                for t in stored.get(side, []):
                    self.db["interfaces"][t["object_id"]]["cable"] = oid
        return stored

    def remove(self, endpoint: str, oid: int) -> None:
        """Delete an object; a deleted cable frees its interfaces (NetBox clears ``interface.cable``)."""
        gone = self.db[endpoint].pop(oid)
        key = UNIQUE.get(endpoint)
        if key is not None:
            self.index[endpoint].pop(tuple(gone.get(k) for k in key), None)
        if endpoint == "cables":
            for side in ("a_terminations", "b_terminations"):
                for t in gone.get(side, []):
                    self.db["interfaces"][t["object_id"]]["cable"] = None

    def render(self, endpoint: str, obj: dict[str, Any]) -> dict[str, Any]:
        _, refs, choices = ENDPOINTS[endpoint]
        out: dict[str, Any] = {"id": obj["id"], "url": f"{self.url}/api/dcim/{endpoint}/{obj['id']}/"}
        for k, v in obj.items():
            if k in refs and v is not None:
                out[k] = self._nested(refs[k], v)
            elif k in choices and v not in (None, ""):
                out[k] = {"value": v, "label": str(v).title()}
            elif k in ("a_terminations", "b_terminations"):
                out[k] = [
                    {**t, "object": self._nested("interfaces", t["object_id"])} for t in v
                ]
            elif k == "cable":
                out[k] = None if v is None else self._nested("cables", v)
            elif k != "id":
                out[k] = v
        return out

    def _nested(self, endpoint: str, oid: int) -> dict[str, Any]:
        target = self.db[endpoint][oid]
        return {"id": oid, "url": f"{self.url}/api/dcim/{endpoint}/{oid}/", "display": str(target.get("name", oid))}

    def select(self, endpoint: str, query: dict[str, list[str]]) -> list[dict[str, Any]]:
        rows = list(self.db[endpoint].values())
        for key, values in query.items():
            if key in ("limit", "offset", "brief", "exclude"):
                continue
            field = key.removesuffix("_id") if key.endswith("_id") else key
            wanted = set(values)
            rows = [r for r in rows if str(r.get(field) if field != "id" else r["id"]) in wanted]
        return rows


def _handler(fake: FakeNetBox) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as requests' session expects

        def log_message(self, format: str, *args: Any) -> None:
            return None

        def _send(self, code: int, body: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("API-Version", "4.4")
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _route(self) -> tuple[str | None, dict[str, list[str]]]:
            parts = urlsplit(self.path)
            path = parts.path.strip("/").split("/")
            endpoint = path[2] if len(path) >= 3 and path[:2] == ["api", "dcim"] else None
            return endpoint, parse_qs(parts.query)

        def _authorised(self) -> bool:
            if self.headers.get("Authorization", "") != "Token fake-token":
                self._send(403, {"detail": "Invalid token"})
                return False
            return True

        def do_GET(self) -> None:
            endpoint, query = self._route()
            with fake.lock:
                fake.requests.append(("GET", self.path, None))
            if not self._authorised():
                return
            if self.path.rstrip("/") in ("/api/status", "/api"):
                if fake.version is None:  # a proxy keeping the status endpoint from the token's user
                    self._send(403, {"detail": "You do not have permission to perform this action."})
                else:
                    self._send(200, {"netbox-version": fake.version, "django-version": "5.2"})
                return
            if endpoint not in ENDPOINTS:
                self._send(404, {"detail": "Not found."})
                return
            with fake.lock:
                rows = fake.select(endpoint, query)
                limit = int(query.get("limit", ["50"])[0]) or 1000
                offset = int(query.get("offset", ["0"])[0])
                page = [fake.render(endpoint, r) for r in rows[offset : offset + limit]]
            nxt = None
            if offset + limit < len(rows):
                q = "&".join(f"{k}={v}" for k, vs in query.items() if k not in ("offset", "limit") for v in vs)
                nxt = f"{fake.url}/api/dcim/{endpoint}/?{q}&limit={limit}&offset={offset + limit}"
            self._send(200, {"count": len(rows), "next": nxt, "previous": None, "results": page})

        def _body(self) -> Any:
            return json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"null")

        def do_POST(self) -> None:
            self._write("POST")

        def do_PATCH(self) -> None:
            self._write("PATCH")

        def do_DELETE(self) -> None:
            endpoint, _ = self._route()
            body = self._body()
            with fake.lock:
                fake.requests.append(("DELETE", self.path, body))
            if not self._authorised():
                return
            ids = [o["id"] for o in body] if isinstance(body, list) else []
            with fake.lock:
                if endpoint not in ENDPOINTS or any(i not in fake.db[endpoint] for i in ids):
                    self._send(404, {"detail": "Not found."})
                    return
                for i in ids:
                    fake.remove(endpoint, i)
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def _write(self, method: str) -> None:
            endpoint, _ = self._route()
            body = self._body()
            with fake.lock:
                fake.requests.append((method, self.path, body))
            if not self._authorised():
                return
            if endpoint not in ENDPOINTS:
                self._send(404, {"detail": "Not found."})
                return
            objs = body if isinstance(body, list) else [body]
            with fake.lock:
                code, out = _apply(fake, endpoint, method, objs)
            self._send(code, out if isinstance(body, list) or code >= 400 else out[0])

    return Handler


def _apply(fake: FakeNetBox, endpoint: str, method: str, objs: list[dict[str, Any]]) -> tuple[int, Any]:
    """All or nothing, like NetBox's one transaction per request."""
    for obj in objs:
        oid = obj.get("id") if method == "PATCH" else None
        if method == "PATCH" and oid not in fake.db[endpoint]:
            return 400, {"detail": f"object {oid} not found"}
        error = fake._check(endpoint, obj, oid)
        if error:
            return 400, {"detail": error}
    stored = [fake._store(endpoint, obj, obj.get("id") if method == "PATCH" else None) for obj in objs]
    return (201 if method == "POST" else 200), [fake.render(endpoint, s) for s in stored]
