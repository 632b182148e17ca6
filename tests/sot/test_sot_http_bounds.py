"""The guarded HTTP session of `sot push` (generator/sot/http.py) against what a hostile or broken server
answers (review h140): the token to --url's own origin only, and every answer bounded in bytes and time."""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

import pytest

from generator.sot.backends import SotError
from generator.sot.http import GuardedSession
from sot_fixtures import builds  # noqa: F401  (fixture)
from test_sot_hostile_server import Server, push, send_json


@pytest.mark.parametrize(
    ("url", "named"),
    [
        ("http://nb.example:8000", "http://nb.example:8001/api/"),  # another port: another server
        ("http://nb.example", "http://nb.example:8080/api/"),
        ("https://nb.example", "https://nb.example:8443/api/"),
        ("http://nb.example:8000", "https://nb.example/api/"),  # an upgrade from another port than 80
        ("https://nb.example", "http://nb.example/api/"),  # a downgrade
        ("http://nb.example", "http://nb.example:99999/api/"),  # no port at all
    ],
)
def test_another_port_or_scheme_of_the_host_is_not_sent_the_token(url: str, named: str) -> None:
    with pytest.raises(SotError, match="not followed"):
        GuardedSession(url)._same_host(named)


@pytest.mark.parametrize(
    ("url", "named"),
    [
        ("http://nb.example", "https://nb.example/api/"),  # nginx's http -> https redirect
        ("http://nb.example", "https://NB.example:443/api/"),
        ("https://nb.example:443", "https://nb.example/api/"),
        ("http://nb.example:8000/", "http://nb.example:8000/api/?offset=50"),
    ],
)
def test_the_same_origin_and_the_https_upgrade_are_followed(url: str, named: str) -> None:
    GuardedSession(url)._same_host(named)


def test_a_next_page_on_another_port_of_the_host_is_not_followed(builds: dict) -> None:
    """The `next` page of a listing named the --url host on another port: it was sent the token."""
    other = Server(lambda h, url: send_json(h, {"count": 0, "next": None, "results": []}))
    try:
        code, text, _, _ = push(
            builds["small"],
            lambda h, url: send_json(
                h, {"count": 10, "next": f"{other.url}/api/dcim/manufacturers/?offset=5", "results": []}
            ),
        )
    finally:
        other.close()
    assert code == 1 and "not followed" in text and "internal error" not in text, text
    assert other.seen == []


def test_a_listing_of_pages_without_end_is_refused_past_the_push_budget(
    builds: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every page under the one-answer bound, but the listing's rows all held: memory grew with the pages
    (10,000 pages of 256 MiB allowed)."""
    import generator.sot.http as http

    monkeypatch.setattr(http, "PUSH_BYTES_BASE", 4 << 20, raising=False)
    monkeypatch.setattr(http, "PUSH_BYTES_PER_OBJECT", 0, raising=False)
    blob = "x" * (256 << 10)

    def pages(h: BaseHTTPRequestHandler, url: str) -> None:
        at = parse_qs(urlsplit(h.path).query)
        offset = int(at.get("offset", ["0"])[0])
        if not urlsplit(h.path).path.startswith("/api/dcim/manufacturers/") or offset >= 100:
            send_json(h, {"count": 0, "next": None, "results": []})
            return
        row = {"id": 1000 + offset, "name": f"m{offset}", "slug": f"m{offset}", "description": blob}
        nxt = f"{url}/api/dcim/manufacturers/?name=x&offset={offset + 1}"
        send_json(h, {"count": 100, "next": nxt, "results": [row]})

    code, text, _, server = push(builds["small"], pages)
    assert code == 1 and "passed 4 MiB in all" in text and "internal error" not in text, text
    assert len(server.seen) < 30


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunk-size-line"])
def test_an_answer_trickled_a_byte_at_a_time_is_given_up_at_the_total_bound(
    builds: dict, monkeypatch: pytest.MonkeyPatch, chunked: bool
) -> None:
    """TOTAL_TIMEOUT_S was checked only between 64 KiB chunks, and each byte restarted the read timeout: an
    answer sent a byte every few tenths of a second was read as long as it lasted."""
    import generator.sot.http as http

    monkeypatch.setattr(http, "TOTAL_TIMEOUT_S", 1.0)

    def trickle(h: BaseHTTPRequestHandler, url: str) -> None:
        body = json.dumps({"count": 0, "next": None, "results": [], "pad": "x" * 40}).encode()
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        if chunked:  # the chunk's size line itself trickles in (read by http.client's readline)
            h.send_header("Transfer-Encoding", "chunked")
            body = b"0" * 60 + b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
        else:
            h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        try:
            for byte in body:
                h.wfile.write(bytes([byte]))
                h.wfile.flush()
                time.sleep(0.1)
        except OSError:
            return

    code, text, seconds, _ = push(builds["small"], trickle)
    assert code == 1 and "took longer than 1 s" in text and "internal error" not in text, text
    assert seconds < 5


def test_headers_trickled_a_byte_at_a_time_are_given_up_at_the_total_bound(
    builds: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The body had a total bound, the status line and headers only the wait for each read: a server
    sending its headers a byte at a time, each within that wait, held `sot push` as long as it liked."""
    import generator.sot.http as http

    monkeypatch.setattr(http, "TOTAL_TIMEOUT_S", 1.0)

    def trickle(h: BaseHTTPRequestHandler, url: str) -> None:
        head = b"HTTP/1.1 200 OK\r\nX-Pad: " + b"x" * 60 + b"\r\nContent-Length: 0\r\n\r\n"
        try:
            for byte in head:
                h.wfile.write(bytes([byte]))
                h.wfile.flush()
                time.sleep(0.1)
        except OSError:
            return

    code, text, seconds, _ = push(builds["small"], trickle)
    assert code == 1 and "had not begun its answer after 1 s" in text and "internal error" not in text, text
    assert seconds < 5
