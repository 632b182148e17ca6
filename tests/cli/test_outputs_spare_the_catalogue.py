"""An input is never an output (review h154 f1, f2): `plan BP -o cat.yaml` and `topology BP -o cat.yaml`
replaced the catalogue file the blueprint's `catalog:` names, without --force; `cabling BP -o DIR --force`
replaced the blueprint (or its catalogue) when it lay in DIR under a name cabling writes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import run_cli
from small_ib_site import switch_catalog, write


@pytest.mark.parametrize("command", ["plan", "topology"])
def test_a_report_never_replaces_the_catalogue(tmp_path: Path, command: str) -> None:
    bp = write(tmp_path / "site", switch_catalog())
    cat = tmp_path / "site" / "cat.yaml"  # found from the blueprint's folder, not the working folder
    before = cat.read_bytes()
    code, out, err = run_cli(command, str(bp), "-o", str(cat))
    assert code == 2 and "catalogue file BLUEPRINT names" in err and "nothing written" in err, out + err
    assert cat.read_bytes() == before
    linked = tmp_path / "other-name.yaml"  # the same file under another name
    os.link(cat, linked)
    code, out, err = run_cli(command, str(bp), "-o", str(linked))
    assert code == 2 and "catalogue file" in err, out + err
    assert cat.read_bytes() == before
    code, out, err = run_cli(command, str(bp), "-o", str(tmp_path / "report"))
    assert code == 0 and (tmp_path / "report").is_file(), out + err
