"""`blueprint sot csv` / `sot push` with the text a build's CSVs may hold (review h140): characters
str.splitlines takes for line breaks, a spreadsheet's byte-order mark, cells that start with a quote."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from conftest import run_cli
from sot_fixtures import builds, netbox_rows  # noqa: F401  (fixtures)
from test_sot_untrusted import copy_build, rewrite


@pytest.mark.parametrize("breaks", ["\u2028", "\x85", "\x0c", "\x0b", "\u2029\x1c"])
def test_a_cell_holding_what_splitlines_breaks_at_stays_in_its_row(
    builds: dict, tmp_path: Path, breaks: str
) -> None:
    """csv_records cut a row at U+2028, NEL, FF or VT (str.splitlines): one device's row went to two
    numbered files, each a broken import."""
    build = copy_build(builds["small"], tmp_path / "build")
    first = netbox_rows(build, "devices.csv")[0]["name"]

    def describe(row: dict[str, str]) -> None:
        if row["name"] == first:
            row["description"] = f"rack{breaks}top"

    rewrite(build, "devices.csv", describe)
    code, _, err = run_cli("sot", "csv", str(build), "-o", str(tmp_path / "out"), "--rows", "1")
    assert code == 0, err
    devices = sorted((tmp_path / "out").glob("??-devices-*.csv"))
    assert len(devices) == len(netbox_rows(build, "devices.csv"))
    for path in devices:
        rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
        assert len(rows) == 2 and len(rows[1]) == len(rows[0]), (path.name, rows)
    shown = [list(csv.DictReader(p.open(encoding="utf-8", newline="")))[0] for p in devices]
    assert {r["name"]: r["description"] for r in shown}[first] == f"rack{breaks}top"


def test_a_csv_saved_with_a_byte_order_mark_reads_as_without(builds: dict, tmp_path: Path) -> None:
    """Excel's "CSV UTF-8" starts the file with U+FEFF: `sot push` refused it (`no column name`) and `sot csv`
    copied it into every numbered file, in front of the header and, after the first, into its middle."""
    from fake_netbox import FakeNetBox

    build = copy_build(builds["small"], tmp_path / "build")
    for path in (build / "cabling" / "netbox").glob("*.csv"):
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    fake = FakeNetBox()
    try:
        code, out, err = run_cli(
            "sot",
            "push",
            str(build),
            "--url",
            fake.url,
            "--token",
            "fake-token",
            "--dry-run",
            "--format",
            "json",
        )
    finally:
        fake.close()
    assert code == 1 and '"applied": false' in out, err
    for given in (builds["small"], build):
        code, _, err = run_cli(
            "sot", "csv", str(given), "-o", str(tmp_path / given.name / "out"), "--rows", "7"
        )
        assert code == 0, err
    plain, marked = tmp_path / builds["small"].name / "out", tmp_path / "build" / "out"
    assert sorted(p.name for p in marked.iterdir()) == sorted(p.name for p in plain.iterdir())
    for path in marked.iterdir():
        assert path.read_bytes() == (plain / path.name).read_bytes(), path.name


# What a catalogue or plan may name (a cell a spreadsheet would evaluate, one that starts with the prefix
# itself, a number): each must reach NetBox as it is, by `sot push` and by `sot csv`'s import files alike.
SPREADSHEET_TEXT = [
    "'=quoted box",
    '=HYPERLINK("http://x/")',
    "\tTabbed",
    "'",
    "''x",
    "-3",
    "-Acme",
    "@SUM(A1)",
]


def test_the_spreadsheet_prefix_is_reversed_exactly(builds: dict, tmp_path: Path) -> None:
    """csv_cell left a text that already started with ' alone and the reader took one ' off (`'=quoted box`
    was pushed as `=quoted box`), a prefixed TAB was pushed with its ', and `sot csv` gave NetBox's importer
    the prefixed names (stored as `'-Acme` where the push stored `-Acme`). Each cell is written as the
    build's NetBox writer writes it (SPREADSHEET_PREFIX: as it is since review h154 f6, when the reader
    still took a `'` off `'=quoted box`, review b170 f1)."""
    from fake_netbox import FakeNetBox
    from generator.emit.cabling.netbox import SPREADSHEET_PREFIX
    from generator.safetext import csv_cell

    def written(text: str) -> str:
        return csv_cell(text) if SPREADSHEET_PREFIX else text

    build = copy_build(builds["small"], tmp_path / "build")
    names = [r["name"] for r in netbox_rows(build, "devices.csv")][: len(SPREADSHEET_TEXT)]
    meant = dict(zip(names, SPREADSHEET_TEXT, strict=True))

    def describe(row: dict[str, str]) -> None:
        if row["name"] in meant:
            row["description"] = written(meant[row["name"]])

    rewrite(build, "devices.csv", describe)
    fake = FakeNetBox()
    try:
        code, _, err = run_cli("sot", "push", str(build), "--url", fake.url, "--token", "fake-token")
        pushed = {d["name"]: d.get("description") for d in fake.db["devices"].values() if d["name"] in meant}
    finally:
        fake.close()
    assert code == 0, err
    assert pushed == meant
    code, _, err = run_cli("sot", "csv", str(build), "-o", str(tmp_path / "out"))
    assert code == 0, err
    (devices,) = (tmp_path / "out").glob("??-devices.csv")
    imported = {
        r["name"]: r["description"] for r in csv.DictReader(devices.open(encoding="utf-8", newline=""))
    }
    assert {name: imported[name] for name in meant} == meant
