"""`sot push` asks the server which product and release it is before it writes: a NetBox before the device's
`role` field (3.6) or a Nautobot before Locations (2.0) would refuse the push halfway through, and a `--kind`
naming the other product wrote to endpoints the server does not have."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from conftest import run_cli
from fake_netbox import FakeNetBox
from sot_fixtures import builds, growth, netbox_rows  # noqa: F401  (fixtures)

from generator.sot.backends import SotError, release_check


@pytest.fixture
def netbox() -> Iterator[FakeNetBox]:
    fake = FakeNetBox()
    yield fake
    fake.close()


def _push(fake: FakeNetBox, build, *extra: str) -> tuple[int, str, str]:
    return run_cli("sot", "push", str(build), "--url", fake.url, "--token", "fake-token", *extra)


def test_a_netbox_before_the_role_field_is_refused_before_any_write(netbox: FakeNetBox, builds: dict) -> None:
    netbox.version = "3.5.9"
    code, out, err = _push(netbox, builds["small"])
    assert code == 1, out + err
    assert "NetBox 3.5.9 is older than 3.6" in err and "sot csv" in err, err
    assert netbox.writes() == []
    assert [p for m, p, _ in netbox.requests if m == "GET"] == ["/api/status/"]


def test_a_release_the_push_was_not_written_for_is_warned_and_pushed(netbox: FakeNetBox, builds: dict) -> None:
    netbox.version = "5.0.1"
    code, out, err = _push(netbox, builds["small"], "--format", "json")
    assert code == 0, out + err
    assert "NetBox 5.0.1" in err and "written against NetBox 4.x" in err, err
    assert json.loads(out)["product"] == "NetBox" and netbox.writes()


def test_a_kind_naming_the_other_product_is_refused(netbox: FakeNetBox, builds: dict) -> None:
    code, out, err = _push(netbox, builds["small"], "--kind", "nautobot")
    assert code == 1, out + err
    assert "--kind nautobot, but" in err and "is NetBox 4.4.10" in err, err
    assert netbox.writes() == []


def test_a_kind_given_goes_on_where_the_status_cannot_be_read(netbox: FakeNetBox, builds: dict) -> None:
    """A proxy keeping /api/status/ from the token's user: --kind pushed before the release check, and still
    does, warned; without --kind the 403 is refused as the token's (the advice to give --kind is for a status
    endpoint that is not there or not JSON: tests/sot/test_sot_push_safety.py)."""
    netbox.version = None
    code, out, err = _push(netbox, builds["small"])
    assert code == 1 and "answered HTTP 403" in err and "give --kind" not in err, out + err
    assert netbox.writes() == []
    code, out, err = _push(netbox, builds["small"], "--kind", "netbox")
    assert code == 0 and "the release is not checked, pushing as --kind netbox" in err, out + err
    assert netbox.writes()


def test_a_version_the_tool_cannot_read_is_said_on_one_line(netbox: FakeNetBox, builds: dict) -> None:
    netbox.version = "\x1b]0;PWNED\x07devel\nNetBox 4.4.10: MATCHES"
    code, out, err = _push(netbox, builds["small"], "--dry-run")
    assert code in (0, 1), out + err  # a dry run with changes exits 1
    warning = next(line for line in err.splitlines() if "cannot read" in line)
    assert "\x1b" not in err and "\x07" not in err and "MATCHES" in warning, err


@pytest.mark.parametrize(
    ("product", "version", "outcome"),
    [
        ("netbox", "3.6.0", "warn"),  # `role` exists; the backend is written against 4.x
        ("netbox", "4.0.0", ""),
        ("netbox", "v4.4.10-Docker-3.4.1", ""),
        ("netbox", "3.5.9", "refuse"),
        ("nautobot", "1.6.30", "refuse"),  # Sites and DeviceRoles, no Locations of type Site
        ("nautobot", "2.0.0", ""),
        ("nautobot", "3.2.7", ""),  # the release tests/sot/test_nautobot_live.py runs
        ("nautobot", "4.0.0", "warn"),
        ("nautobot", "unknown", "warn"),
    ],
)
def test_release_check(product: str, version: str, outcome: str) -> None:
    if outcome == "refuse":
        with pytest.raises(SotError, match="older than"):
            release_check(product, version)
    else:
        assert bool(release_check(product, version)) == (outcome == "warn")
