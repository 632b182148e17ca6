"""A folder of per-device LLDP files: an entry named like one that is not a regular file is refused by name,
not skipped (skipped, its device's cables were all reported MISSING)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from vfy_plans import TINY, plan_of, run_cli

from generator.emit import lldp as emitter
from generator.verify.check import verify
from generator.verify.model import DiscoveryError


def _folder(tmp_path: Path) -> tuple[Path, list[str]]:
    folder = tmp_path / "lldp"
    folder.mkdir()
    files = emitter.render_lldp(plan_of(TINY), "management")
    for name, text in files.items():
        (folder / name).write_text(text)
    assert verify(plan_of(TINY), "management", folder).clean
    return folder, sorted(files)


@pytest.mark.parametrize("kind", ["fifo", "broken-link", "folder"])
def test_an_entry_that_is_not_a_regular_file_is_refused_by_name(tmp_path: Path, kind: str) -> None:
    folder, names = _folder(tmp_path)
    entry = folder / names[0]
    entry.unlink()
    if kind == "fifo":
        os.mkfifo(entry)  # opened, it would block: the reader refuses it before opening
    elif kind == "broken-link":
        entry.symlink_to(tmp_path / "gone.json")
    else:
        entry.mkdir()
    with pytest.raises(DiscoveryError, match=f"^{entry}: "):
        verify(plan_of(TINY), "management", folder)
    code, out, err = run_cli(
        "verify-cabling", str(TINY), "--fabric", "management", "--discovered", str(folder)
    )
    assert code == 2 and str(entry) in err and "MISSING" not in out, out + err
