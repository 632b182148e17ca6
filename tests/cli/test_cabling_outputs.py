"""`blueprint cabling -o DIR` into a folder that exists: its files are replaced as one set, never through a
symbolic link out of DIR (a cables.csv of one plan beside the labels and NetBox files of another was left by
a refusal part-way, under "nothing written"; a symlinked subfolder had files outside DIR overwritten)."""

from __future__ import annotations

from pathlib import Path

from conftest import EXAMPLES, run_cli


def test_a_refusal_part_way_leaves_the_earlier_set(tmp_path: Path) -> None:
    out = tmp_path / "c"
    assert run_cli("cabling", str(EXAMPLES / "hdr-fat-tree-a100.yaml"), "-o", str(out), "-q")[0] == 0
    kept = {p: p.read_bytes() for p in out.rglob("*") if p.is_file() and p.name != "labels.csv"}
    (out / "labels.csv").unlink()
    (out / "labels.csv").mkdir()
    code, _, err = run_cli("cabling", str(EXAMPLES / "roce-rail-2tier.yaml"), "-o", str(out))
    assert code == 2 and "labels.csv" in err, err
    assert {p: p.read_bytes() for p in kept} == kept


def test_a_symlinked_subfolder_is_not_written_through(tmp_path: Path) -> None:
    out, outside = tmp_path / "c", tmp_path / "outside"
    out.mkdir()
    outside.mkdir()
    (outside / "compute.json").write_text("mine\n")
    (out / "lldp").symlink_to(outside)
    code, _, err = run_cli("cabling", str(EXAMPLES / "roce-rail-2tier.yaml"), "-o", str(out))
    assert code == 2 and "symbolic link" in err, err
    assert (outside / "compute.json").read_text() == "mine\n"
    assert not (out / "cables.csv").exists()


def test_a_file_of_the_same_name_is_not_replaced_without_force(tmp_path: Path) -> None:
    """`cabling -o DIR` replaced the user's own cables.csv in DIR without a word (found by a fuzzing review).
    A file of the same name is now replaced with --force only (as `sm-guids` does), other files are left
    alone, and a generate build's cabling folder, as its manifest records it, is refreshed freely."""
    bp = str(EXAMPLES / "roce-rail-2tier.yaml")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "cables.csv").write_text("my notes\n")
    (mine / "notes.txt").write_text("kept\n")
    code, _, err = run_cli("cabling", bp, "-o", str(mine))
    assert code == 2 and "cables.csv" in err and "--force" in err and "nothing written" in err, err
    assert (mine / "cables.csv").read_text() == "my notes\n" and not (mine / "bom.csv").exists()
    assert run_cli("cabling", bp, "-o", str(mine), "--force")[0] == 0
    assert (mine / "cables.csv").read_text() != "my notes\n" and (mine / "notes.txt").read_text() == "kept\n"
    build = tmp_path / "build"
    assert run_cli("generate", bp, "-o", str(build), "--quiet")[0] == 0
    code, _, err = run_cli("cabling", bp, "-o", str(build / "cabling"))
    assert code == 0, err
    with (build / "cabling" / "bom.csv").open("a") as fh:
        fh.write("an edit\n")
    code, _, err = run_cli("cabling", bp, "-o", str(build / "cabling"))
    assert code == 2 and "bom.csv" in err, err
