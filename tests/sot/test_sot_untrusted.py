"""`blueprint sot push` / `sot csv` with what a real site and a real operator bring (issue 31): objects of the
same name elsewhere at the site, a cable moved on the server's side, a token read from a file with its line
ending, an address that redirects or answers with a login page, text on the server that is not ours, and
outputs that name the build being read. Against the stand-in NetBox (tests/sot/fake_netbox.py)."""

from __future__ import annotations

import csv
import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli
from fake_netbox import FakeNetBox
from sot_fixtures import builds, netbox_rows  # noqa: F401  (fixtures)
from test_sot_netbox import TOKEN, cable_ends, planned_ends, push


@pytest.fixture
def netbox() -> Iterator[FakeNetBox]:
    fake = FakeNetBox()
    yield fake
    fake.close()


def copy_build(build: Path, to: Path) -> Path:
    folder = to / "cabling" / "netbox"
    folder.mkdir(parents=True)
    for f in (build / "cabling" / "netbox").iterdir():
        (folder / f.name).write_bytes(f.read_bytes())
    return to


def rewrite(build: Path, name: str, change: Any) -> None:
    path = build / "cabling" / "netbox" / name
    rows = netbox_rows(build, name)
    for row in rows:
        change(row)
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def site_of(build: Path) -> dict[str, str]:
    (row,) = netbox_rows(build, "sites.csv")
    return row


def test_a_rack_of_the_same_name_in_another_location_is_left_alone(netbox: FakeNetBox, builds: dict) -> None:
    """A rack name is unique within its location only: the lab's `r01-01` was moved into the plan's row and
    rewritten."""
    build = builds["small"]
    site = site_of(build)
    there = netbox.add("sites", {"name": site["name"], "slug": site["slug"], "status": "active"})
    lab = netbox.add("locations", {"site": there["id"], "name": "lab-hall", "slug": "lab-hall"})
    name = netbox_rows(build, "racks.csv")[0]["name"]
    theirs = netbox.add(
        "racks",
        {"site": there["id"], "location": lab["id"], "name": name, "description": "lab", "u_height": 42},
    )
    before = dict(netbox.db["racks"][theirs["id"]])
    code, report, err = push(netbox, build)
    assert code == 0, err
    assert netbox.db["racks"][theirs["id"]] == before
    assert name in report["kinds"]["rack"]["create"]
    ours = [r for r in netbox.db["racks"].values() if r["name"] == name and r["id"] != theirs["id"]]
    assert len(ours) == 1 and ours[0]["location"] != lab["id"]


def test_a_cable_whose_a_end_moves_is_replaced(netbox: FakeNetBox, builds: dict, tmp_path: Path) -> None:
    """A port renamed on the host side (a port map added): the cable still held its old A end, was never
    found, and its creation was refused on every push as its B end was taken."""
    assert push(netbox, builds["small"])[0] == 0
    build = copy_build(builds["small"], tmp_path / "build")
    cable = netbox_rows(build, "cables.csv")[0]
    device, old = cable["side_a_device"], cable["side_a_name"]
    new = "renamed0"

    def port(row: dict[str, str]) -> None:
        if row["device"] == device and row["name"] == old:
            row["name"] = new

    def end(row: dict[str, str]) -> None:
        if row["side_a_device"] == device and row["side_a_name"] == old:
            row["side_a_name"] = new

    rewrite(build, "interfaces.csv", port)
    rewrite(build, "cables.csv", end)
    code, report, err = push(netbox, build)
    assert code == 0, err
    assert list(report["kinds"]["cable"]["update"]) == [cable["label"]]
    assert cable_ends(netbox) == planned_ends(build)
    assert push(netbox, build)[1]["kinds"]["cable"]["update"] == {}


@pytest.mark.parametrize("token", [TOKEN + "\r", TOKEN + " ", "abc\u200bdef", "ab\tcd"])
def test_a_token_with_a_line_ending_is_refused_unsent_and_unprinted(
    netbox: FakeNetBox, builds: dict, token: str
) -> None:
    """requests refused the header and the message printed it (exit 1, "could not be reached"); a
    non-Latin-1 character was an internal error (exit 3)."""
    for kind in ([], ["--kind", "netbox"], ["--kind", "nautobot"]):
        code, out, err = run_cli(
            "sot", "push", str(builds["small"]), "--url", netbox.url, "--token", token, *kind
        )
        assert code == 2, err
        assert token.strip() not in out + err and "API token" in err
    assert netbox.requests == []


def test_an_unusable_report_path_is_refused_before_the_server_is_written(
    netbox: FakeNetBox, builds: dict, tmp_path: Path
) -> None:
    """`-o` a folder was refused after every object had been created, under "nothing written"; `-o` one of
    the build's own files replaced it with the report."""
    folder = tmp_path / "reports"
    folder.mkdir()
    code, _, err = run_cli(
        "sot", "push", str(builds["small"]), "--url", netbox.url, "--token", TOKEN, "-o", str(folder)
    )
    assert code == 2 and netbox.requests == [], err
    build = copy_build(builds["small"], tmp_path / "build")
    devices = build / "cabling" / "netbox" / "devices.csv"
    kept = devices.read_bytes()
    code, _, err = run_cli(
        "sot", "push", str(build), "--url", netbox.url, "--token", TOKEN, "-o", str(devices)
    )
    assert code == 2 and "devices.csv" in err and netbox.requests == [], err
    assert devices.read_bytes() == kept


@pytest.mark.parametrize("inside", ["", "cabling", "cabling/netbox", ".."])
def test_csv_refuses_an_output_folder_holding_or_inside_its_build(
    builds: dict, tmp_path: Path, inside: str
) -> None:
    """`sot csv BUILD -o BUILD/cabling --force` replaced the folder whole: the build's NetBox files, cables.csv,
    the workbook and the LLDP files were deleted."""
    build = copy_build(builds["small"], tmp_path / "sub" / "build")
    listing = sorted(p.relative_to(build) for p in build.rglob("*"))
    out = (build / inside) if inside != ".." else tmp_path / "sub"
    code, _, err = run_cli("sot", "csv", str(build), "-o", str(out), "--force")
    assert code == 2 and "BUILD" in err, err
    assert sorted(p.relative_to(build) for p in build.rglob("*")) == listing


def test_csv_writes_a_new_folder_beside_the_files_it_reads(builds: dict, tmp_path: Path) -> None:
    build = copy_build(builds["small"], tmp_path / "build")
    code, _, err = run_cli("sot", "csv", str(build), "-o", str(build / "netbox-import"))
    assert code == 0, err
    assert (build / "cabling" / "netbox" / "devices.csv").is_file()
    assert sorted(p.name for p in (build / "netbox-import").iterdir())[0].startswith("01-")


def test_text_from_the_server_stays_on_its_line(netbox: FakeNetBox, builds: dict) -> None:
    """A description on the server holding a line break and escape sequences printed a `+` line of its own
    and set the terminal's title and colours."""
    assert push(netbox, builds["small"])[0] == 0
    device = next(iter(netbox.db["devices"].values()))
    device["description"] = "x\n  + evil-injected-line\x1b]0;pwned\x07\x1b[31mRED"
    code, out, err = run_cli(
        "sot", "push", str(builds["small"]), "--url", netbox.url, "--token", TOKEN, "--dry-run"
    )
    assert code == 1, err
    assert "\x1b" not in out and "\x07" not in out
    assert not any(line.startswith("  + evil") for line in out.splitlines())
    assert f"  ~ {device['name']}: description: x\\x0a  + evil-injected-line" in out


def test_a_sites_file_without_a_name_column_is_located(
    builds: dict, netbox: FakeNetBox, tmp_path: Path
) -> None:
    """Was an internal error (exit 3): KeyError 'name'."""
    build = copy_build(builds["small"], tmp_path / "build")
    (build / "cabling" / "netbox" / "sites.csv").write_text(
        "title,slug,status,description\ndc1,dc1,active,\n"
    )
    code, _, err = run_cli("sot", "push", str(build), "--url", netbox.url, "--token", TOKEN)
    assert code == 2 and "sites.csv:2" in err and "no column" in err, err


class _Front:
    """A server in front of the fake: a write redirected with 301 to where it was sent (as nginx sends
    http:// to https:// on the same host, which keeps the token), reads passed on to the fake; or every
    request answered with a login page's HTML (an SSO proxy)."""

    def __init__(self, fake: FakeNetBox, mode: str) -> None:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return None

            def _reply(self, code: int, body: bytes, headers: dict[str, str]) -> None:
                self.send_response(code)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                if mode != "redirect":
                    self._reply(200, b"<html><body>Sign in</body></html>", {"Content-Type": "text/html"})
                    return
                ask = urllib.request.Request(
                    fake.url + self.path, headers={"Authorization": self.headers.get("Authorization", "")}
                )
                with urllib.request.urlopen(ask, timeout=30) as answer:
                    self._reply(answer.status, answer.read(), {"Content-Type": "application/json"})

            def _write(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if mode != "redirect":
                    self.do_GET()
                    return
                self._reply(301, b"", {"Location": self.path})

            do_POST = do_PATCH = do_DELETE = _write

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize(
    ("mode", "kinds", "says"),
    [("redirect", ("netbox",), "redirect"), ("login", ("netbox", "nautobot"), "not its API's JSON")],
)
def test_a_redirect_or_a_login_page_is_a_clear_refusal(
    netbox: FakeNetBox, builds: dict, mode: str, kinds: tuple[str, ...], says: str
) -> None:
    """A POST redirected is re-sent as a GET, whose list answer ended in `AttributeError: id` (exit 3), and
    HTML was the client's ContentError (exit 3)."""
    front = _Front(netbox, mode)
    try:
        for kind in kinds:
            code, out, err = run_cli(
                "sot", "push", str(builds["small"]), "--url", front.url, "--token", TOKEN, "--kind", kind
            )
            assert code == 1 and says in err, (kind, err)
            assert "internal error" not in err
    finally:
        front.close()
    assert netbox.writes() == []


@pytest.mark.parametrize("length", ["inf", "nan", "-3"])
def test_a_cable_length_that_is_no_length_is_located(
    builds: dict, netbox: FakeNetBox, tmp_path: Path, length: str
) -> None:
    """`inf` overflowed Nautobot's whole-number length (OverflowError, exit 3) and reached NetBox as is."""
    build = copy_build(builds["small"], tmp_path / "build")
    first = netbox_rows(build, "cables.csv")[0]["label"]

    def cut(row: dict[str, str]) -> None:
        if row["label"] == first:
            row["length"] = length

    rewrite(build, "cables.csv", cut)
    code, _, err = run_cli("sot", "push", str(build), "--url", netbox.url, "--token", TOKEN)
    assert code == 2 and "cables.csv:2" in err and "not a length" in err, err
    assert netbox.requests == []


def test_a_rack_of_the_plan_at_the_site_without_a_location_is_adopted(
    netbox: FakeNetBox, builds: dict
) -> None:
    build = builds["small"]
    site = site_of(build)
    there = netbox.add("sites", {"name": site["name"], "slug": site["slug"], "status": "active"})
    name = netbox_rows(build, "racks.csv")[0]["name"]
    made = netbox.add("racks", {"site": there["id"], "name": name, "u_height": 42})
    code, report, err = push(netbox, build)
    assert code == 0, err
    assert name in report["kinds"]["rack"]["update"] and name not in report["kinds"]["rack"]["create"]
    assert [r["id"] for r in netbox.db["racks"].values() if r["name"] == name] == [made["id"]]
    assert netbox.db["racks"][made["id"]]["location"] is not None


@pytest.mark.parametrize("which", ["BUILD", "--since"])
def test_a_field_past_the_csv_limit_is_located(builds: dict, tmp_path: Path, which: str) -> None:
    """A sites.csv cell over 131,072 characters (the csv module's field limit) was an internal error (exit 3)
    in `sot csv --since` and `sot push`."""
    build = copy_build(builds["small"], tmp_path / "build")
    path = build / "cabling" / "netbox" / "sites.csv"
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], lines[1] + "x" * 140_000, *lines[2:]]) + "\n")
    other = builds["grown"]
    new, old = (build, other) if which == "BUILD" else (other, build)
    code, _, err = run_cli("sot", "csv", str(new), "--since", str(old), "-o", str(tmp_path / "out"))
    assert code == 2 and f"{path}:2" in err and "field larger than field limit" in err, err
    code, _, err = run_cli(
        "sot", "push", str(build), "--url", "http://127.0.0.1:9", "--token", TOKEN, "--dry-run"
    )
    assert code == 2 and f"{path}:2" in err, err


def test_a_quote_never_closed_is_refused_at_its_line(builds: dict, tmp_path: Path) -> None:
    """One stray quote glued every later line into one record (200,000 lines: 33 s, exit 0, files NetBox
    cannot import): the record's quotes were recounted as each line joined it."""
    build = copy_build(builds["small"], tmp_path / "build")
    path = build / "cabling" / "netbox" / "cables.csv"
    before = path.read_text().count("\n")
    with path.open("a") as f:
        f.write('"\n' + "a,b\n" * 200_000)
    code, _, err = run_cli("sot", "csv", str(build), "-o", str(tmp_path / "out"))
    assert code == 2 and f"{path}:{before + 1}" in err and "never closed" in err, err
    code, _, err = run_cli("sot", "push", str(build), "--url", "http://127.0.0.1:9", "--token", TOKEN, "--dry-run")
    assert code == 2 and f"{path}:{before + 1}" in err and "never closed" in err, err
    assert not (tmp_path / "out").exists()


def test_a_device_of_another_site_returned_by_a_server_ignoring_the_site_filter_is_left_alone(
    netbox: FakeNetBox, builds: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that ignored `site_id` returned another site's `gpu001` (a production box): the push rewrote
    its description and moved it into the plan's site and rack (found by a fuzzing review)."""
    build = builds["small"]
    prod = netbox.add("sites", {"name": "production", "slug": "production", "status": "active"})
    name = netbox_rows(build, "devices.csv")[0]["name"]
    maker = netbox.add("manufacturers", {"name": "Acme", "slug": "acme"})
    kind = netbox.add("device-types", {"manufacturer": maker["id"], "model": "Box", "slug": "box"})
    role = netbox.add("device-roles", {"name": "prod", "slug": "prod"})
    theirs = netbox.add(
        "devices",
        {"site": prod["id"], "name": name, "role": role["id"], "device_type": kind["id"], "description": "box"},
    )
    before = dict(netbox.db["devices"][theirs["id"]])
    select = FakeNetBox.select

    def ignoring_site(self: FakeNetBox, endpoint: str, query: dict[str, list[str]]) -> list[dict[str, Any]]:
        return select(self, endpoint, {k: v for k, v in query.items() if k != "site_id"})

    monkeypatch.setattr(FakeNetBox, "select", ignoring_site)
    code, report, err = push(netbox, build)
    assert code == 0, err
    assert netbox.db["devices"][theirs["id"]] == before
    assert name in report["kinds"]["device"]["create"]
