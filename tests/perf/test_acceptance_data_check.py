"""`blueprint acceptance-report` and nccl-tests' own verdict on a run: its data check (a row's `#wrong`, the
footer's `Out of bounds values : N FAILED`, a -J file's `nwrong` and `out_of_bounds.count`) and the program
stopping on an NCCL or CUDA failure (common.h NCCLCHECK/CUDACHECK). Such a run is marked FAILED at the line
that shows it, names no suspect cable and calibrates nothing. And the row columns are taken where the column
header puts them, so what nccl-tests appends to a row (the -Z timestamp) is never read as a figure.
Formats: NVIDIA/nccl-tests src/util.cu and src/common.h, commit cfa8a9674b467b8e200775a62b09ff11d4c363ac."""

from __future__ import annotations

import json
from pathlib import Path

from nccl_text import nccl_text
from perf_blueprints import server_nodes
from ruamel.yaml import YAML

from generator.cli import main
from generator.perf.nccl_results import read_runs

NDR = {
    "technology": "infiniband-ndr",
    "topology": {"kind": "fat-tree", "switch": "qm9700", "rail_optimized": True},
    "subnet_manager": {"kind": "opensm"},
}
PAIR = ["gpu001", "gpu002"]
ROWS = [(1 << 30, 47.0), (2 << 30, 47.0)]  # one GPU a node, one NDR NIC each: healthy


def _blueprint(tmp_path: Path) -> Path:
    path = tmp_path / "bp.yaml"
    with path.open("w") as fh:
        YAML().dump(server_nodes("dgx-h100", 2, NDR), fh)
    return path


def _report(tmp_path: Path, files: dict[str, str], capsys) -> tuple[int, dict]:
    results = tmp_path / "r"
    results.mkdir(exist_ok=True)
    for name, text in files.items():
        (results / name).write_text(text)
    code = main(
        ["acceptance-report", str(_blueprint(tmp_path)), "--results", str(results), "--format", "json"]
    )
    return code, json.loads(capsys.readouterr().out)


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.split("\n"), 1) if needle in line)


def test_the_healthy_run_is_ok(tmp_path: Path, capsys) -> None:
    """The counterpart of every test below: the same run without the failure is ok (exit 0)."""
    code, report = _report(tmp_path, {"all_reduce_perf.txt": nccl_text(PAIR, 1, ROWS)}, capsys)
    assert code == 0 and report["runs"][0]["failed"] is None and report["clean"]


def test_a_row_with_wrong_elements_fails_the_run(tmp_path: Path, capsys) -> None:
    text = nccl_text(PAIR, 1, ROWS)
    row = next(line for line in text.split("\n") if line.strip().startswith(str(2 << 30)))
    body = row.rsplit("       0", 2)
    text = text.replace(row, body[0] + "    1234" + body[1] + "       0" + body[2])
    code, report = _report(tmp_path, {"all_reduce_perf.txt": text}, capsys)
    (run,) = report["runs"]
    at = f"{tmp_path / 'r' / 'all_reduce_perf.txt'}:{_line_of(text, str(2 << 30))}"
    assert code == 1 and not report["clean"] and report["suspects"] == []
    assert run["failed"] == f"{at}: 1234 wrong elements at {2 << 30} B (nccl-tests' data check)"
    assert not run["low"]  # its bandwidth was healthy: the check, not the speed, fails it


def test_wrong_elements_of_the_in_place_body_fail_the_run(tmp_path: Path, capsys) -> None:
    """A row's in-place #wrong counts as its out-of-place one, also without the footer (a log cut short):
    it was read only from the footer, so a truncated log with in-place errors passed."""
    text = nccl_text(PAIR, 1, ROWS)
    row = next(line for line in text.split("\n") if line.strip().startswith(str(2 << 30)))
    assert row.endswith("       0")
    text = text.replace(row, row[: -len("       0")] + "       7")
    text = text[: text.index("# Out of bounds")]  # cut before the footer
    code, report = _report(tmp_path, {"all_reduce_perf.txt": text}, capsys)
    at = f"{tmp_path / 'r' / 'all_reduce_perf.txt'}:{_line_of(text, str(2 << 30))}"
    assert (
        code == 1
        and report["runs"][0]["failed"] == f"{at}: 7 wrong elements at {2 << 30} B (nccl-tests' data check)"
    )


def test_the_data_check_footer_fails_the_run(tmp_path: Path, capsys) -> None:
    """An in-place body's wrong elements show only in the footer's count."""
    text = nccl_text(PAIR, 1, ROWS).replace(
        "# Out of bounds values : 0 OK", "# Out of bounds values : 4936 FAILED"
    )
    code, report = _report(tmp_path, {"all_reduce_perf.txt": text}, capsys)
    at = f"{tmp_path / 'r' / 'all_reduce_perf.txt'}:{_line_of(text, 'Out of bounds')}"
    assert code == 1
    assert report["runs"][0]["failed"] == f"{at}: nccl-tests' data check failed (4936 values out of bounds)"


def test_a_run_that_stopped_on_an_nccl_failure_is_failed_not_judged_by_its_first_rows(
    tmp_path: Path, capsys
) -> None:
    """The 1 GiB row was written, then one rank's NCCL call failed and the program stopped: no footer, and the
    rows it wrote alone would read as a healthy run."""
    text = nccl_text(PAIR, 1, ROWS)
    cut = text.index(f"{2 << 30:12d}")
    text = (
        text[:cut]
        + "gpu002: Test NCCL failure common.cu:1005 'remote process exited or there was a network error / '\n"
        + " .. gpu002 pid 1001: Test failure common.cu:906\n"
    )
    code, report = _report(tmp_path, {"all_reduce_perf.txt": text}, capsys)
    at = f"{tmp_path / 'r' / 'all_reduce_perf.txt'}:{_line_of(text, 'Test NCCL failure')}"
    assert code == 1 and report["runs"][0]["failed"] == f"{at}: nccl-tests stopped on a NCCL failure"


def test_the_text_report_and_calibrate_say_failed(tmp_path: Path, capsys) -> None:
    text = nccl_text(PAIR, 1, ROWS).replace(
        "# Out of bounds values : 0 OK", "# Out of bounds values : 2 FAILED"
    )
    results = tmp_path / "r"
    results.mkdir()
    (results / "all_reduce_perf.txt").write_text(text)
    bp = _blueprint(tmp_path)
    assert main(["acceptance-report", str(bp), "--results", str(results)]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "FAILED " in out and "nccl-tests' data check failed (2 values out of bounds)" in out
    cal = tmp_path / "site.calibration.yaml"
    code = main(["acceptance-report", str(bp), "--results", str(results), "--calibrate", str(cal)])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2 and not cal.exists()
    at = f"{results / 'all_reduce_perf.txt'}:{_line_of(text, 'Out of bounds')}"
    assert (
        f"no run can calibrate the model (nothing written): all_reduce_perf.txt: {at}: nccl-tests' data check "
        "failed (2 values out of bounds)"
    ) in err


def test_an_old_error_column_is_a_largest_error_not_a_count(tmp_path: Path) -> None:
    """Old releases head the column `error` and print the largest error there (4e-07 in ABCI's 2.8-era logs,
    aistabci/abci2.0benchmark): no failure. Without any header, only a whole number of at least one can be a
    count of wrong elements."""
    old = [
        "# nThread 1 nGpus 1 minBytes 4 maxBytes 2147483648 step: 2(factor) warmup iters: 5 iters: 100 "
        "validation: 1 ",
        "#   Rank  0 Pid 2163724 on     gpu001 device  0 [0x27] A100-SXM4-40GB",
        "#   Rank  1 Pid 2273926 on     gpu002 device  0 [0x27] A100-SXM4-40GB",
        "#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error",
        "  1073741824     268435456   float     sum    45688   23.50   23.50  4e-07    45690   23.50   23.50  2e+00",
        "# Out of bounds values : 0 OK",
    ]
    path = tmp_path / "all_reduce_perf.txt"
    path.write_text("\n".join(old) + "\n")
    (run,) = read_runs(path)
    assert run.failed is None and run.rows[0].busbw_gbytes == 23.50
    headless = [line for line in old if "size" not in line and "Out of bounds" not in line]
    path.write_text("\n".join(headless) + "\n")
    assert read_runs(path)[0].failed is None
    path.write_text("\n".join(headless).replace("4e-07", "12") + "\n")
    assert (
        read_runs(path)[0].failed == f"{path}:4: 12 wrong elements at 1073741824 B (nccl-tests' data check)"
    )


def test_a_timestamp_after_a_row_is_not_read_as_a_figure(tmp_path: Path) -> None:
    """nccl-tests -Z appends the time after the in-place body (util.cu: `%21s`, two tokens) and heads it
    `timestamp`: the last eight tokens are no longer the two bodies, the header's columns still are."""
    text = nccl_text(PAIR, 1, [(1 << 30, 47.0)])
    text = text.replace("  #wrong\n", "  #wrong           timestamp\n", 1)
    row = next(line for line in text.split("\n") if line.strip().startswith(str(1 << 30)))
    text = text.replace(row, row + "  2026-12-06 14:00:00")
    path = tmp_path / "all_reduce_perf.txt"
    path.write_text(text)
    (run,) = read_runs(path)
    assert [(r.busbw_gbytes, r.wrong) for r in run.rows] == [(47.0, 0.0)] and run.failed is None


def test_a_row_without_its_out_of_place_body_reads_the_in_place_one(tmp_path: Path) -> None:
    """writeBenchMarkLineNullBody leaves the out-of-place columns blank (trace replay): the in-place body
    stands where the header puts the out-of-place one."""
    text = nccl_text(PAIR, 1, [(1 << 30, 47.0)])
    row = next(line for line in text.split("\n") if line.strip().startswith(str(1 << 30)))
    head, body = row[: row.index("-1") + 2], row[row.index("-1") + 2 :]
    half = body[: len(body) // 2]
    text = text.replace(row, head + " " * len(half) + half.replace("47.00", "31.00"))
    path = tmp_path / "all_reduce_perf.txt"
    path.write_text(text)
    (run,) = read_runs(path)
    assert [r.busbw_gbytes for r in run.rows] == [31.0]


def _json(nwrong: float = 0.0, out_of_bounds: int = 0) -> str:
    """nccl-tests -J output (JSON_FILE_VERSION 2, keys as src/util.cu writes them)."""
    devices = [{"rank": i, "hostname": h} for i, h in enumerate(PAIR)]
    results = [
        {
            "size": s,
            "out_of_place": {"time": s / (b * 1e3), "alg_bw": b, "bus_bw": b, "nwrong": nwrong if i else 0.0},
            "in_place": {"time": s / (b * 1e3), "alg_bw": b, "bus_bw": b, "nwrong": 0.0},
        }
        for i, (s, b) in enumerate(ROWS)
    ]
    return json.dumps(
        {
            "args": ["/opt/nccl-tests/build/all_reduce_perf", "-b", "1G", "-e", "2G"],
            "env": [],
            "config": {"devices": devices},
            "results": results,
            "out_of_bounds": {"count": out_of_bounds, "okay": out_of_bounds == 0},
        }
    )


def test_a_json_file_shows_its_data_check_at_its_path(tmp_path: Path, capsys) -> None:
    code, report = _report(tmp_path, {"all_reduce_perf.json": _json()}, capsys)
    assert code == 0 and report["runs"][0]["failed"] is None
    path = tmp_path / "r" / "all_reduce_perf.json"
    path.write_text(_json(nwrong=7.0))
    (run,) = read_runs(path)
    assert run.failed == (
        f"{path}: $.results[1].out_of_place.nwrong: 7 wrong elements at {2 << 30} B (nccl-tests' data check)"
    )
    path.write_text(_json(out_of_bounds=3))
    (run,) = read_runs(path)
    assert run.failed == f"{path}: $.out_of_bounds: nccl-tests' data check failed (3 values out of bounds)"


def test_the_program_the_output_names_decides_the_collective(tmp_path: Path) -> None:
    """alltoallv_perf's rows in a file called alltoallv_perf.txt, and sendrecv_perf's in one called
    all_reduce_then_sendrecv.log, are no alltoall or all_reduce run: they were compared as those before."""
    for program, name in (
        ("alltoallv_perf", "alltoallv_perf.txt"),
        ("sendrecv_perf", "all_reduce_sendrecv.log"),
    ):
        path = tmp_path / name
        path.write_text(nccl_text(PAIR, 1, ROWS, program=program))
        assert read_runs(path) == [], program
    path = tmp_path / "all_reduce_perf_mpi.log"  # a build's own name for the same program still counts
    path.write_text(nccl_text(PAIR, 1, ROWS, program="/opt/nccl-tests/build/all_reduce_perf_mpi"))
    assert [r.collective for r in read_runs(path)] == ["all_reduce"]
