"""`blueprint cabling` end to end on the reference example: files, stdout modes, errors, reproducibility."""

from __future__ import annotations

from pathlib import Path

import pytest
from cabling_plans import EXAMPLES, SUPERPOD, plan_of
from conftest import run_cli

from generator.emit.cabling.netbox import IMPORT_ORDER


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("cabling")
    one, two = base / "one", base / "two"
    for out in (one, two):
        code, _out, err = run_cli("cabling", str(SUPERPOD), "-o", str(out))
        assert code == 0, err
    return one, two


def test_all_formats_tree(written: tuple[Path, Path]) -> None:
    files = _tree(written[0])
    expected = {
        "cables.csv",
        "bom.csv",
        "labels.csv",
        "cabling.xlsx",
        *(f"netbox/{n}" for n in IMPORT_ORDER),
        "ibnetdiscover/compute.net",
        "ibnetdiscover/storage.net",
        "lldp/management.json",  # every management switch in one file
    }
    assert set(files) == expected
    assert not [p for p in written[0].parent.iterdir() if p.name.startswith(".")], "no temporary leftovers"


def test_two_runs_are_byte_identical(written: tuple[Path, Path]) -> None:
    one, two = _tree(written[0]), _tree(written[1])
    assert one.keys() == two.keys()
    assert [k for k in one if one[k] != two[k]] == []


def test_rewrite_into_existing_directory_keeps_other_files(
    written: tuple[Path, Path], tmp_path: Path
) -> None:
    out = tmp_path / "existing"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    code, _o, err = run_cli("cabling", str(SUPERPOD), "--format", "csv", "-o", str(out))
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir()) == ["bom.csv", "cables.csv", "labels.csv", "notes.txt"]
    assert (out / "cables.csv").read_bytes() == (written[0] / "cables.csv").read_bytes()


def test_single_format_to_directory(tmp_path: Path, written: tuple[Path, Path]) -> None:
    code, _o, err = run_cli("cabling", str(SUPERPOD), "--format", "netbox", "-o", str(tmp_path / "nb"))
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "nb").iterdir()) == sorted(IMPORT_ORDER)
    assert (tmp_path / "nb" / "cables.csv").read_bytes() == (
        written[0] / "netbox" / "cables.csv"
    ).read_bytes()


def test_stdout_formats(written: tuple[Path, Path]) -> None:
    code, out, err = run_cli("cabling", str(SUPERPOD), "--format", "csv")
    assert code == 0, err
    assert out == (written[0] / "cables.csv").read_text()
    code, out, err = run_cli("cabling", str(SUPERPOD), "--format", "ibnetdiscover")
    assert code == 0 and "--fabric" in err
    assert out == (written[0] / "ibnetdiscover" / "compute.net").read_text()
    code, out, _ = run_cli("cabling", str(SUPERPOD), "--format", "ibnetdiscover", "--fabric", "storage")
    assert code == 0
    assert out == (written[0] / "ibnetdiscover" / "storage.net").read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--format", "xlsx"), "give -o DIR"),
        ((), "give -o DIR"),
        (("--format", "lldp", "--fabric", "compute", "-o", "never-written"), "not an Ethernet/RoCE fabric"),
        (("--format", "csv", "--fabric", "compute"), "--fabric applies to"),
        (("--fabric", "compute", "-o", "never-written"), "--fabric applies to"),
    ],
)
def test_usage_errors(args: tuple[str, ...], message: str) -> None:
    code, out, err = run_cli("cabling", str(SUPERPOD), *args)
    assert code == 2
    assert message in err and out == ""
    assert "Traceback" not in err
    assert not Path("never-written").exists()


def test_unusable_inputs(tmp_path: Path) -> None:
    code, _o, err = run_cli("cabling", str(tmp_path / "missing.yaml"), "-o", str(tmp_path / "x"))
    assert code == 2 and "no such file" in err
    bad = tmp_path / "bad.yaml"
    bad.write_text(SUPERPOD.read_text().replace("rows: 6", "rows: -6"))
    code, _o, err = run_cli("cabling", str(bad), "-o", str(tmp_path / "x"))
    assert code == 2 and "bad.yaml" in err
    assert not (tmp_path / "x").exists(), "nothing is written for an unusable blueprint"
    target = tmp_path / "file"
    target.write_text("")
    code, _o, err = run_cli("cabling", str(SUPERPOD), "--format", "csv", "-o", str(target))
    assert code == 2 and "not a directory" in err


def test_blueprint_without_cables(tmp_path: Path) -> None:
    uncabled = [p for p in sorted(EXAMPLES.glob("*.yaml")) if not plan_of(p).links]
    if not uncabled:
        pytest.skip("every example has cables")
    code, out, err = run_cli("cabling", str(uncabled[0]), "-o", str(tmp_path / "x"))
    assert code == 2 and "no physical cables" in err and out == ""
    assert not (tmp_path / "x").exists()


def test_bytes_do_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    """Two processes with different PYTHONHASHSEED (set/dict-order bugs show up here, not in-process)."""
    import os
    import subprocess
    import sys

    example = EXAMPLES / "hdr-fat-tree-a100.yaml"
    example = example if example.exists() else SUPERPOD
    trees = []
    for seed in ("1", "2"):
        out = tmp_path / f"seed{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run(
            [sys.executable, "-m", "generator.cli", "cabling", str(example), "-o", str(out)],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, proc.stderr
        trees.append(_tree(out))
    assert trees[0].keys() == trees[1].keys() and len(trees[0]) > 10
    assert [k for k in trees[0] if trees[0][k] != trees[1][k]] == []
