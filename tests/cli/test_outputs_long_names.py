"""A legal output file name of 246 to 255 bytes is written (review b180): the temporary sibling was named
`.NAME.` plus mkstemp's 8 characters, over the file system's 255-byte limit (NAME_MAX), so `schema -o
<250 characters>.json` was refused with "File name too long", blaming the folder, though the name itself
is legal. The temporary name now carries at most 200 bytes of it."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli

from generator.fsutil import atomic_write_files


@pytest.mark.parametrize("force", [False, True])
@pytest.mark.parametrize("stem", ["n" * 250, "é" * 125])  # 255 bytes, the limit: ASCII, and two-byte UTF-8
def test_a_long_legal_name_is_written(tmp_path: Path, stem: str, force: bool) -> None:
    name = stem + ".json"[: 255 - len(stem.encode())]
    target = tmp_path / name
    assert len(name.encode()) == 255
    code, out, err = run_cli("schema", "-o", str(target), *(["--force"] if force else []))
    assert code == 0, out + err
    assert target.stat().st_size > 0 and [p.name for p in tmp_path.iterdir()] == [name]


def test_a_set_of_files_with_a_long_name(tmp_path: Path) -> None:
    name = "c" * 255
    atomic_write_files(tmp_path, {name: b"one\n", "short.csv": b"two\n"})
    assert (tmp_path / name).read_bytes() == b"one\n" and sorted(p.name for p in tmp_path.iterdir()) == [
        name,
        "short.csv",
    ]


def test_a_name_over_the_limit_is_still_refused_located(tmp_path: Path) -> None:
    target = tmp_path / ("n" * 256)
    code, out, err = run_cli("schema", "-o", str(target))
    assert code == 2 and "File name too long" in err, out + err
    assert list(tmp_path.iterdir()) == []
