"""Hostile nccl-tests results (`acceptance-report`) and advice files (`init --from-advice`, `advise
--write`), written as an attacker who controls one of them would (issue 31): every one ends in a located
refusal with exit 2, in bounded time, or in a report where nothing from the file drives the terminal or
forges a line; never a traceback, exit 3, or a user's file replaced without --force."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli
from nccl_text import nccl_text

from generator.perf.nccl_results import MAX_FILE_BYTES, NcclRun, read_runs
from generator.perf.results_model import MAX_ROWS

BLUEPRINT = EXAMPLES / "single-dgx-h100.yaml"  # one DGX H100: a run on one node is predictable
GOOD_ROWS = [(1 << 30, 380.0), (1 << 31, 390.0)]


def no_crash(text: str) -> None:
    assert "Traceback" not in text and "internal error" not in text, text


def report(results: Path, *extra: str) -> tuple[int, str, str]:
    code, out, err = run_cli("acceptance-report", str(BLUEPRINT), "--results", str(results), *extra)
    no_crash(out + err)
    return code, out, err


def flat(text: str) -> str:
    """stderr as Rich wraps it, joined again (a long path may be broken over lines)."""
    return text.replace("\n", "")


def nccl_json(hosts: list[str], rows: list[tuple[object, object]]) -> dict:
    """An nccl-tests -J document (JSON_FILE_VERSION 2, the keys src/util.cu writes)."""
    return {
        "version": 2,
        "args": ["/opt/nccl-tests/build/all_reduce_perf", "-b", "1G", "-e", "2G"],
        "env": ["NCCL_DEBUG=WARN"],
        "config": {"devices": [{"rank": i, "hostname": h, "device": 0} for i, h in enumerate(hosts)]},
        "results": [
            {"size": s, "out_of_place": {"time": 1000.0, "alg_bw": b, "bus_bw": b, "nwrong": 0.0}}
            for s, b in rows
        ],
        "average_bus_bandwidth": {"bandwidth": 1.0},
    }


@pytest.fixture()
def results(tmp_path: Path) -> Path:
    folder = tmp_path / "results"
    folder.mkdir()
    return folder


# ---- numbers: finite and in physical ranges -------------------------------------------------------


@pytest.mark.parametrize("busbw", ["nan", "inf", "-inf", "Infinity", "-1e308", "1e400", "1e300"])
def test_text_busbw_that_is_no_measurement_is_refused_at_its_line(results: Path, busbw: str) -> None:
    text = nccl_text(["dgx001"], 8, GOOD_ROWS).replace("  390.00  390.00  ", f"  390.00  {busbw}  ", 1)
    assert busbw in text
    (results / "all_reduce_perf.txt").write_text(text)
    code, out, err = report(results)
    assert code == 2, out + err
    line = next(i for i, t in enumerate(text.split("\n"), 1) if busbw in t)
    assert f"all_reduce_perf.txt:{line}" in flat(err) and "busbw" in err
    assert not out


@pytest.mark.parametrize(
    ("size", "column"),
    [("9" * 400, "size"), (str(1 << 45), "size")],
    ids=["10^400", "2^45"],
)
def test_text_size_out_of_range_is_refused(results: Path, size: str, column: str) -> None:
    text = nccl_text(["dgx001"], 8, GOOD_ROWS).replace(str(1 << 31), size, 1)
    (results / "all_reduce_perf.txt").write_text(text)
    code, out, err = report(results)
    assert code == 2, out + err
    assert "all_reduce_perf.txt:" in flat(err) and column in err


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (lambda d: d["config"]["devices"][0].update(rank="abc"), "$.config.devices[0].rank"),
        (lambda d: d["config"]["devices"][0].update(rank=-1), "$.config.devices[0].rank"),
        (lambda d: d["results"][1].update(size=10**400), "$.results[1].size"),
        (lambda d: d["results"][1].update(size=-8), "$.results[1].size"),
        (lambda d: d["results"][0]["out_of_place"].update(bus_bw=-1e308), "$.results[0].out_of_place.bus_bw"),
        (lambda d: d["results"][0]["out_of_place"].update(bus_bw="nan"), "$.results[0].out_of_place.bus_bw"),
        (lambda d: d["results"][0]["out_of_place"].update(bus_bw=True), "$.results[0].out_of_place.bus_bw"),
        (lambda d: d["results"][0]["out_of_place"].update(time=1e400), "$.results[0].out_of_place.time"),
        (lambda d: d.update(results=[d["results"][0]] * (MAX_ROWS + 1)), "$.results"),
    ],
    ids=[
        "rank-abc",
        "rank-negative",
        "size-10^400",
        "size-negative",
        "busbw-minus-1e308",
        "busbw-nan-string",
        "busbw-bool",
        "time-infinite",
        "too-many-rows",
    ],
)
def test_json_value_outside_the_model_is_refused_at_its_path(results: Path, mutate, path: str) -> None:
    doc = nccl_json(["dgx001"], GOOD_ROWS)
    mutate(doc)
    # 10^400 is written as digits, 1e400 as JSON's number syntax (Python reads it as infinity)
    text = json.dumps(doc).replace("Infinity", "1e400")
    (results / "all_reduce_perf.json").write_text(text)
    code, out, err = report(results)
    assert code == 2, out + err
    assert f"all_reduce_perf.json: {path}" in flat(err), err


def test_json_nan_literal_is_refused(results: Path) -> None:
    text = json.dumps(nccl_json(["dgx001"], GOOD_ROWS)).replace("380.0", "NaN")
    (results / "all_reduce_perf.json").write_text(text)
    code, out, err = report(results)
    assert code == 2 and "all_reduce_perf.json" in flat(err) and "NaN" in err, out + err


def test_a_valid_run_still_reports(results: Path) -> None:
    """The refusals above are about the values: the same files with real numbers are read and compared."""
    (results / "all_reduce_perf.txt").write_text(nccl_text(["dgx001"], 8, GOOD_ROWS))
    (results / "all_reduce_perf.json").write_text(json.dumps(nccl_json(["dgx001"], GOOD_ROWS)))
    code, out, err = report(results, "--format", "json")
    assert code in (0, 1), out + err
    runs = json.loads(out)["runs"]
    assert len(runs) == 2 and all(r["measured_busbw_gbytes"] == 385.0 for r in runs)


# ---- strings: host names checked, nothing reaches the terminal raw --------------------------------

FORGED = "forged-run   all_reduce  1  8  all  999.0  1.0  100%  ok"
HOSTILE_HOSTS = [
    "dgx001\x1b[2J\x1b]0;pwned\x07",
    "0x7f000001",
    "127.0.0.1",
    "-dgx001",
    "12345",
    "a" * 64,
]


@pytest.mark.parametrize("host", HOSTILE_HOSTS, ids=["escape", "hex", "ip", "dash", "digits", "long"])
def test_hostile_host_name_in_text_is_refused(results: Path, host: str) -> None:
    text = nccl_text(["dgx001"], 8, GOOD_ROWS).replace("on     dgx001", f"on {host}", 1)
    assert host in text
    (results / "all_reduce_perf.txt").write_text(text)
    code, out, err = report(results)
    assert code == 2, out + err
    assert "all_reduce_perf.txt:5" in flat(err), err  # the first rank line
    assert "\x1b" not in out + err and "\x07" not in out + err


@pytest.mark.parametrize("host", [*HOSTILE_HOSTS, f"dgx001\n{FORGED}", "dgx001\rok"])
def test_hostile_host_name_in_json_is_refused(results: Path, host: str) -> None:
    (results / "all_reduce_perf.json").write_text(json.dumps(nccl_json([host], GOOD_ROWS)))
    code, out, err = report(results)
    assert code == 2, out + err
    assert "all_reduce_perf.json: $.config.devices[0].hostname" in flat(err), err
    assert "\x1b" not in out + err and "\r" not in out + err
    assert not any(line.startswith("forged") for line in (out + err).splitlines())


def test_file_names_cannot_forge_report_lines_or_drive_the_terminal(results: Path) -> None:
    """A result file's name is shown in the report: its escapes and line breaks never reach the output."""
    name = f"all_reduce_perf-\x1b[2J\x1b]0;pwned\x07-\r{FORGED}\n{FORGED}.txt"
    (results / name).write_text(nccl_text(["dgx001"], 8, GOOD_ROWS))
    (results / "notes-\x1b[31m\nforged-ignored.log").write_text("no results here\n")
    code, out, err = report(results)
    assert code in (0, 1), out + err
    assert "\x1b" not in out + err and "\r" not in out + err and "\x07" not in out + err
    assert not any(line.startswith("forged") for line in out.splitlines()), out
    assert sum(FORGED in line for line in out.splitlines()) >= 1  # shown, inside the run's own line


# ---- size and time: one budget for all files, linear parsing --------------------------------------


def test_results_total_budget_refuses_many_files_under_the_per_file_limit(results: Path) -> None:
    """Five files just under the per-file limit add up past the command's total: refused before reading
    (sparse files: the sizes are what a reader would have to read)."""
    for i in range(5):
        with (results / f"all_reduce_perf-{i}.txt").open("wb") as fh:
            fh.truncate(MAX_FILE_BYTES - 1)
    start = time.perf_counter()
    code, out, err = report(results)
    assert code == 2, out + err
    assert "in all" in err and "all_reduce_perf-" in err
    assert time.perf_counter() - start < 10


def test_per_file_limit(results: Path) -> None:
    with (results / "all_reduce_perf.txt").open("wb") as fh:
        fh.truncate(MAX_FILE_BYTES + 1)
    code, out, err = report(results)
    assert code == 2 and "larger than" in err, out + err


def test_many_rows_are_refused_in_bounded_time(results: Path) -> None:
    """The issue's probe: six 16 MiB files of result rows (killed at 60 s CPU before). A run holds at most
    MAX_ROWS rows, so the first file is refused at the row past it, after one linear pass."""
    row = "  {size:12d}  {count:12d}  float  sum  -1  100.0  10.00  10.00  0  100.0  10.00  10.00  0\n"
    head = nccl_text(["dgx001"], 8, GOOD_ROWS[:1])
    body = "".join(
        row.format(size=i, count=i) for i in range(16 * 1024 * 1024 // len(row.format(size=0, count=0)))
    )
    for i in range(6):
        (results / f"all_reduce_perf-{i}.txt").write_text(head + body)
    start = time.perf_counter()
    code, out, err = report(results)
    elapsed = time.perf_counter() - start
    assert code == 2 and f"more than {MAX_ROWS:,} result rows" in err, out + err
    assert elapsed < 15, elapsed


@pytest.mark.parametrize(
    "make",
    [lambda p: p.symlink_to("/dev/zero"), lambda p: p.mkdir()],
    ids=["dev-zero", "folder-named-like-a-file"],
)
def test_result_that_is_no_regular_file_is_refused(results: Path, make) -> None:
    (results / "all_reduce_perf-ok.txt").write_text(nccl_text(["dgx001"], 8, GOOD_ROWS))
    make(results / "all_reduce_perf-zero.txt")
    code, out, err = report(results)
    if (results / "all_reduce_perf-zero.txt").is_dir():
        assert code in (0, 1), out + err  # a folder is walked into, not read
    else:
        assert code == 2 and "all_reduce_perf-zero.txt" in flat(err) and "regular file" in err, out + err


# ---- advice files: init --from-advice, advise --write ---------------------------------------------


def advice(**request: object) -> str:
    base = {"params": 7e9, "mode": "pretrain", "gpus": 8, "gpu": "h100-sxm", "prefer": "cost"}
    return json.dumps({"request": {**base, **request}})


@pytest.mark.parametrize(
    ("request_", "path"),
    [
        ({"params": "nan"}, "$.request.params"),
        ({"params": -1}, "$.request.params"),
        ({"params": 1e300}, "$.request.params"),
        ({"gpus": 1e300}, "$.request.gpus"),
        ({"gpus": 10**9}, "$.request.gpus"),
        ({"gpus": 0}, "$.request.gpus"),
        ({"gpus": "8"}, "$.request.gpus"),
        ({"mode": "rm -rf"}, "$.request.mode"),
        ({"gpu": "h100\x1b[2J"}, "$.request.gpu"),
        ({"tokens": 1e300}, "$.request.tokens"),
        ({"target_days": 0}, "$.request.target_days"),
    ],
    ids=lambda v: str(v)[:30],
)
def test_from_advice_values_outside_the_model_are_refused(tmp_path: Path, request_: dict, path: str) -> None:
    src = tmp_path / "advice.json"
    src.write_text(advice(**request_))
    out_file = tmp_path / "bp.yaml"
    code, out, err = run_cli("init", "--from-advice", str(src), "-o", str(out_file))
    no_crash(out + err)
    assert code == 2, out + err
    assert f"advice.json: {path}" in flat(err), err
    assert "\x1b" not in err and not out_file.exists()


def test_from_advice_gpus_beyond_the_largest_design_is_refused(tmp_path: Path) -> None:
    """Under the model's upper bound but more nodes than generator/limits.py allows for this server."""
    src = tmp_path / "advice.json"
    src.write_text(advice(gpus=16_385 * 8))
    code, out, err = run_cli("init", "--from-advice", str(src), "-o", str(tmp_path / "bp.yaml"))
    no_crash(out + err)
    assert code == 2 and "advice.json: $.request.gpus" in flat(err), err


@pytest.mark.parametrize(
    "make",
    [
        lambda p: p.symlink_to("/dev/zero"),
        lambda p: p.write_text("{" * 100_000),
        lambda p: p.write_text('{"request": {"params": NaN, "mode": "pretrain"}}'),
        lambda p: p.write_text(" " * (2 << 20)),
        lambda p: p.write_text("[1, 2]"),
    ],
    ids=["dev-zero", "deep", "nan-literal", "too-big", "not-an-advice"],
)
def test_from_advice_file_that_is_no_advice_is_refused(tmp_path: Path, make) -> None:
    src = tmp_path / "advice.json"
    make(src)
    start = time.perf_counter()
    code, out, err = run_cli("init", "--from-advice", str(src), "-o", str(tmp_path / "bp.yaml"))
    no_crash(out + err)
    assert code == 2 and "advice.json" in flat(err), out + err
    assert time.perf_counter() - start < 10


def test_from_advice_reads_what_advise_wrote(tmp_path: Path) -> None:
    code, out, err = run_cli("advise", "--params", "7e9", "--gpus", "8", "--format", "json")
    assert code == 0, err
    (tmp_path / "advice.json").write_text(out)
    target = tmp_path / "bp.yaml"
    code, out, err = run_cli("init", "--from-advice", str(tmp_path / "advice.json"), "-o", str(target))
    assert code == 0, out + err
    assert "h100" in target.read_text()


def test_advise_write_never_replaces_a_file_without_force(tmp_path: Path) -> None:
    target = tmp_path / "mine.yaml"
    target.write_text("my own notes\n")
    code, out, err = run_cli("advise", "--params", "7e9", "--gpus", "8", "--write", str(target))
    no_crash(out + err)
    assert code == 2 and "--force" in err, out + err
    assert target.read_text() == "my own notes\n"
    code, out, err = run_cli("advise", "--params", "7e9", "--gpus", "8", "--write", str(target), "--force")
    assert code == 0, out + err
    assert target.read_text().startswith(("#", "apiVersion")) and "my own notes" not in target.read_text()


def test_advise_write_refuses_a_symlink_even_with_force(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep\n")
    link = tmp_path / "starter.yaml"
    link.symlink_to(victim)
    code, out, err = run_cli("advise", "--params", "7e9", "--gpus", "8", "--write", str(link), "--force")
    no_crash(out + err)
    assert code == 2 and "symbolic link" in flat(err), out + err
    assert victim.read_text() == "keep\n" and link.is_symlink()


@pytest.mark.parametrize(
    "argv",
    [
        ["--gpus", "1000000000"],
        ["--tokens", "1e300", "--target-days", "1"],
        ["--target-days", "nan", "--tokens", "1e12"],
        ["--params", "inf"],
    ],
    ids=["gpus-1e9", "tokens-1e300", "days-nan", "params-inf"],
)
def test_advise_refuses_numbers_out_of_range(argv: list[str]) -> None:
    args = ["advise", *argv] if "--params" in argv else ["advise", "--params", "7e9", *argv]
    code, out, err = run_cli(*args)
    no_crash(out + err)
    assert code == 2, out + err


@pytest.mark.parametrize("name", ["all_reduce_perf-$\\frac{$.txt", "all_reduce_perf-a\\$\\b$.txt"])
def test_file_names_cannot_break_the_plot(results: Path, tmp_path: Path, name: str) -> None:
    """A pair of `$` in a label is Matplotlib mathtext; an unparsable one used to end in exit 3."""
    (results / name).write_text(nccl_text(["dgx001"], 8, GOOD_ROWS))
    plot = tmp_path / "busbw.svg"
    code, out, err = report(results, "--plot", str(plot))
    assert code in (0, 1), out + err
    assert plot.read_bytes().startswith(b"<?xml")


# ---- the network lines (generator.perf.nccl_network) ---------------------------------------------


def test_network_lines_naming_too_many_networks_are_refused_at_the_line(results: Path) -> None:
    lines = [f"h:1:2 [0] NCCL INFO Using network Net{i}" for i in range(9)]
    (results / "all_reduce_perf.log").write_text(
        "\n".join(lines) + "\n" + nccl_text(["dgx001"], 8, GOOD_ROWS)
    )
    code, out, err = report(results)
    assert code == 2 and "all_reduce_perf.log:9" in flat(err) and "more than 8 networks" in flat(err), (
        out + err
    )


def test_pathological_network_lines_are_read_in_bounded_time(results: Path) -> None:
    """Lines built to make the network patterns backtrack (long blank runs after a name, long channel
    prefixes without their end), 16 MiB of them: one linear pass, and none is taken as a network."""
    using = "h:1:2 [0] NCCL INFO Using network a" + " " * 4000 + "b\n"
    send = "h [0] NCCL INFO Channel 00/0 : " + "0" * 4000 + "[0] -> 1[0] [send] via NET/IB/0\n"
    run = _read_in_bounded_time(results, using + send)
    assert run.network.loaded == () and run.network.connections == ()


def _read_in_bounded_time(results: Path, chunk: str) -> NcclRun:
    """16 MiB of ``chunk`` before a healthy run's rows: the report ends in bounded time, exit 0 or 1, and the
    run read back."""
    body = chunk * (16 * 1024 * 1024 // len(chunk))
    (results / "all_reduce_perf.log").write_text(body + nccl_text(["dgx001"], 8, GOOD_ROWS))
    start = time.perf_counter()
    code, out, err = report(results, "--format", "json")
    elapsed = time.perf_counter() - start
    assert code in (0, 1), out + err
    assert elapsed < 15, elapsed
    (run,) = read_runs(results / "all_reduce_perf.log")
    return run


def test_pathological_port_lines_are_read_in_bounded_time(results: Path) -> None:
    """NET/IB lines built to make the port patterns backtrack (a long run of host-name characters before
    the prefix, a port list that never reaches its `; OOB`, one over NCCL's 2,048-byte list), 16 MiB of them:
    one linear pass, and none is taken as a host's ports."""
    host_run = "a-" * 2000 + ":1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:1.2.3.4<0>\n"
    no_end = "h:1:2 [0] NCCL INFO NET/IB : Using" + " [0]mlx5_0:1/IB" * 300 + "\n"
    too_long = "h:1:2 [0] NCCL INFO NET/IB : Using" + " [0]mlx5_0:1/IB" * 200 + " ; OOB ib0:1.2.3.4<0>\n"
    run = _read_in_bounded_time(results, host_run + no_end + too_long)
    assert run.network.ib_ports == ()
