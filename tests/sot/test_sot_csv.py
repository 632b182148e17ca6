"""`blueprint sot csv`: the NetBox files cut for the bulk import, numbered in import order, and the
"new objects only" files of a grown build."""

from __future__ import annotations

import csv
from pathlib import Path

from conftest import run_cli
from generator.emit.cabling.netbox import CHUNK_ROWS, IMPORT_ORDER, MAX_CHUNK_ROWS
from sot_fixtures import builds, growth, netbox_rows  # noqa: F401  (fixtures)


def read(path: Path) -> tuple[list[str], list[list[str]]]:
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    return rows[0], rows[1:]


def by_file(folder: Path) -> dict[str, list[Path]]:
    """The chunk files per original file name, in name order."""
    out: dict[str, list[Path]] = {}
    for path in sorted(folder.iterdir()):
        step, rest = path.name.split("-", 1)
        original = IMPORT_ORDER[int(step) - 1]
        assert rest.startswith(original.removesuffix(".csv")), path.name
        out.setdefault(original, []).append(path)
    return out


def test_chunks_hold_every_row_once_in_import_order(builds: dict, tmp_path: Path) -> None:
    out = tmp_path / "import"
    code, _, err = run_cli("sot", "csv", str(builds["grown"]), "-o", str(out))
    assert code == 0, err
    files = by_file(out)
    assert list(files) == list(IMPORT_ORDER)  # name order is import order
    for name, paths in files.items():
        limit = CHUNK_ROWS.get(name, MAX_CHUNK_ROWS)
        header, whole = read(builds["grown"] / "cabling" / "netbox" / name)
        rows: list[list[str]] = []
        for path in paths:
            h, part = read(path)
            assert h == header and 1 <= len(part) <= limit, path.name
            rows.extend(part)
        assert rows == whole, name
    # the cables need several files at 60 rows each
    assert len(files["cables.csv"]) == -(-len(netbox_rows(builds["grown"], "cables.csv")) // 60)


def test_new_only_files_hold_exactly_the_additions(builds: dict, growth: dict, tmp_path: Path) -> None:
    out = tmp_path / "new"
    code, _, err = run_cli("sot", "csv", str(builds["grown"]), "--since", str(builds["small"]), "-o", str(out))
    assert code == 0, err
    files = by_file(out)
    rows = {name: [r for p in paths for r in read(p)[1]] for name, paths in files.items()}
    assert len(rows["devices.csv"]) == growth["summary"]["devices_added"]
    assert len(rows["cables.csv"]) == growth["summary"]["cables_added"]
    assert len(rows["racks.csv"]) == growth["summary"]["racks_added"]
    assert {r[8] for r in rows["cables.csv"]} == {c["id"] for c in growth["cables"]["added"]}
    assert "manufacturers.csv" not in files and "sites.csv" not in files  # nothing new there


def test_output_folder_is_never_overwritten_without_force(builds: dict, tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    code, _, err = run_cli("sot", "csv", str(builds["small"]), "-o", str(out))
    assert code == 2 and "not empty" in err
    assert (out / "notes.txt").read_text() == "mine"
    code, _, err = run_cli("sot", "csv", str(builds["small"]), "-o", str(out), "--force", "--rows", "1000")
    assert code == 0, err
    assert not (out / "notes.txt").exists() and (out / "09-cables.csv").is_file()
    code, _, err = run_cli("sot", "csv", str(builds["small"]), "-o", str(out), "--rows", "5000")
    assert code == 2 and "--rows" in err
