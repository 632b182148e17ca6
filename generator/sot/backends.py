"""The two products' REST APIs behind one interface: find what a site holds, create, update in bulk.

Both speak Django REST Framework: a list endpoint filters with repeated query parameters
(``?name=a&name=b``), a POST of a JSON list creates objects in one request and transaction, and a PATCH of
a list of ``{"id": ..., field: value}`` updates several (NetBox docs "REST API overview", "Creating
Multiple Objects" / "Updating Multiple Objects"; Nautobot docs "REST API overview", the same). Related
objects are referred to by id.

Where the two differ (NetBox 4 / Nautobot 2-3):
- NetBox has sites, locations under a site and slugs; Nautobot 2 dropped slugs, and sites and rows are
  both Locations, of location types that say what they may hold.
- NetBox statuses are choice values (``planned``); Nautobot's are Status objects (``Planned``) by id.
- NetBox 4 cables take ``a_terminations``/``b_terminations`` lists; Nautobot ``termination_a_type`` +
  ``termination_a_id``, and its cable length is a whole number.
- Nautobot racks and devices carry ``comments`` where NetBox has a description, and its roles are
  shared by models (``content_types``).
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable, Iterable
from contextlib import nullcontext
from functools import partial
from typing import Any, ClassVar, Protocol

from generator.safetext import inline
from generator.sot.build import Desired, Key, Record, chunks
from generator.sot.changes import Found, Pending

IdMap = dict[tuple[str, Key], Any]
# Names and ids per filtered GET: keeps a query string well under common 8 KB URL limits (nginx's
# large_client_header_buffers default), even with 36-character UUIDs.
FILTER_CHUNK = 100
# Objects one filtered query may answer: it names at most FILTER_CHUNK objects (a device's interfaces: ~100
# each); an unfiltered one lists a kind the plan has few of (manufacturers, roles, statuses).
MAX_ROWS = 200_000
# What reading an answer that is not the API's JSON raises in the clients or in the code reading their rows:
# a row without its fields, fields of the wrong type, a `url` too short for the client to parse, nesting
# deeper than the JSON parser takes.
UNREADABLE: tuple[type[Exception], ...] = (
    KeyError,
    TypeError,
    AttributeError,
    ValueError,
    IndexError,
    RecursionError,
    StopIteration,
)


class SotError(Exception):
    """The source of truth refused or could not be reached: the message says what and where."""


class MissingClient(SotError):
    """The product's Python client is not installed (an optional dependency)."""

    def __init__(self, package: str) -> None:
        super().__init__(f"{package} is not installed: pip install 'cluster-blueprint[sot]'")


class Backend(Protocol):
    product: str

    def prepare(self, desired: Desired, create: bool) -> None: ...

    def find(self, kind: str, records: list[Record], ids: IdMap) -> dict[Key, Found]: ...

    def payload(self, record: Record, ids: IdMap) -> dict[str, Any]: ...

    def create(self, kind: str, payloads: list[dict[str, Any]]) -> list[Any]: ...

    def update(self, kind: str, payloads: list[dict[str, Any]]) -> None: ...

    def delete(self, kind: str, ids: list[Any]) -> None: ...

    @property
    def end_fields(self) -> dict[str, frozenset[str]]: ...

    def status(self, name: str) -> Any: ...

    @property
    def holders(self) -> dict[Any, tuple[Any, str]]: ...


def ref(ids: IdMap, record: Record, name: str) -> Any:
    """The id of what ``record`` refers to as ``name`` (a Pending one while it is still to create)."""
    target = record.refs[name]
    return ids.get(target, Pending(*target))


def plain(value: Any) -> Any:
    """An API value in payload shape: a choice's value, a related object's id, whole floats as ints."""
    if isinstance(value, dict):
        if "value" in value and "label" in value:
            return value["value"]
        if "id" in value:
            return value["id"]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def flat(record: Any) -> dict[str, Any]:
    """A pynetbox/pynautobot Record as a plain dict of payload-shaped values."""
    raw = dict(record)
    return {k: plain(v) for k, v in raw.items()}


def known(values: Iterable[Any]) -> list[Any]:
    """The ids among ``values`` that exist at the site (a Pending one cannot be filtered on)."""
    return [v for v in values if not isinstance(v, Pending)]


class RestBackend:
    """What both products share: endpoints by kind, chunked filtered reads, batched writes."""

    product = "?"
    endpoints: ClassVar[dict[str, tuple[str, str]]] = {}

    def __init__(
        self,
        api: Any,
        error: type[Exception],
        unreadable: type[Exception],
        progress: Callable[[str], None] | None = None,
    ):
        self.api = api
        self.error = error  # the client's "the server refused" (an HTTP error status)
        self.unreadable = unreadable  # the client's "the answer is not JSON"
        self.progress = progress or (lambda text: print(text, file=sys.stderr))
        # interface id -> (id, label) of the cable on it, for the plan's cable ends the last cable lookup read
        self._holders: dict[Any, tuple[Any, str]] = {}

    @property
    def holders(self) -> dict[Any, tuple[Any, str]]:
        return self._holders

    def note_holders(self, interfaces: list[dict[str, Any]], cables: list[dict[str, Any]]) -> None:
        """Which cable holds each of ``interfaces`` (rows with a ``cable``), labelled from ``cables``."""
        labels = {row["id"]: str(row.get("label") or "") for row in cables}
        self._holders = {row["id"]: (row["cable"], labels.get(row["cable"], "")) for row in interfaces}

    def endpoint(self, kind: str) -> Any:
        app, name = self.endpoints[kind]
        return getattr(getattr(self.api, app), name)

    def _call(self, what: str, call: Callable[[], Any]) -> Any:
        """``call``'s answer; SotError when the server refused, could not be reached, or answered what the
        client cannot read (an SSO page's HTML: the client's ContentError, or records without their fields),
        which were internal errors (exit 3)."""
        from urllib3.exceptions import LocationValueError  # a host urllib3 refuses as it connects

        try:
            return call()
        except self.error as exc:
            raise SotError(f"{self.product} refused {what}: {_cut(str(exc))}") from None
        except (OSError, LocationValueError) as exc:  # requests' ConnectionError and timeouts: OSError
            raise SotError(f"{self.product} could not be reached ({what}): {exc}") from None
        except (self.unreadable, *UNREADABLE) as exc:
            raise SotError(
                f"{self.product} answered {what} with what is not its API's JSON ({type(exc).__name__}): "
                "check --url (the API's own address, not a login page or proxy in front of it)"
            ) from None

    def fetch(self, kind: str, **filters: Any) -> list[dict[str, Any]]:
        """Every object of ``kind`` matching ``filters``; one list-valued filter is fetched in chunks."""
        many = [k for k, v in filters.items() if isinstance(v, list)]
        if not many:  # the client's answer is read lazily: listed inside _call, where its errors are caught
            return self._call(f"listing {kind}", partial(self._filter, kind, filters))
        name = many[0]
        out: list[dict[str, Any]] = []
        for part in chunks(filters[name], FILTER_CHUNK):
            out.extend(self._call(f"listing {kind}", partial(self._filter, kind, {**filters, name: part})))
        return out

    def _filter(self, kind: str, query: dict[str, Any]) -> list[dict[str, Any]]:
        # the guarded session (sot/http.py) holds one listing's pages to no repeat and a count
        with getattr(getattr(self.api, "http_session", None), "listing", nullcontext)():
            return self._rows(kind, query)

    def _rows(self, kind: str, query: dict[str, Any]) -> list[dict[str, Any]]:
        rows = []
        for record in self.endpoint(kind).filter(**query):
            row = flat(record)
            if row.get("id") in (None, ""):
                raise KeyError("id")
            rows.append(row)
            if len(rows) > MAX_ROWS:  # pages that never end (a `next` cycle): memory grew without bound
                raise SotError(f"{self.product} answered more than {MAX_ROWS:,} {kind} for one query")
        return rows

    def create(self, kind: str, payloads: list[dict[str, Any]]) -> list[Any]:
        """The new objects' ids, in the order of ``payloads``. A POST to an http:// address that redirects to
        https:// is re-sent by requests as a GET, whose answer is a list of what exists (it ended in an
        internal error, exit 3): an answer that is not the objects created is refused."""
        what = f"creating {len(payloads)} {kind}"
        made = self._call(what, lambda: self.endpoint(kind).create(payloads))
        made = made if isinstance(made, list) else [made]
        # a record without `id` makes the client fetch its `url`: read where the client's errors are caught
        ids = self._call(what, lambda: [getattr(m, "id", None) for m in made])
        if len(ids) != len(payloads) or any(i in (None, "") for i in ids):
            raise SotError(
                f"{self.product} answered {what} with {len(ids)} object(s), not the ones created: a redirect "
                "(http:// to https://) turns a write into a read; give --url as the address it redirects to"
            )
        return ids

    def update(self, kind: str, payloads: list[dict[str, Any]]) -> None:
        self._call(f"updating {len(payloads)} {kind}", lambda: self.endpoint(kind).update(payloads))

    def delete(self, kind: str, ids: list[Any]) -> None:
        self._call(f"deleting {len(ids)} {kind}", lambda: self.endpoint(kind).delete(ids))

    def found(
        self, rows: list[dict[str, Any]], key: Callable[[dict[str, Any]], Key | None]
    ) -> dict[Key, Found]:
        out: dict[Key, Found] = {}
        for row in rows:
            k = key(row)
            if k is not None:
                out.setdefault(k, Found(row["id"], row))
        return out


MAX_DETAIL = 2000  # characters of a server's error text shown: a 50 MB `detail` was printed whole


def _cut(text: str) -> str:
    return text if len(text) <= MAX_DETAIL else f"{text[:MAX_DETAIL]}… ({len(text):,} characters)"


def whole_length(length: Any, unit: str) -> tuple[Any, str]:
    """A cable length as a whole number (Nautobot's field is an integer): metres, else centimetres."""
    if length in (None, "") or float(length).is_integer():
        return (None if length in (None, "") else int(length)), unit if length not in (None, "") else ""
    return math.ceil(float(length) * 100), "cm"


class Unreachable(SotError):
    """The server did not answer at all (no --kind helps)."""


class StatusUnknown(SotError):
    """/api/status/ is not there or not JSON (a proxy or an older API in front of it): --kind can say the
    product. Its other refusals (a token refused: 403) are not helped by --kind."""


# NetBox 4.5's v2 tokens, `nbt_<key>.<secret>`, authenticate as `Authorization: Bearer`, the v1 tokens as
# `Token` (pynetbox 7.8, core/query.py: _is_v2_token and Request._add_auth_header, which tell them apart the
# same way); Nautobot's tokens are all `Token`.
V2_TOKEN_PREFIX = "nbt_"


def authorization(token: str) -> str:
    """The Authorization header's value for ``token``, as pynetbox sends it."""
    v2 = token.startswith(V2_TOKEN_PREFIX) and "." in token[len(V2_TOKEN_PREFIX) :]
    return f"{'Bearer' if v2 else 'Token'} {token}"


# The releases whose REST API the backends write (the device's role field, the site as a Location):
# - NetBox 3.6 renamed the device's ``device_role`` to ``role`` (netbox-community/netbox #6391; #15099: "The
#   device_role field on the Device model was renamed to role under #6391 in NetBox v3.6"), and 4.0 removed
#   the old name (v4.0.0 release notes, "Breaking Changes"); the backend is written against 4.x.
# - Nautobot 2.0 replaced Site and Region with Location and merged the role models into one generic Role
#   (Nautobot v2.0 release notes, "Collapse Region and Site Models into Location (#2517)", "Generic Role Model
#   (#1063)"); the backend is written against 2.x and 3.x.
OLDEST = {"netbox": (3, 6), "nautobot": (2, 0)}
WRITTEN_FOR = {"netbox": (4,), "nautobot": (2, 3)}  # the major releases the backends were written against
PRODUCTS = {"netbox": "NetBox", "nautobot": "Nautobot"}
_VERSION = re.compile(r"v?(\d{1,4})\.(\d{1,4})")


def server_status(url: str, token: str, timeout: float = 30.0) -> tuple[str, str]:
    """(``netbox`` or ``nautobot``, its version) from the status endpoint both serve (``netbox-version`` /
    ``nautobot-version`` keys of ``GET /api/status/``)."""
    import requests
    from urllib3.exceptions import LocationValueError

    from generator.sot.http import GuardedSession

    try:
        reply = GuardedSession(url).get(
            f"{url.rstrip('/')}/api/status/",
            headers={"Authorization": authorization(token), "Accept": "application/json"},
            timeout=timeout,
        )
    except (requests.RequestException, LocationValueError) as exc:  # a host urllib3 refuses as it connects
        raise Unreachable(f"{url} could not be reached: {exc}") from None
    if reply.status_code != 200:
        refusal = StatusUnknown if reply.status_code == 404 else SotError
        raise refusal(f"{url}/api/status/ answered HTTP {reply.status_code}: check --url and the token")
    try:
        status = reply.json()
    except (ValueError, RecursionError):  # not JSON, or nested past what the parser takes
        raise StatusUnknown(
            f"{url}/api/status/ answered what is not its API's JSON (a login page, or not the API's "
            "address): check --url"
        ) from None
    if isinstance(status, dict):
        for product in ("nautobot", "netbox"):
            if f"{product}-version" in status:
                # foreign text, shown in messages: one line, cut
                return product, inline(str(status[f"{product}-version"])[:80])
    raise SotError(f"{url}/api/status/ is neither NetBox's nor Nautobot's")


def release_check(product: str, version: str) -> str:
    """A SotError for a release older than the backend writes; a warning (returned) for one it was not written
    against or whose version cannot be read; "" for one it was."""
    name = PRODUCTS[product]
    m = _VERSION.match(version.strip())
    if m is None:
        return f"{name} reports version {version!r}, which this tool cannot read: the push may fail"
    release = (int(m[1]), int(m[2]))
    oldest = OLDEST[product]
    if release < oldest:
        raise SotError(
            f"{name} {version} is older than {oldest[0]}.{oldest[1]}, the oldest release whose API "
            f"`sot push` writes; import the CSV files of `blueprint sot csv` instead, or upgrade {name}"
        )
    if release[0] not in WRITTEN_FOR[product]:
        built = " and ".join(f"{m}.x" for m in WRITTEN_FOR[product])
        return f"{name} {version}: `sot push` is written against {name} {built}; check the dry run first"
    return ""
