"""Line ends of a build's NetBox files as `sot push` and `sot csv` read them (review b170 f2): a file whose
lines end in CR alone (classic Mac OS, Excel for Mac's "CSV (Macintosh)") was refused by `sot push` with
the csv module's advice to open the file in universal-newline mode, and `sot csv` took the whole file for
its header line: no numbered devices file, exit 0. Both now refuse it at its file; a CR inside a quoted
cell (csv.writer writes one so) stays text for both."""

from __future__ import annotations

import csv
from pathlib import Path

from conftest import run_cli
from sot_fixtures import builds, netbox_rows  # noqa: F401  (fixtures)
from test_sot_untrusted import copy_build, rewrite


def _push(build: Path, *options: str) -> tuple[int, str, dict[str, str]]:
    """Exit code, standard error and each device's description the stand-in NetBox then holds."""
    from fake_netbox import FakeNetBox

    fake = FakeNetBox()
    try:
        code, _, err = run_cli("sot", "push", str(build), "--url", fake.url, "--token", "fake-token", *options)
        held = {d["name"]: d.get("description") for d in fake.db["devices"].values()}
    finally:
        fake.close()
    return code, err, held


def test_lines_ended_by_cr_alone_are_refused_by_push_and_csv(builds: dict, tmp_path: Path) -> None:
    build = copy_build(builds["small"], tmp_path / "build")
    devices = build / "cabling" / "netbox" / "devices.csv"
    devices.write_bytes(devices.read_bytes().replace(b"\n", b"\r"))
    code, _, err = run_cli("sot", "csv", str(build), "-o", str(tmp_path / "out"))
    assert code == 2, err
    assert "devices.csv:1" in err and "carriage return alone" in err, err
    assert not (tmp_path / "out").exists()
    code, err, held = _push(build, "--dry-run")
    assert code == 2 and not held, err
    assert "devices.csv:1" in err and "carriage return alone" in err, err


def test_a_cr_inside_a_quoted_cell_is_text(builds: dict, tmp_path: Path) -> None:
    build = copy_build(builds["small"], tmp_path / "build")
    first = netbox_rows(build, "devices.csv")[0]["name"]

    def describe(row: dict[str, str]) -> None:
        if row["name"] == first:
            row["description"] = "rack\rtop"

    rewrite(build, "devices.csv", describe)
    assert b'"rack\rtop"' in (build / "cabling" / "netbox" / "devices.csv").read_bytes()
    code, err, held = _push(build)
    assert code == 0, err
    assert held[first] == "rack\rtop"
    code, _, err = run_cli("sot", "csv", str(build), "-o", str(tmp_path / "out"))
    assert code == 0, err
    (written,) = (tmp_path / "out").glob("??-devices.csv")
    with written.open(encoding="utf-8", newline="") as fh:
        assert {r["name"]: r["description"] for r in csv.DictReader(fh)}[first] == "rack\rtop"
