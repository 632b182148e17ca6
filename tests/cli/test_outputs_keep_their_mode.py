"""A file replaced with --force keeps its permission bits: `chmod 600 report.txt` then `--force` made it
0644 (the umask default of a new file), opening a private report to every user of the machine."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from conftest import run_cli

from generator.fsutil import atomic_write_files, atomic_write_text

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "hdr-fat-tree-a100.yaml"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_report_replaced_with_force_keeps_its_mode(tmp_path: Path) -> None:
    out = tmp_path / "report.txt"
    out.write_text("mine\n")
    os.chmod(out, 0o600)
    code, _, err = run_cli("validate", str(EXAMPLE), "-o", str(out), "--force")
    assert code == 0, err
    assert out.read_text() != "mine\n"
    assert _mode(out) == 0o600


def test_the_writers_keep_a_replaced_files_mode_and_give_a_new_one_the_umask_default(tmp_path: Path) -> None:
    old = tmp_path / "old.txt"
    old.write_text("x")
    os.chmod(old, 0o640)
    atomic_write_text(old, "y")
    folder = tmp_path / "set"
    folder.mkdir()
    (folder / "a.csv").write_text("x")
    os.chmod(folder / "a.csv", 0o600)
    atomic_write_files(folder, {"a.csv": b"y", "b.csv": b"z"})
    mask = os.umask(0)
    os.umask(mask)
    assert (_mode(old), _mode(folder / "a.csv")) == (0o640, 0o600)
    assert _mode(folder / "b.csv") == 0o666 & ~mask
    new = tmp_path / "new.txt"
    atomic_write_text(new, "n", replace=False)
    assert _mode(new) == 0o666 & ~mask
