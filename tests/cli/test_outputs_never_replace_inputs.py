"""`-o` (and `--write`, `--work-order`) never replace what the command reads, and a refused output leaves
nothing written: `plan bp -o bp`, `topology bp -o bp`, `diff A B -o B` replaced the blueprint with the report;
`advise -o x --write x` lost the advice; a refused work order left the report written and a work order
folder of two changes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli


def _bp(tmp_path: Path, name: str = "bp.yaml", example: str = "hypercube-research") -> Path:
    path = tmp_path / name
    shutil.copyfile(EXAMPLES / f"{example}.yaml", path)
    return path


@pytest.mark.parametrize("command", ["plan", "topology"])
def test_a_report_never_replaces_its_blueprint(tmp_path: Path, command: str) -> None:
    bp = _bp(tmp_path)
    before = bp.read_bytes()
    code, out, err = run_cli(command, str(bp), "-o", str(bp))
    assert code == 2 and "is also BLUEPRINT" in err, out + err
    assert bp.read_bytes() == before


def test_diff_never_replaces_either_blueprint(tmp_path: Path) -> None:
    old, new = _bp(tmp_path, "old.yaml"), _bp(tmp_path, "new.yaml")
    for target in (old, new):
        before = target.read_bytes()
        code, out, err = run_cli("diff", str(old), str(new), "-o", str(target))
        assert code == 2 and "would replace" in err, out + err
        assert target.read_bytes() == before


def test_advise_keeps_the_advice_and_the_starter_apart(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    code, out, err = run_cli("advise", "--params", "7e9", "-o", str(path), "--write", str(path))
    assert code == 2 and "would replace" in err, out + err
    assert not path.exists()


def _grown(tmp_path: Path) -> tuple[Path, Path]:
    old = _bp(tmp_path, "old.yaml", "roce-rail-2tier")
    new = tmp_path / "new.yaml"
    text = old.read_text()
    assert "    count: 64\n" in text
    new.write_text(text.replace("    count: 64\n", "    count: 65\n", 1))
    return old, new


def test_a_refused_work_order_writes_neither_it_nor_the_report(tmp_path: Path) -> None:
    old, new = _grown(tmp_path)
    wo = tmp_path / "wo"
    code, _, err = run_cli("diff", str(old), str(new), "--work-order", str(wo))
    assert code == 1, err
    kept = {p.name: p.read_bytes() for p in wo.iterdir()}
    # the next change, into the same folder, where summary.txt cannot be written
    (wo / "summary.txt").unlink()
    (wo / "summary.txt").mkdir()
    newer = tmp_path / "newer.yaml"
    newer.write_text(new.read_text().replace("    count: 65\n", "    count: 66\n", 1))
    report = tmp_path / "report.txt"
    code, _, err = run_cli("diff", str(old), str(newer), "--work-order", str(wo), "-o", str(report))
    assert code == 2 and "summary.txt" in err, err
    assert not report.exists()
    for name, data in kept.items():  # no file of the second change beside the first's
        if name != "summary.txt":
            assert (wo / name).read_bytes() == data, name


VERIFY = Path(__file__).resolve().parent.parent / "verify" / "fixtures"
RESULTS = Path(__file__).resolve().parent.parent / "perf" / "data" / "nccl_tests"


@pytest.mark.parametrize("which", ["blueprint", "dump"])
def test_verify_cabling_never_replaces_what_it_reads(tmp_path: Path, which: str) -> None:
    """`verify-cabling bp --discovered dump -o bp` (or `-o dump`) replaced the file with the report."""
    bp = tmp_path / "tiny-ndr.yaml"
    dump = tmp_path / "tiny.ibnetdiscover"
    shutil.copyfile(VERIFY / "tiny-ndr.yaml", bp)
    shutil.copyfile(VERIFY / "tiny-ndr-compute-sim-hdr.ibnetdiscover", dump)
    target = bp if which == "blueprint" else dump
    before = target.read_bytes()
    args = ("verify-cabling", str(bp), "--discovered", str(dump), "--sim-speed", "HDR")
    code, out, err = run_cli(*args, "-o", str(target))
    assert code == 2 and "would replace that file (nothing written)" in err, out + err
    assert target.read_bytes() == before
    code, out, err = run_cli(*args, "-o", str(tmp_path / "report.txt"))
    assert code == 0 and (tmp_path / "report.txt").is_file(), out + err


def test_verify_cabling_never_replaces_a_device_file_of_an_lldp_folder(tmp_path: Path) -> None:
    folder = tmp_path / "lldp"
    folder.mkdir()
    device = folder / "leaf01.json"
    device.write_text('{"lldp": {"interface": []}}')
    code, out, err = run_cli(
        "verify-cabling",
        str(EXAMPLES / "roce-rail-2tier.yaml"),
        "--discovered",
        str(folder),
        "-o",
        str(device),
    )
    assert code == 2 and "is also --discovered" in err, out + err
    assert device.read_text() == '{"lldp": {"interface": []}}'


@pytest.mark.parametrize("option", ["-o", "--calibrate"])
def test_acceptance_report_never_replaces_a_measurement(tmp_path: Path, option: str) -> None:
    """`acceptance-report --results r -o r/run.log` replaced the nccl-tests output with the report."""
    results = tmp_path / "r"
    results.mkdir()
    run = results / "xxrjun-cnode3-003-five-programs.log"
    shutil.copyfile(RESULTS / run.name, run)
    before = run.read_bytes()
    code, out, err = run_cli(
        "acceptance-report",
        str(EXAMPLES / "superpod-h100-4su.yaml"),
        "--results",
        str(results),
        option,
        str(run),
    )
    assert code == 2 and "is also a --results file" in err, out + err
    assert run.read_bytes() == before


def test_a_work_order_replaces_the_folders_files_only_with_force(tmp_path: Path) -> None:
    """A site's ticked copy of work-order.csv was replaced by the next `diff --work-order` without a word."""
    old, new = _grown(tmp_path)
    wo = tmp_path / "wo"
    wo.mkdir()
    (wo / "work-order.csv").write_text("my ticked copy\n")
    (wo / "notes.txt").write_text("the site's\n")
    code, _, err = run_cli("diff", str(old), str(new), "--work-order", str(wo))
    assert code == 2 and "already holds work-order.csv" in err and "--force" in err, err
    assert (wo / "work-order.csv").read_text() == "my ticked copy\n" and len(list(wo.iterdir())) == 2
    code, _, err = run_cli("diff", str(old), str(new), "--work-order", str(wo), "--force")
    assert code == 1, err
    assert (wo / "work-order.csv").read_text().startswith("seq,") and (
        wo / "notes.txt"
    ).read_text() == "the site's\n"


@pytest.mark.parametrize(
    "report",
    ["afile/report.txt", "wo/work-order.csv", "wo/report.txt", "wo/../wo/work-order.csv", "wo", "wolink/x"],
)
def test_a_report_the_work_order_cannot_sit_beside_is_refused_first(tmp_path: Path, report: str) -> None:
    """`-o afile/report.txt` (afile a file) was refused after the work order was written, under "nothing
    written"; `-o wo/work-order.csv` replaced the work order's cable list with the report."""
    old, new = _grown(tmp_path)
    (tmp_path / "afile").write_text("x\n")
    wo = tmp_path / "wo"
    (tmp_path / "wolink").symlink_to(wo)  # a link to the folder the work order makes
    code, _, err = run_cli("diff", str(old), str(new), "--work-order", str(wo), "-o", str(tmp_path / report))
    assert code == 2 and "nothing written" in err, err
    assert not wo.exists() and (tmp_path / "afile").read_text() == "x\n"


@pytest.mark.parametrize(("name", "says"), [("", "an empty file name"), ("-", "is not a folder name")])
def test_a_work_order_folder_needs_a_name(tmp_path: Path, name: str, says: str) -> None:
    """`--work-order ""` was ignored without a word."""
    old, new = _grown(tmp_path)
    code, _, err = run_cli("diff", str(old), str(new), "--work-order", name)
    assert code == 2 and says in err, err


@pytest.mark.parametrize(
    "args",
    [
        ("advise", "--params", "7e9", "--write", ""),  # said " exists; choose another --write file"
        ("advise", "--params", "7e9", "--write", "-"),  # made a file named `-`
        ("init", "--params", "7e9", "-o", ""),
        ("validate", str(EXAMPLES / "single-dgx-h100.yaml"), "-o", ""),
    ],
)
def test_an_output_needs_a_file_name(
    tmp_path: Path, args: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(*args)
    assert code == 2 and ("empty file name" in err or "needs a file name" in err), err
    assert list(tmp_path.iterdir()) == []


def test_validate_never_replaces_the_blueprint(tmp_path: Path) -> None:
    """`validate bp.yaml -o bp.yaml` replaced the blueprint with its own report, exit 0."""
    bp = _bp(tmp_path)
    before = bp.read_bytes()
    for fmt in ("text", "json", "sarif"):
        code, out, err = run_cli("validate", str(bp), "-o", str(bp), "--format", fmt)
        assert code == 2 and "is also BLUEPRINT" in err, out + err
        assert bp.read_bytes() == before
    code, out, err = run_cli("validate", str(tmp_path), "-o", str(bp))  # a folder's blueprint too
    assert code == 2 and bp.read_bytes() == before, out + err
