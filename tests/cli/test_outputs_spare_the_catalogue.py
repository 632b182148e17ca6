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


@pytest.mark.parametrize("which", ["blueprint", "catalogue"])
@pytest.mark.parametrize("rel", ["cables.csv", "netbox/cables.csv"])
def test_cabling_never_replaces_its_input_even_with_force(tmp_path: Path, which: str, rel: str) -> None:
    out = tmp_path / "out"
    bp = write(tmp_path / "site", switch_catalog())
    (out / rel).parent.mkdir(parents=True)
    if which == "blueprint":  # the blueprint itself saved in DIR under a name cabling writes
        bp = bp.rename(out / rel)
        (out / rel).parent.joinpath("cat.yaml").write_text(switch_catalog(), encoding="utf-8")
    else:  # the catalogue file it names, DIR/rel as a hard link to it
        os.link(tmp_path / "site" / "cat.yaml", out / rel)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    code, _, err = run_cli("cabling", str(bp), "-o", str(out), "--force")
    assert code == 2 and "is also" in err and "nothing written" in err, err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_diff_never_replaces_a_catalogue_or_a_blueprint_it_read(tmp_path: Path) -> None:
    """`diff A B -o cat.yaml` replaced A's catalogue; `diff DIR/summary.txt B --work-order DIR --force`
    replaced the old blueprint saved in DIR under a work-order file's name."""
    bp = write(tmp_path / "site", switch_catalog())
    cat = tmp_path / "site" / "cat.yaml"
    before = cat.read_bytes()
    code, out, err = run_cli("diff", str(bp), str(bp), "-o", str(cat), "--force")  # without: "exists"
    assert code == 2 and "catalogue file OLD_BLUEPRINT names" in err, out + err
    assert cat.read_bytes() == before
    wo = tmp_path / "wo"
    wo.mkdir()
    old = wo / "summary.txt"
    old.write_bytes(bp.read_bytes())
    (wo / "cat.yaml").write_bytes(before)
    code, out, err = run_cli("diff", str(old), str(bp), "--work-order", str(wo), "--force", "-q")
    assert code == 2 and "is also OLD_BLUEPRINT" in err, out + err
    assert old.read_bytes() == bp.read_bytes() and sorted(p.name for p in wo.iterdir()) == [
        "cat.yaml",
        "summary.txt",
    ]
    code, out, err = run_cli("diff", str(bp), str(bp), "-o", str(tmp_path / "report"))
    assert code == 0 and (tmp_path / "report").is_file(), out + err
