"""`blueprint sot push` against a stand-in NetBox REST API (tests/sot/fake_netbox.py): what is written,
in which requests, and what reads back.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import run_cli
from fake_netbox import FakeNetBox
from sot_fixtures import builds, growth, netbox_rows  # noqa: F401  (fixtures)

TOKEN = "fake-token"


@pytest.fixture
def netbox() -> Iterator[FakeNetBox]:
    fake = FakeNetBox()
    yield fake
    fake.close()


def push(fake: FakeNetBox, build: Path, *extra: str) -> tuple[int, dict, str]:
    code, out, err = run_cli(
        "sot", "push", str(build), "--url", fake.url, "--token", TOKEN, "--format", "json", *extra
    )
    return code, (json.loads(out) if out.strip() else {}), err


def created(report: dict) -> dict[str, int]:
    return {kind: len(v["create"]) for kind, v in report["kinds"].items() if v["create"]}


def updated(report: dict) -> dict[str, int]:
    return {kind: len(v["update"]) for kind, v in report["kinds"].items() if v["update"]}


def cable_ends(fake: FakeNetBox) -> set[tuple[str, str, str, str, str]]:
    """(label, A device, A interface, B device, B interface) of every cable in the fake, by its ids."""
    interfaces, devices = fake.db["interfaces"], fake.db["devices"]

    def end(t: dict) -> tuple[str, str]:
        i = interfaces[t["object_id"]]
        return devices[i["device"]]["name"], i["name"]

    return {
        (c["label"], *end(c["a_terminations"][0]), *end(c["b_terminations"][0]))
        for c in fake.db["cables"].values()
    }


def planned_ends(build: Path) -> set[tuple[str, str, str, str, str]]:
    return {
        (r["label"], r["side_a_device"], r["side_a_name"], r["side_b_device"], r["side_b_name"])
        for r in netbox_rows(build, "cables.csv")
    }


def test_push_creates_the_build_and_adopts_what_the_site_has(netbox: FakeNetBox, builds: dict) -> None:
    # the site already has NVIDIA, a role under another colour, and the devicetype-library's SN5600
    nvidia = netbox.add("manufacturers", {"name": "NVIDIA", "slug": "nvidia"})
    netbox.add("device-roles", {"name": "compute-leaf", "slug": "compute-leaf", "color": "000000"})
    library = netbox.add(
        "device-types",
        {"manufacturer": nvidia["id"], "model": "SN5600", "slug": "nvidia-sn5600", "u_height": 2},
    )
    build = builds["small"]
    code, report, err = push(netbox, build)
    assert code == 0, err
    assert report["kinds"]["manufacturer"]["unchanged"] == 1 and created(report)["manufacturer"] == 1
    assert report["kinds"]["role"]["unchanged"] == 1
    assert [m["name"] for m in netbox.db["manufacturers"].values()].count("NVIDIA") == 1
    # the library's device type is used, not a parallel one
    assert [t["slug"] for t in netbox.db["device-types"].values()].count("nvidia-sn5600") == 1
    leaves = [d for d in netbox.db["devices"].values() if d["name"].startswith("c-leaf")]
    assert leaves and all(d["device_type"] == library["id"] for d in leaves)
    for kind, endpoint, name in (
        ("device", "devices", "devices.csv"),
        ("interface", "interfaces", "interfaces.csv"),
        ("cable", "cables", "cables.csv"),
        ("rack", "racks", "racks.csv"),
    ):
        assert len(netbox.db[endpoint]) == len(netbox_rows(build, name)), kind
    assert cable_ends(netbox) == planned_ends(build)
    # every device in its rack unit
    racks = {r["id"]: r["name"] for r in netbox.db["racks"].values()}
    placed = {(d["name"], racks.get(d.get("rack")), d.get("position")) for d in netbox.db["devices"].values()}
    planned = {
        (r["name"], r["rack"] or None, float(r["position"]) if r["position"] else None)
        for r in netbox_rows(build, "devices.csv")
    }
    assert placed == planned
    assert all(c["status"] == "planned" for c in netbox.db["cables"].values())


def test_second_push_writes_nothing_and_dry_run_never_writes(netbox: FakeNetBox, builds: dict) -> None:
    code, _, err = push(netbox, builds["small"], "--dry-run")
    assert code == 1, err  # changes to make
    assert netbox.writes() == []
    assert push(netbox, builds["small"])[0] == 0
    before = len(netbox.writes())
    code, report, err = push(netbox, builds["small"])
    assert code == 0, err
    assert len(netbox.writes()) == before, netbox.writes()[before:][:3]
    assert created(report) == {} and updated(report) == {}
    code, report, _ = push(netbox, builds["small"], "--dry-run")
    assert code == 0 and created(report) == {}


def test_grown_build_creates_only_the_additions(netbox: FakeNetBox, builds: dict, growth: dict) -> None:
    assert push(netbox, builds["small"])[0] == 0
    code, report, err = push(netbox, builds["grown"])
    assert code == 0, err
    summary = growth["summary"]
    made = created(report)
    assert made["device"] == summary["devices_added"]
    assert made["cable"] == summary["cables_added"]
    assert made["interface"] == 2 * summary["cables_added"]
    assert made["rack"] == summary["racks_added"]
    assert "manufacturer" not in made and "device_type" not in made and "role" not in made
    # relocated devices move; re-sized cables get their new length: nothing else is touched
    assert updated(report)["device"] == summary["devices_relocated"]
    assert updated(report)["cable"] == summary["cables_changed"]
    assert {tuple(fields) for fields in report["kinds"]["cable"]["update"].values()} == {("length",)}
    assert cable_ends(netbox) == planned_ends(builds["grown"])
    assert len(netbox.db["devices"]) == len(netbox_rows(builds["grown"], "devices.csv"))


def test_mark_connected_then_push_keeps_them_connected(netbox: FakeNetBox, builds: dict) -> None:
    code, report, err = push(netbox, builds["small"], "--mark-connected")
    assert code == 0, err
    assert report["connected"] == len(netbox_rows(builds["small"], "cables.csv"))
    assert {c["status"] for c in netbox.db["cables"].values()} == {"connected"}
    before = len(netbox.writes())
    code, report, _ = push(netbox, builds["small"], "--mark-connected")
    assert code == 0 and report["connected"] == 0 and len(netbox.writes()) == before


def test_writes_are_batched_lists(netbox: FakeNetBox, builds: dict) -> None:
    code, _, err = push(netbox, builds["small"], "--batch", "100")
    assert code == 0, err
    posts = [(path, body) for method, path, body in netbox.requests if method == "POST"]
    assert all(isinstance(body, list) and 1 <= len(body) <= 100 for _, body in posts)
    per_endpoint = Counter(path.split("/")[3] for path, _ in posts)
    interfaces = len(netbox_rows(builds["small"], "interfaces.csv"))
    assert per_endpoint["interfaces"] == -(-interfaces // 100)
    # and the progress says so
    code, out, err = run_cli("sot", "push", str(builds["grown"]), "--url", netbox.url, "--token", TOKEN)
    assert code == 0 and "cable: created" in err


def test_refusals_are_reported_not_raised(netbox: FakeNetBox, builds: dict, tmp_path: Path) -> None:
    code, _, err = run_cli("sot", "push", str(builds["small"]), "--url", netbox.url, "--token", "wrong")
    assert code == 1 and "answered HTTP 403" in err
    code, _, err = run_cli(
        "sot", "push", str(builds["small"]), "--url", netbox.url, "--token", "wrong", "--kind", "netbox"
    )
    # --kind: a status endpoint that refuses is warned about and the push goes on as that product
    assert code == 1 and "answered HTTP 403" in err and "NetBox refused" in err and "Traceback" not in err
    code, _, err = run_cli("sot", "push", str(tmp_path), "--url", netbox.url, "--token", TOKEN)
    assert code == 2 and "no NetBox files" in err
    code, _, err = run_cli("sot", "push", str(builds["small"]), "--url", "http://127.0.0.1:9", "--token", TOKEN)
    assert code == 1 and "could not be reached" in err
    # a file that is not what the build wrote: located
    bad = tmp_path / "bad"
    (bad / "cabling" / "netbox").mkdir(parents=True)
    for f in (builds["small"] / "cabling" / "netbox").iterdir():
        (bad / "cabling" / "netbox" / f.name).write_text(f.read_text())
    (bad / "cabling" / "netbox" / "racks.csv").write_text("site,name\ndc1,r1\n")
    code, _, err = run_cli("sot", "push", str(bad), "--url", netbox.url, "--token", TOKEN)
    assert code == 2 and "racks.csv:2" in err and "no column" in err


def test_a_rewired_cable_is_replaced_with_its_new_ends(netbox: FakeNetBox, builds: dict, tmp_path: Path) -> None:
    """Two cables swap their B ends (a re-cabled leaf): both are removed, then created on the new ends."""
    assert push(netbox, builds["small"])[0] == 0
    changed_build = tmp_path / "build"
    folder = changed_build / "cabling" / "netbox"
    folder.mkdir(parents=True)
    for f in (builds["small"] / "cabling" / "netbox").iterdir():
        (folder / f.name).write_text(f.read_text())
    rows = netbox_rows(changed_build, "cables.csv")
    first, second = rows[1], rows[2]
    assert first["side_b_device"] != second["side_b_device"] or first["side_b_name"] != second["side_b_name"]
    first_b = (first["side_b_device"], first["side_b_name"])
    first["side_b_device"], first["side_b_name"] = second["side_b_device"], second["side_b_name"]
    second["side_b_device"], second["side_b_name"] = first_b
    with open(folder / "cables.csv", "w", newline="") as fh:
        import csv

        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    code, report, err = push(netbox, changed_build)
    assert code == 0, err
    assert sorted(report["kinds"]["cable"]["update"]) == sorted([first["label"], second["label"]])
    deletes = [body for method, _, body in netbox.requests if method == "DELETE"]
    assert len(deletes) == 1 and len(deletes[0]) == 2
    assert cable_ends(netbox) == planned_ends(changed_build)
    assert push(netbox, changed_build)[1]["kinds"]["cable"]["update"] == {}
