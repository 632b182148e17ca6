"""`blueprint sot push` refusing before it writes what it cannot finish, and its options checked up front
(review h140). Against the stand-in NetBox (tests/sot/fake_netbox.py)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import run_cli
from fake_netbox import FakeNetBox
from sot_fixtures import builds  # noqa: F401  (fixtures)
from test_sot_netbox import TOKEN, push


@pytest.fixture
def netbox() -> Iterator[FakeNetBox]:
    fake = FakeNetBox()
    yield fake
    fake.close()


def _cable_end(fake: FakeNetBox, label: str, side: str) -> int:
    cable = next(c for c in fake.db["cables"].values() if c["label"] == label)
    return int(cable[f"{side}_terminations"][0]["object_id"])


def _terminations(interface: int) -> list[dict]:
    return [{"object_type": "dcim.interface", "object_id": interface}]


def test_a_rewired_cable_whose_new_end_a_site_cable_holds_is_not_deleted(
    netbox: FakeNetBox, builds: dict
) -> None:
    """The site re-patched a plan cable to a spare port, and a cable of its own now holds the plan's B end:
    the push deleted the site's record of the plan cable, then its re-creation was refused (record lost)."""
    assert push(netbox, builds["small"])[0] == 0
    label = next(c["label"] for c in netbox.db["cables"].values())
    a, b = _cable_end(netbox, label, "a"), _cable_end(netbox, label, "b")
    leaf = netbox.db["interfaces"][b]["device"]
    spare = netbox.add("interfaces", {"device": leaf, "name": "spare0", "type": "400gbase-x-osfp"})
    old = next(c for c in netbox.db["cables"].values() if c["label"] == label)
    netbox.remove("cables", old["id"])
    moved = netbox.add(
        "cables",
        {"a_terminations": _terminations(a), "b_terminations": _terminations(spare["id"]), "label": label},
    )
    server = netbox.add(
        "devices",
        {**{k: netbox.db["devices"][leaf][k] for k in ("role", "device_type", "site")}, "name": "lab-box"},
    )
    port = netbox.add("interfaces", {"device": server["id"], "name": "eth0", "type": "400gbase-x-osfp"})
    netbox.add(
        "cables",
        {
            "a_terminations": _terminations(port["id"]),
            "b_terminations": _terminations(b),
            "label": "lab-patch",
        },
    )
    end = f"{netbox.db['devices'][leaf]['name']}:{netbox.db['interfaces'][b]['name']}"
    before = len(netbox.writes())
    for dry in (("--dry-run",), ()):
        code, _, err = push(netbox, builds["small"], *dry)
        assert code == 1, err
        assert f"cable {label}: its B end {end}" in err and "lab-patch" in err and "Traceback" not in err, err
    assert len(netbox.writes()) == before  # nothing deleted, nothing created
    assert moved["id"] in netbox.db["cables"] and netbox.db["interfaces"][a]["cable"] == moved["id"]


@pytest.mark.parametrize(
    ("given", "output"),
    [
        ("", "manifest.json"),
        ("", "report/SUMMARY.md"),
        ("cabling/netbox", "manifest.json"),
    ],
)
def test_the_report_never_replaces_a_file_of_the_build(
    netbox: FakeNetBox, builds: dict, tmp_path: Path, given: str, output: str
) -> None:
    """`sot push BUILD -o BUILD/manifest.json` replaced the build's manifest with the report (`generate`
    then refused the folder as edited by hand)."""
    build = tmp_path / "build"
    shutil.copytree(builds["small"], build)
    target = build / output
    assert target.is_file()
    kept = target.read_bytes()
    code, _, err = run_cli(
        "sot",
        "push",
        str(build / given),
        "--url",
        netbox.url,
        "--token",
        TOKEN,
        "--dry-run",
        "-o",
        str(target),
    )
    assert code == 2 and f"the build's {output}" in err, err
    assert target.read_bytes() == kept and netbox.requests == []


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://[::1", "not a URL"),
        ("netbox.example.com", "not an http:// or https:// address"),
        ("file:///x", "not an http:// or https:// address"),
        ("http://", "no host"),
        ("http://nb.example:abc/", "not a URL"),
        ("http://nb.example:70000/", "not a URL"),
        ("http://nb.example:0/", "port 0"),
        ("http://%zz", "not a URL"),  # hosts the HTTP client refuses: "could not be reached", exit 1
        ("https://exa mple.com", "not a URL"),
        ("http://a..b", "not a host name"),  # urllib3 refuses these only as it connects: exit 3
        ("http://" + "a" * 64 + ".example.com", "not a host name"),
    ],
)
def test_a_url_that_is_no_server_address_is_refused_up_front(builds: dict, url: str, says: str) -> None:
    """`http://[::1` was an internal error (exit 3); the others a refusal of the HTTP client (exit 1)."""
    code, _, err = run_cli("sot", "push", str(builds["small"]), "--url", url, "--token", TOKEN, "--dry-run")
    assert code == 2 and f"--url {url}: {says}" in err and "internal error" not in err, err


def test_the_dry_run_reports_a_rack_in_no_location_as_the_update_the_push_makes(
    netbox: FakeNetBox, builds: dict
) -> None:
    """The plan's rows not made yet: the dry run said "create" for the rack the push then adopted and
    updated (the racks were looked up among the plan's locations only, and there were none)."""
    from sot_fixtures import netbox_rows

    build = builds["small"]
    (site,) = netbox_rows(build, "sites.csv")
    there = netbox.add("sites", {"name": site["name"], "slug": site["slug"], "status": "active"})
    name = netbox_rows(build, "racks.csv")[0]["name"]
    netbox.add("racks", {"site": there["id"], "name": name, "u_height": 42})
    code, dry, err = push(netbox, build, "--dry-run")
    assert code == 1, err
    code, done, err = push(netbox, build)
    assert code == 0, err
    assert dry["kinds"]["rack"]["create"] == done["kinds"]["rack"]["create"]
    assert list(dry["kinds"]["rack"]["update"]) == list(done["kinds"]["rack"]["update"]) == [name]


V2_TOKEN = "nbt_abc123DEF456.0123456789abcdef0123456789abcdef01234567"


def _status_answer(fake: FakeNetBox, code: int | None, token: str) -> None:
    """The fake checks the Authorization header as NetBox 4.5 does (a v2 token as `Bearer`, 403 "Invalid v1
    token" for `Token nbt_...`), and answers /api/status/ with ``code`` (None: its usual answer)."""
    base = fake.server.RequestHandlerClass

    class Handler(base):  # type: ignore[misc, valid-type]
        def _authorised(self) -> bool:
            if self.headers.get("Authorization", "") != f"Bearer {token}":
                self._send(403, {"detail": "Invalid v1 token"})
                return False
            return True

        def do_GET(self) -> None:
            if code is not None and self.path.rstrip("/") == "/api/status":
                self._send(code, {"detail": "Not found."})
                return
            super().do_GET()

    fake.server.RequestHandlerClass = Handler


def test_a_netbox_v2_token_is_sent_as_bearer(netbox: FakeNetBox, builds: dict) -> None:
    """NetBox 4.5's `nbt_<key>.<secret>` tokens: /api/status/ was asked with `Token nbt_...` (403 "Invalid v1
    token"), and the refusal said to give --kind, which went on to push with the header pynetbox sends."""
    _status_answer(netbox, None, V2_TOKEN)
    netbox.version = "4.5.2"
    code, out, err = run_cli(
        "sot", "push", str(builds["small"]), "--url", netbox.url, "--token", V2_TOKEN, "--dry-run"
    )
    assert code == 1 and "NetBox: " in out and "change(s) to write" in out, out + err
    code, _, err = run_cli("sot", "push", str(builds["small"]), "--url", netbox.url, "--token", "nbt_x.wrong")
    assert code == 1 and "answered HTTP 403" in err and "give --kind" not in err, err


def test_kind_is_advised_for_a_status_endpoint_that_is_not_there(netbox: FakeNetBox, builds: dict) -> None:
    _status_answer(netbox, 404, V2_TOKEN)
    code, _, err = run_cli("sot", "push", str(builds["small"]), "--url", netbox.url, "--token", V2_TOKEN)
    assert code == 1 and "answered HTTP 404" in err and "give --kind" in err, err
