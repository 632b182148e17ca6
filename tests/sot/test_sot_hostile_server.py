"""`sot push` against a server that answers what an attacker (or a broken proxy) would: links to another
host, a page that names itself as the next, bodies without end, no answer at all, rows without their fields
(found by a fuzzing review). The token goes to --url's host only, every wait and body is bounded, and each
ends in a located refusal, never an internal error (exit 3) or a hang."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli
from sot_fixtures import builds  # noqa: F401  (fixture)

TOKEN = "0123456789abcdef0123456789abcdef01234567"
Answer = Callable[[BaseHTTPRequestHandler, str], None]


class Server:
    """An HTTP server on ``host`` answering every GET with ``answer`` (status: NetBox's), logging requests."""

    def __init__(self, answer: Answer, host: str = "127.0.0.1") -> None:
        self.seen: list[tuple[str, str, str]] = []  # (method, path, Authorization)
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_GET(self) -> None:
                outer.seen.append(("GET", self.path, self.headers.get("Authorization", "")))
                if self.path.startswith("/api/status/"):
                    send_json(self, {"netbox-version": "4.4.0"})
                else:
                    answer(self, outer.url)

        self.httpd = ThreadingHTTPServer((host, 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://{host}:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def send_json(handler: BaseHTTPRequestHandler, body: Any) -> None:
    data = json.dumps(body).encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


@pytest.fixture
def other() -> Iterator[Server]:
    """A second host (127.0.0.2) that must never hear from the tool."""
    server = Server(lambda h, url: send_json(h, {"count": 0, "next": None, "results": []}), "127.0.0.2")
    yield server
    server.close()


def push(build: Path, answer: Answer) -> tuple[int, str, float, Server]:
    server = Server(answer)
    start = time.monotonic()
    try:
        code, out, err = run_cli(
            "sot", "push", str(build), "--url", server.url, "--token", TOKEN, "--kind", "netbox", "--dry-run"
        )
    finally:
        server.close()
    return code, out + err, time.monotonic() - start, server


def test_a_next_page_on_another_host_is_not_followed(builds: dict, other: Server) -> None:
    """pynetbox followed `next` wherever it pointed, with the token: another host received it."""
    code, text, _, _ = push(
        builds["small"],
        lambda h, url: send_json(
            h, {"count": 10, "next": f"{other.url}/api/dcim/manufacturers/?offset=5", "results": []}
        ),
    )
    assert code in (1, 2) and "not followed" in text and "internal error" not in text, text
    assert other.seen == [] and TOKEN not in text


def test_a_page_that_names_itself_next_ends(builds: dict) -> None:
    """A `next` link to the same page was followed forever (1,350 requests a minute, memory growing)."""

    def loop(h: BaseHTTPRequestHandler, url: str) -> None:
        send_json(h, {"count": 5, "next": f"{url}{h.path}", "results": [{"id": 1, "name": "x", "slug": "x"}]})

    code, text, seconds, server = push(builds["small"], loop)
    assert code in (1, 2) and "its pages run in a cycle" in text, text
    assert len(server.seen) < 10 and seconds < 30


def test_a_body_without_end_is_not_read_past_its_bound(builds: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """A chunked body that never ended took 4 GB before the machine's limit stopped it."""
    import generator.sot.http as http

    monkeypatch.setattr(http, "MAX_BODY_BYTES", 1 << 20)

    def endless(h: BaseHTTPRequestHandler, url: str) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        chunk = b"[" + b" " * 65_000
        try:
            for _ in range(100):  # 6.5 MB, past the bound the test sets
                h.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        except OSError:
            return

    code, text, _, _ = push(builds["small"], endless)
    assert code in (1, 2) and "larger than 1 MiB" in text and "internal error" not in text, text


def test_a_server_that_never_answers_is_given_up(builds: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """The clients' sessions had no timeout: a server that accepted and never answered hung the push."""
    import generator.sot.http as http

    monkeypatch.setattr(http, "READ_TIMEOUT_S", 1.0)
    code, text, seconds, _ = push(builds["small"], lambda h, url: time.sleep(8))
    assert code in (1, 2) and "could not be reached" in text, text
    assert seconds < 8


@pytest.mark.parametrize(
    "row",
    [
        {"id": 1, "slug": "x"},
        {"id": 1, "name": ["a"], "slug": ["b"]},
        {"id": 1, "name": "x", "url": "http://x/"},
    ],
    ids=["no-name", "list-name", "short-url"],
)
def test_rows_without_their_fields_are_refused(builds: dict, row: dict) -> None:
    """KeyError 'name', TypeError unhashable, IndexError in pynetbox's URL parsing: internal errors (exit 3)."""
    code, text, _, _ = push(
        builds["small"], lambda h, url: send_json(h, {"count": 1, "next": None, "results": [row]})
    )
    assert code in (1, 2) and "internal error" not in text and "Traceback" not in text, text


def test_a_huge_error_text_is_cut(builds: dict) -> None:
    """A 400 answer with a 50 MB `detail` was printed whole."""

    def refuse(h: BaseHTTPRequestHandler, url: str) -> None:
        data = json.dumps({"detail": "x" * 5_000_000}).encode()
        h.send_response(400)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    code, text, _, _ = push(builds["small"], refuse)
    assert code in (1, 2) and "characters)" in text and len(text) < 20_000, len(text)


def test_a_redirect_without_end_is_not_read_past_its_bound(
    builds: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """requests reads a redirect's body whole before following it: a 302 whose body never ended."""
    import generator.sot.http as http

    monkeypatch.setattr(http, "MAX_BODY_BYTES", 1 << 20)

    def endless_redirect(h: BaseHTTPRequestHandler, url: str) -> None:
        h.send_response(302)
        h.send_header("Location", f"{url}/api/elsewhere/")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        chunk = b" " * 65_000
        try:
            for _ in range(100):
                h.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        except OSError:
            return

    code, text, _, _ = push(builds["small"], endless_redirect)
    assert code in (1, 2) and "larger than 1 MiB" in text and "internal error" not in text, text
