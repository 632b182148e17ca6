"""The HTTP session both REST clients (pynetbox, pynautobot) use: a server's answers are foreign input.

The clients follow what the server names: a list's ``next`` page, a created object's ``url``. Each request
they make carries the API token, so a server (or whatever answers at --url) that names another host got the
token sent there (another port of the same host too: another server). Their sessions have no timeout either
(a server that never answers hung `sot push`), and read whole bodies into memory (a never-ending or gzip-bomb
body took 4 GB). Here every request goes to the scheme, host and port of --url only (an upgrade from http on
port 80 to https on 443 of that host is allowed, a downgrade is not), waits a bounded time, and its body is
read up to a bound, decompressed size counted, and so are all answers of a push together.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import requests

from generator.sot.backends import SotError

CONNECT_TIMEOUT_S = 10.0
READ_TIMEOUT_S = 60.0  # the wait for any one read: a bulk write of a few hundred objects answers in seconds
TOTAL_TIMEOUT_S = 300.0  # one answer, however it trickles in
MAX_BODY_BYTES = 256 * 1024 * 1024  # one answer, decompressed: a page of NetBox's largest objects is ~1 MB
# The answers of one push in all, decompressed: every page of a listing is held until the listing ends, so a
# server answering page after page (each under MAX_BODY_BYTES) grew memory without bound. An object of the
# build comes back about four times (its lookup, the lookup of the cable ends on it, its create's answer,
# --mark-connected's read) at a few KB each as NetBox 4 serialises it: 32 KiB an object is ample, and a base
# covers the unfiltered listings of kinds a site has few of (manufacturers, roles, statuses).
PUSH_BYTES_BASE = 256 * 1024 * 1024
PUSH_BYTES_PER_OBJECT = 32 * 1024
DEFAULT_PORTS = {"http": 80, "https": 443}
MAX_PAGES = 10_000  # pages of one listing: its objects (backends.MAX_ROWS) at NetBox's default 50 a page


class GuardedSession(requests.Session):
    """A requests Session that talks to one host, with bounded waits and bodies."""

    def __init__(self, url: str, budget: int | None = None) -> None:
        super().__init__()
        self.origin = origin(url)
        self.url = url
        self.budget = budget  # the bytes all answers together may hold (push_budget); None: each answer's own
        self.left = budget
        self.pages: set[str] | None = None  # the pages of the listing being read (listing())

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:  # type: ignore[override]
        self._same_host(str(request.url))
        if request.method == "GET" and self.pages is not None:
            self._new_page(str(request.url))
        if kwargs.get("timeout") is None:
            kwargs["timeout"] = (CONNECT_TIMEOUT_S, READ_TIMEOUT_S)
        kwargs["stream"] = True
        reply = _begun_in_time(lambda: super(GuardedSession, self).send(request, **kwargs), str(request.url))
        _read_bounded(reply, self._charge)
        return reply

    @contextmanager
    def listing(self) -> Iterator[None]:
        """While one listing is read: a page it asks for twice is a cycle of `next` links (a page naming
        itself paged forever, memory growing), and it has at most MAX_PAGES pages."""
        self.pages = set()
        try:
            yield
        finally:
            self.pages = None

    def _new_page(self, url: str) -> None:
        assert self.pages is not None
        if url in self.pages:
            raise SotError(f"the server named {_shown(url)} again as a next page: its pages run in a cycle")
        if len(self.pages) >= MAX_PAGES:
            raise SotError(f"the server answered one query with more than {MAX_PAGES:,} pages")
        self.pages.add(url)

    def get_redirect_target(self, resp: requests.Response) -> str | None:
        # requests reads each redirect's body whole before following it (resolve_redirects): bound it here,
        # where every answer of a redirect chain passes first. Another answer's body is read by send(), past
        # the wait for its headers (_begun_in_time), under its own deadline.
        if resp.is_redirect and not resp._content_consumed:
            _read_bounded(resp, self._charge)
        return super().get_redirect_target(resp)

    def _charge(self, url: str, size: int) -> None:
        """``size`` more bytes of answers read; SotError past the push's budget."""
        if self.left is None or self.budget is None:
            return
        self.left -= size
        if self.left < 0:
            raise SotError(
                f"the server's answers to this push passed {self.budget >> 20:,} MiB in all (at "
                f"{_shown(url)}), far more than a build of this size reads back: not read further (a listing "
                "without end?)"
            )

    def _same_host(self, url: str) -> None:
        try:
            there = origin(url)
        except ValueError:  # a port that is no number or out of range, an unclosed `[`
            there = ("", "", -1)
        # the same origin (RFC 6454: scheme, host and port; another port is another server), or the one
        # upgrade a server redirects to: http on port 80 to https on 443 of the same host
        upgrade = self.origin == ("http", there[1], 80) and there == ("https", self.origin[1], 443)
        if there != self.origin and not upgrade:
            raise SotError(
                f"the server at {self.url} named {_shown(url)} for the client to follow: not followed, the "
                "token goes to the --url scheme, host and port only (a proxy or server rewriting its links; "
                "give --url as the address the server names itself by)"
            )


def origin(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of ``url``, the port its scheme's default when not given; ValueError for a port
    that is no number or out of range."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port  # ValueError past 65535 or not a number
    return scheme, (parts.hostname or "").lower(), port if port is not None else DEFAULT_PORTS.get(scheme, -1)


def push_budget(objects: int) -> int:
    """The bytes the answers to a push of a build of ``objects`` objects may come to."""
    return PUSH_BYTES_BASE + PUSH_BYTES_PER_OBJECT * objects


def _begun_in_time(send: Callable[[], requests.Response], url: str) -> requests.Response:
    """``send()``'s answer once its status line and headers are in, or SotError past TOTAL_TIMEOUT_S. Each
    read waits at most READ_TIMEOUT_S, but a header sent a byte at a time restarts that wait with every byte,
    and until the headers are in there is no response whose socket a timer could shut (as _Deadline does for
    the body): the request runs in a worker thread this one stops waiting for. The worker is left blocked on
    its socket; the push stops on the SotError, and the thread is a daemon, so it does not hold the exit."""
    answer: list[requests.Response] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            answer.append(send())
        except BaseException as error:  # re-raised in the caller's thread
            failure.append(error)

    worker = threading.Thread(target=run, name="sot-request", daemon=True)
    worker.start()
    worker.join(TOTAL_TIMEOUT_S)
    if worker.is_alive():
        raise SotError(
            f"the server at {_shown(url)} had not begun its answer after {TOTAL_TIMEOUT_S:.0f} s: "
            "not waited for"
        )
    if failure:
        raise failure[0]
    return answer[0]


def _read_bounded(reply: requests.Response, charge: Callable[[str, int], None]) -> None:
    """The whole body into ``reply.content``, refused past MAX_BODY_BYTES, past what ``charge`` allows (the
    session's budget) or past TOTAL_TIMEOUT_S."""
    parts: list[bytes] = []
    size = 0
    deadline = _Deadline(reply, TOTAL_TIMEOUT_S)
    try:
        for part in reply.iter_content(1 << 16):
            size += len(part)
            if size > MAX_BODY_BYTES:
                raise SotError(
                    f"the answer to {_shown(str(reply.url))} is larger than {MAX_BODY_BYTES >> 20} MiB: "
                    "not read"
                )
            deadline.check()
            charge(str(reply.url), len(part))
            parts.append(part)
    except Exception:  # whatever a read the deadline cut short ends in (requests' errors are OSErrors)
        deadline.check()
        raise
    finally:
        deadline.stop()
        reply.close()
    deadline.check()  # a body without a length ends where its socket was shut
    reply._content = b"".join(parts)  # what Response.content holds once read
    reply._content_consumed = True


class _Deadline:
    """The time one answer's body may take, however it trickles in. Each read of the socket waits at most
    READ_TIMEOUT_S, but that wait starts again with every byte, and one 64 KiB chunk is many reads (an
    answer sent a byte a second was read as long as it lasted): once the time is up, a timer shuts the socket
    for reading, which ends the read blocked on it (urllib3's HTTPResponse.shutdown, "to stop any ongoing or
    future reads", urllib3 2.3 release notes, urllib3/urllib3#2868; before 2.3, checked between chunks)."""

    def __init__(self, reply: requests.Response, seconds: float) -> None:
        self.url = str(reply.url)
        self.seconds = seconds
        self.start = time.monotonic()
        self.fired = False
        self._lock = threading.Lock()
        self._shutdown: Callable[[], None] | None = getattr(reply.raw, "shutdown", None)
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True
        if self._shutdown is not None:
            self._timer.start()

    def _fire(self) -> None:
        with self._lock:
            if self._shutdown is None:  # stopped: the body was read in time
                return
            self.fired = True
            # ValueError: no socket to shut (a body urllib3 did not read from one); RuntimeError: released
            with contextlib.suppress(ValueError, RuntimeError, OSError):
                self._shutdown()

    def check(self) -> None:
        if self.fired or time.monotonic() - self.start > self.seconds:
            raise SotError(
                f"the answer to {_shown(self.url)} took longer than {self.seconds:.0f} s: not read"
            )

    def stop(self) -> None:
        self._timer.cancel()
        with self._lock:
            self._shutdown = None


def _shown(url: str) -> str:
    """A URL from the server as one short printable token."""
    text = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in url[:200])
    return text + ("…" if len(url) > 200 else "")


def guarded(session: requests.Session, url: str, budget: int | None = None) -> GuardedSession:
    """A GuardedSession with the client's own headers, TLS settings and adapters (retries)."""
    out = GuardedSession(url, budget)
    out.headers.update(session.headers)
    out.verify = session.verify
    for prefix, adapter in session.adapters.items():
        out.mount(prefix, adapter)
    return out
