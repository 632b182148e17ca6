"""`blueprint estimate` and `acceptance-report`: option values and files they cannot use are refused with exit 2
and a message that names them, never an internal error (exit 3); an output never replaces one of the command's
inputs or another of its outputs, and is checked before anything is written; and a site calibration records
what it was measured with (the runs' NCCL release, the pool and its GPU) and is held to it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from nccl_text import nccl_text
from perf_blueprints import server_nodes
from ruamel.yaml import YAML

from generator.cli import main

NDR = {
    "technology": "infiniband-ndr",
    "topology": {"kind": "fat-tree", "switch": "qm9700", "rail_optimized": True},
    "subnet_manager": {"kind": "opensm"},
}
HOSTS = ["gpu001", "gpu002"]
PLATEAU = [(1 << 30, 400.0), (2 << 30, 400.0)]


def _run(args: list[str]) -> int:
    """The command's exit code, also where argparse refuses an option (it exits)."""
    try:
        return main(args)
    except SystemExit as exc:
        return int(exc.code or 0)


def _blueprint(tmp_path: Path, data: dict | None = None, name: str = "bp.yaml") -> Path:
    path = tmp_path / name
    with path.open("w") as fh:
        YAML().dump(data or server_nodes("dgx-h100", 2, NDR), fh)
    return path


def _results(tmp_path: Path, files: dict[str, str] | None = None) -> Path:
    results = tmp_path / "results"
    results.mkdir(exist_ok=True)
    for name, text in (files or {"all_reduce_perf-2n.txt": nccl_text(HOSTS, 8, PLATEAU)}).items():
        (results / name).write_text(text)
    return results


@pytest.mark.parametrize(
    "option",
    [
        ["--sizes", "9" * 400],  # float() of it is infinite: int() raised OverflowError
        ["--sizes", "1..1G:" + "9" * 5000],  # int() of 5,000 digits raised ValueError
        ["--nccl-version", "9" * 5000 + ".1"],
        ["--sizes", "\u0661\u0660\u0662\u0664"],  # Arabic-Indic digits: int() takes them
        ["--channels", "\u0661"],
        ["--channels", "1_0"],  # int() reads 10
        ["--nccl-version", "2.2\u0661.5"],
        ["--nccl-version", "2.\u00b2.5"],  # str.isdigit() takes the superscript, int() refuses it
        ["--calibration", ""],  # used to be taken as no calibration
        ["--plot", ""],
    ],
)
def test_option_values_no_run_has_are_refused(tmp_path: Path, capsys, option: list[str]) -> None:
    bp = _blueprint(tmp_path)
    code = _run(["estimate", str(bp), *option])
    assert code == 2
    err = capsys.readouterr().err
    assert "internal error" not in err and "Traceback" not in err


def test_an_output_never_replaces_an_input(tmp_path: Path, capsys) -> None:
    bp = _blueprint(tmp_path)
    before = bp.read_bytes()
    assert main(["estimate", str(bp), "-o", str(bp)]) == 2
    assert bp.read_bytes() == before
    assert "-o " + str(bp) + " is also a blueprint" in capsys.readouterr().err
    link = tmp_path / "again.yaml"
    os.link(bp, link)  # the same file under another name
    assert main(["estimate", str(bp), "-o", str(link)]) == 2 and bp.read_bytes() == before


def test_outputs_are_checked_before_anything_is_written(tmp_path: Path, capsys) -> None:
    """Before: the plot was written, then `-o somedir` was refused with "(nothing written)"."""
    bp = _blueprint(tmp_path)
    (tmp_path / "somedir").mkdir()
    plot = tmp_path / "p.svg"
    assert main(["estimate", str(bp), "--plot", str(plot), "-o", str(tmp_path / "somedir")]) == 2
    assert not plot.exists() and "nothing written" in capsys.readouterr().err
    results = _results(tmp_path)
    cal = tmp_path / "c.yaml"
    args = ["acceptance-report", str(bp), "--results", str(results)]
    assert main([*args, "--calibrate", str(cal), "-o", str(tmp_path / "somedir")]) == 2
    assert not cal.exists()
    assert main([*args, "--calibrate", str(cal), "-o", str(cal)]) == 2  # the report over the calibration
    assert not cal.exists() and "-o " + str(cal) + " is also --calibrate" in capsys.readouterr().err


def test_an_empty_calibration_name_is_refused(tmp_path: Path, capsys) -> None:
    """`--calibrate ""` wrote to the default path; `--calibrate` alone still does."""
    bp = _blueprint(tmp_path)
    results = _results(tmp_path)
    args = ["acceptance-report", str(bp), "--results", str(results)]
    assert _run([*args, "--calibrate", ""]) == 2
    assert not (tmp_path / "bp.calibration.yaml").exists()
    assert _run([*args, "--calibration", ""]) == 2
    main([*args, "--calibrate"])
    assert (tmp_path / "bp.calibration.yaml").exists()


def _calibrate(tmp_path: Path, files: dict[str, str], bp: Path | None = None) -> tuple[int, Path]:
    bp = bp or _blueprint(tmp_path)
    out = tmp_path / "cal.yaml"
    code = main(
        ["acceptance-report", str(bp), "--results", str(_results(tmp_path, files)), "--calibrate", str(out)]
    )
    return code, out


def test_the_calibration_records_the_release_the_runs_used(tmp_path: Path, capsys) -> None:
    """The runs' nccl-tests header says nccl-library=22602 and each run is predicted with 2.26.2; the file
    recorded the blueprint's software.nccl (2.21.5), so `estimate --nccl-version 2.26.2` warned of another
    release and a plain estimate did not."""
    code, out = _calibrate(tmp_path, {"all_reduce_perf-2n.txt": nccl_text(HOSTS, 8, PLATEAU)})
    assert code == 0
    doc = YAML(typ="safe", pure=True).load(out.read_text())
    assert (doc["nccl_version"], doc["pool"], doc["gpu"]) == ("2.26.2", "gpu", "h100-sxm")


def test_runs_of_two_releases_make_no_calibration(tmp_path: Path, capsys) -> None:
    old = nccl_text(HOSTS, 8, PLATEAU).replace("nccl-library=22602", "nccl-library=22105")
    code, out = _calibrate(
        tmp_path, {"all_reduce_perf-a.txt": nccl_text(HOSTS, 8, PLATEAU), "all_reduce_perf-b.txt": old}
    )
    assert code == 2 and not out.exists()
    assert "the runs used NCCL 2.21.5 and 2.26.2: calibrate the runs of one release at a time" in (
        capsys.readouterr().err.replace("\n", " ")
    )


def test_a_result_file_name_that_is_not_utf8_is_recorded_escaped(tmp_path: Path, capsys) -> None:
    """Before: exit 3 (the calibration's source list refused the name)."""
    name = os.fsdecode(b"all_reduce_perf-2n-\xff.txt")
    code, out = _calibrate(tmp_path, {name: nccl_text(HOSTS, 8, PLATEAU)})
    assert code == 0
    doc = YAML(typ="safe", pure=True).load(out.read_text())
    assert [s["file"] for s in doc["sources"]] == ["all_reduce_perf-2n-\\xff.txt"]
    capsys.readouterr()
    # the report names it too: as \xff in text, and in JSON as the escape that gives the name's bytes back
    args = ["acceptance-report", str(tmp_path / "bp.yaml"), "--results", str(tmp_path / "results")]
    assert main(args) == 0 and "all_reduce_perf-2n-\\xff.txt" in capsys.readouterr().out
    assert main([*args, "--format", "json"]) == 0
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert os.fsencode(run["file"]).endswith(b"all_reduce_perf-2n-\xff.txt")


def test_a_calibration_of_another_pool_is_refused(tmp_path: Path, capsys) -> None:
    """A blueprint with a second GPU pool: the H100 pool's factors are not the A100 pool's."""
    data = server_nodes("dgx-h100", 2, NDR)
    data["pools"].append({"name": "old", "count": 2, "server": "dgx-a100"})
    bp = _blueprint(tmp_path, data)
    code, out = _calibrate(tmp_path, {"all_reduce_perf-2n.txt": nccl_text(HOSTS, 8, PLATEAU)}, bp)
    assert code == 0 and out.exists()
    capsys.readouterr()
    assert main(["estimate", str(bp), "--pool", "old", "--calibration", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{out}:" in err and "calibration of pool `gpu` (h100-sxm), not of `old`" in err.replace("\n", " ")
    assert main(["estimate", str(bp), "--pool", "gpu", "--calibration", str(out), "-q"]) == 0


@pytest.mark.parametrize(
    ("old", "new", "says"),
    [
        ("version: 1", "version: true", "version"),  # a bool is no version 1
        ("nccl_version: 2.26.2", "nccl_version: ''", "nccl_version"),
        ("plateau_min_bytes: 1073741824", "plateau_min_bytes: " + "9" * 30, "plateau_min_bytes"),
    ],
)
def test_calibration_values_no_run_records_are_refused(
    tmp_path: Path, capsys, old: str, new: str, says: str
) -> None:
    bp = _blueprint(tmp_path)
    _code, out = _calibrate(tmp_path, {"all_reduce_perf-2n.txt": nccl_text(HOSTS, 8, PLATEAU)}, bp)
    text = out.read_text()
    assert old in text
    out.write_text(text.replace(old, new))
    capsys.readouterr()
    assert main(["estimate", str(bp), "--calibration", str(out)]) == 2
    assert says in capsys.readouterr().err


def test_a_calibration_in_a_new_folder_is_written(tmp_path: Path, capsys) -> None:
    """Without --force the temporary file's creation failed and the error named it, not the file asked for
    (with --force the folder was made)."""
    bp = _blueprint(tmp_path)
    out = tmp_path / "site" / "cal.yaml"
    main(["acceptance-report", str(bp), "--results", str(_results(tmp_path)), "--calibrate", str(out)])
    assert out.is_file()


def test_nodes_that_fill_nvlink_domains_unevenly_are_said(tmp_path: Path, capsys) -> None:
    """19 GB200 NVL72 trays span two NVLink domains as 10 + 9: the model predicts two of 10, and says so."""
    bp = _blueprint(tmp_path, server_nodes("gb200-nvl72-tray", 36, NDR))
    assert main(["estimate", str(bp), "--nodes", "19", "--sizes", "8G"]) == 0
    out = capsys.readouterr().out.replace("\n", " ")
    assert "19 nodes span 2 NVLink domains of 18 nodes unevenly: predicted as 2 domains of 10 nodes" in out
    main(["estimate", str(bp), "--nodes", "20", "--sizes", "8G"])
    assert "unevenly" not in capsys.readouterr().out


def test_a_calibration_from_many_files_lists_some_and_digests_all(tmp_path: Path, capsys) -> None:
    """1,100 result files: the file lists the first 1,000 by name, their count, and the sha256 of the
    `sha256sum` listing of all of them, as coreutils' sha256sum writes it (the oracle); a 100k-GPU run's
    files listed whole made a file past what `--calibration` reads."""
    import subprocess

    files = {f"all_reduce_perf-{i:04d}.txt": nccl_text(HOSTS, 8, PLATEAU) for i in range(1100)}
    code, out = _calibrate(tmp_path, files)
    assert code == 0
    doc = YAML(typ="safe", pure=True).load(out.read_text())
    names = sorted(files)
    assert [s["file"] for s in doc["sources"]] == names[:1000] and doc["sources_total"] == 1100
    listing = subprocess.run(
        ["sha256sum", *names], cwd=tmp_path / "results", capture_output=True, check=True
    ).stdout
    digest = subprocess.run(["sha256sum"], input=listing, capture_output=True, check=True).stdout.split()[0]
    assert doc["sources_sha256"] == digest.decode()
    capsys.readouterr()
    assert main(["estimate", str(tmp_path / "bp.yaml"), "--calibration", str(out), "-q"]) == 0


def test_a_calibration_of_another_gpu_is_refused(tmp_path: Path, capsys) -> None:
    """The same blueprint name and pool name, its servers changed from DGX H100 to DGX A100: the recorded
    GPU says the factors are another cluster's (they were applied, x0.7 to the A100 predictions)."""
    code, out = _calibrate(tmp_path, {"all_reduce_perf-2n.txt": nccl_text(HOSTS, 8, PLATEAU)})
    assert code == 0
    data = server_nodes("dgx-a100", 2, NDR)
    data["name"] = server_nodes("dgx-h100", 2, NDR)["name"]
    a100 = _blueprint(tmp_path, data, "a100.yaml")
    capsys.readouterr()
    assert main(["estimate", str(a100), "--calibration", str(out)]) == 2
    assert "(h100-sxm), not of `gpu` (a100" in capsys.readouterr().err.replace("\n", " ")


def test_a_calibration_that_lists_every_file_is_read(tmp_path: Path, capsys) -> None:
    """A file of an earlier release lists all its sources (1,500 here, within the 1 MiB read): it is read."""
    code, out = _calibrate(tmp_path, {"all_reduce_perf-2n.txt": nccl_text(HOSTS, 8, PLATEAU)})
    assert code == 0
    doc = YAML(typ="safe", pure=True).load(out.read_text())
    one = doc["sources"][0]
    doc["sources"] = [{"file": f"f{i:04d}.txt", "sha256": one["sha256"]} for i in range(1500)]
    del doc["sources_total"], doc["sources_sha256"]
    with out.open("w") as fh:
        YAML().dump(doc, fh)
    capsys.readouterr()
    assert main(["estimate", str(tmp_path / "bp.yaml"), "--calibration", str(out), "-q"]) == 0


def test_a_calibration_of_too_many_values_is_refused_where_they_pass_it(tmp_path: Path, capsys) -> None:
    """A megabyte of `[0, 0, …]` was parsed whole before its values were counted (about a minute); the reader
    now stops at the value past calibration.MAX_VALUES and names its line."""
    from generator.perf.calibration import MAX_FILE_BYTES, MAX_VALUES

    bp = _blueprint(tmp_path)
    lines = ["version: 1", "factors:"] + ["- 0"] * (MAX_VALUES + 50_000)
    cal = tmp_path / "cal.yaml"
    cal.write_text("\n".join(lines) + "\n")
    assert cal.stat().st_size < MAX_FILE_BYTES
    assert main(["estimate", str(bp), "--calibration", str(cal)]) == 2
    err = capsys.readouterr().err
    # the root, `1` and the list are values 1-3: value 65,537 is item 65,534, on line 2 + 65,534
    assert f"{cal}:{2 + MAX_VALUES - 2}:" in err and f"more than {MAX_VALUES:,} values" in err, err
