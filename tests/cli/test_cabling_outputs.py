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
