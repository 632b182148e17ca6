"""RCCL's MSCCL all-pairs all_reduce on one MI300X node (perf.yaml rccl.msccl_allpairs).

RCCL ships an 8-GPU all-pairs Simple all_reduce for 512 KiB - 20 MiB (tools/msccl-algorithms, minBytes /
maxBytes) and turns MSCCL on for a node of 8 fully connected MI300X; ranks sharing a process run it too unless
RCCL_MSCCL_ENABLE_SINGLE_PROCESS=0 (src/misc/msccl/msccl_lifecycle.cc defaults it to 1). The fit is
re-run here from AMD's own sweep (tests/perf/data/msccl_allpairs.yaml, outside the evaluation set), and the
expected figures are worked out from that fit and AMD's link figure, not from the model's code."""

from __future__ import annotations

import json
import statistics
from dataclasses import replace
from pathlib import Path

import pytest
from nccl_text import nccl_text
from perf_blueprints import build, server_nodes
from ruamel.yaml import YAML

from blueprints.catalog.perf import perf_data
from generator.cli import main
from generator.foreign import ForeignInputError
from generator.perf.collectives import estimate
from generator.perf.nccl_results import read_runs
from generator.perf.predict import job_for
from generator.perf.processes import ProcessSettings
from generator.perf.system import PerfError, system_for

DATA = Path(__file__).parent / "data" / "msccl_allpairs.yaml"
MIB = 1 << 20


def _sweep() -> dict:
    return YAML(typ="safe").load(DATA.read_text())


def _line(rows: dict) -> tuple[float, float]:
    """Least squares of time (µs) on size (bytes): (fixed µs, µs per byte)."""
    xs, ys = [float(s) for s in rows], [r["time_us"] for r in rows.values()]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)
    return my - slope * mx, slope


def test_the_constants_are_the_fit_of_amds_sweep() -> None:
    """The fixed time (with the launch overhead every estimate adds) and the link share are the straight line
    through AMD's rows in the window: 8 GPUs' busbw at 7/4 × S / t over seven 48 GB/s links."""
    fixed, per_byte = _line(_sweep()["window"])
    m, nc = perf_data().rccl.msccl_allpairs, perf_data().nccl
    assert m.latency_us.value + nc.launch_overhead_us.value == pytest.approx(fixed, abs=0.1)
    busbw = 7 / 4 / per_byte / 1e3  # GB/s: bus factor 2·7/8 over the time a byte adds
    assert m.link_share.value == pytest.approx(busbw / (7 * 48.0), abs=0.001)
    for size, row in _sweep()["window"].items():  # the line holds every row of the window
        assert (fixed + per_byte * size) == pytest.approx(row["time_us"], rel=0.04), size
    for size, row in _sweep()["after"].items():  # past maxBytes the ring runs: the rows leave the line
        assert row["time_us"] < 0.9 * (fixed + per_byte * size), size


def _job(tmp_path, **kw):  # type: ignore[no-untyped-def]
    cluster, plan, _ = build(server_nodes("mi300x-8"), tmp_path)
    return job_for(system_for(cluster, plan), 1, **kw)


def test_one_node_runs_the_all_pairs_in_its_window(tmp_path) -> None:
    """1 MiB and 16 MiB: AMD's link figure and the fitted share give busbw = 7/4·S / (fixed + 2·S/(8·link)),
    link = 48 × share (each link carries S/8 twice)."""
    job = _job(tmp_path)
    m = perf_data().rccl.msccl_allpairs
    fixed = (m.latency_us.value + perf_data().nccl.launch_overhead_us.value) * 1e-6
    link = 48.0 * m.link_share.value * 1e9
    for size in (MIB, 16 * MIB):
        est = estimate("all_reduce", size, job)
        assert est.algorithm == "msccl_allpairs"
        expected = 7 / 4 * size / (fixed + 2 * size / (8 * link)) / 1e9
        assert est.busbw_gbytes == pytest.approx(expected, rel=1e-6)
    rows = _sweep()["window"]  # and so within the fit's 4 % of AMD's own rows
    assert estimate("all_reduce", MIB, job).busbw_gbytes == pytest.approx(rows[MIB]["busbw"], rel=0.04)


@pytest.mark.parametrize(
    ("size", "msccl"), [(524288 - 1, False), (524288, True), (20971520, True), (20971520 + 1, False)]
)
def test_the_window_is_rccls(tmp_path, size: int, msccl: bool) -> None:
    """minBytes="524288" maxBytes="20971520": outside them RCCL's tuner chooses."""
    assert (estimate("all_reduce", size, _job(tmp_path)).algorithm == "msccl_allpairs") is msccl


def test_ranks_sharing_a_process_follow_rccls_setting(tmp_path) -> None:
    """rccl-tests -g 8 (one process drives the node): MSCCL by RCCL's own default (msccl_lifecycle.cc
    `MSCCL_ENABLE_SINGLE_PROCESS`, 1), not with RCCL_MSCCL_ENABLE_SINGLE_PROCESS=0; RCCL_MSCCL_ENABLE=0 turns
    MSCCL off for every layout."""
    assert perf_data().rccl.msccl_single_process_default.value == 1
    shared = ProcessSettings(gpus_per_process=8)
    assert estimate("all_reduce", MIB, _job(tmp_path, process=shared)).algorithm == "msccl_allpairs"
    refused = ProcessSettings(gpus_per_process=8, msccl_single_process=False)
    assert estimate("all_reduce", MIB, _job(tmp_path, process=refused)).algorithm != "msccl_allpairs"
    alone = ProcessSettings(msccl_single_process=False)  # one rank a process: the setting does not apply
    assert estimate("all_reduce", MIB, _job(tmp_path, process=alone)).algorithm == "msccl_allpairs"
    off = ProcessSettings(msccl=False)
    assert estimate("all_reduce", MIB, _job(tmp_path, process=off)).algorithm != "msccl_allpairs"
    with pytest.raises(PerfError, match="9 GPUs a process, but the run has 8 ranks a node"):
        _job(tmp_path, process=ProcessSettings(gpus_per_process=9))


def test_only_where_the_catalogue_says_rccl_turns_msccl_on(tmp_path) -> None:
    """gpus.yaml rccl_msccl: the same node with the flag off gets RCCL's tuner."""
    cluster, plan, _ = build(server_nodes("mi300x-8"), tmp_path)
    system = system_for(cluster, plan)
    assert system.gpu.rccl_msccl and job_for(system, 1).runs_msccl
    unflagged = replace(system, gpu=system.gpu.model_copy(update={"rccl_msccl": False}))
    assert not job_for(unflagged, 1).runs_msccl
    assert estimate("all_reduce", MIB, job_for(unflagged, 1)).algorithm != "msccl_allpairs"


def test_only_on_the_whole_fully_connected_node_rccl_runs_it_on(tmp_path) -> None:
    """Four of the eight GPUs, another collective, or an NVIDIA node: no MSCCL. A run naming NCCL_ALGO or
    NCCL_PROTO keeps it: RCCL hands the call to MSCCL before its tuner reads them (src/collectives.cc)."""
    assert estimate("all_reduce", MIB, _job(tmp_path, ranks_per_node=4)).algorithm != "msccl_allpairs"
    assert estimate("all_gather", MIB, _job(tmp_path)).algorithm != "msccl_allpairs"
    named = estimate("all_reduce", MIB, _job(tmp_path), algorithms=("ring",), protocols=("ll",))
    assert named.algorithm == "msccl_allpairs"
    cluster, plan, _ = build(server_nodes("dgx-h100"), tmp_path, "h100.yaml")
    h100 = job_for(system_for(cluster, plan), 1)
    assert not h100.runs_msccl
    assert estimate("all_reduce", MIB, h100).algorithm != "msccl_allpairs"


def test_estimate_takes_the_gpus_a_process_drives(tmp_path, capsys) -> None:
    _, _, path = build(server_nodes("mi300x-8"), tmp_path)
    base = ["estimate", str(path), "--sizes", "1M", "--format", "json"]
    assert main(base) == 0
    default = json.loads(capsys.readouterr().out)
    assert main([*base, "--gpus-per-process", "8"]) == 0
    one_process = json.loads(capsys.readouterr().out)
    assert main([*base, "--gpus-per-process", "8", "--msccl-single-process", "0"]) == 0
    refused = json.loads(capsys.readouterr().out)
    assert main([*base, "--no-msccl"]) == 0
    off = json.loads(capsys.readouterr().out)
    assert "msccl_allpairs" in json.dumps(default) and "msccl_allpairs" in json.dumps(one_process)
    assert "msccl_allpairs" not in json.dumps(refused) and "msccl_allpairs" not in json.dumps(off)
    for bad in ("0", "-1", "x"):
        with pytest.raises(SystemExit) as exc:
            main([*base, "--gpus-per-process", bad])
        assert exc.value.code == 2
        assert "--gpus-per-process" in capsys.readouterr().err
    assert main([*base, "--gpus-per-process", "9"]) == 2
    assert "9 GPUs a process, but the run has 8 ranks a node" in capsys.readouterr().err


def _amd_output(gpus_per_process: int) -> str:
    """An rccl-tests text output of one MI300X node with its nThread/nGpus header line."""
    text = nccl_text(["mi01"], 8, [(MIB, 60.0), (1 << 30, 310.0)])
    head = (
        f"# nThread 1 nGpus {gpus_per_process} minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5"
    )
    return text.replace("# Using devices", f"{head}\n#\n# Using devices", 1)


def test_acceptance_reads_the_gpus_a_process_drives(tmp_path) -> None:
    (tmp_path / "one.txt").write_text(_amd_output(1))
    (tmp_path / "eight.txt").write_text(_amd_output(8))
    (one,) = read_runs(tmp_path / "one.txt")
    (eight,) = read_runs(tmp_path / "eight.txt")
    assert one.settings.gpus_per_process == 1 and "GPUs a process" not in one.settings.text()
    assert eight.settings.gpus_per_process == 8 and "8 GPUs a process" in eight.settings.text()
    doc = {
        "args": ["all_reduce_perf", "-b", "8", "-e", "1G", "-g", "2", "--nthreads=4"],
        "config": {"devices": [{"rank": r, "hostname": "mi01"} for r in range(8)]},
        "results": [{"size": MIB, "out_of_place": {"time": 30.0, "alg_bw": 35.0, "bus_bw": 60.0}}],
    }
    (tmp_path / "run.json").write_text(json.dumps(doc))
    (run,) = read_runs(tmp_path / "run.json")
    assert run.settings.gpus_per_process == 8
    doc["args"] = ["all_reduce_perf", "-g", "x"]
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    with pytest.raises(ForeignInputError, match=r"\$\.args.*nGpus `x`"):
        read_runs(tmp_path / "bad.json")


@pytest.mark.parametrize("gpus", ["99999999", "-8", "\u0668", "0"])
def test_a_header_that_is_no_count_is_refused_where_it_stands(tmp_path, gpus: str) -> None:
    """nThread / nGpus that are no count (too long, negative, not ASCII digits, zero) are refused at the line,
    never read as one GPU a process."""
    (tmp_path / "run.txt").write_text(_amd_output(1).replace("nGpus 1 ", f"nGpus {gpus} "))
    with pytest.raises(ForeignInputError, match=r"run\.txt:\d+"):
        read_runs(tmp_path / "run.txt")


def test_two_headers_that_disagree_are_refused(tmp_path) -> None:
    text = _amd_output(1)
    second = "# nThread 1 nGpus 8 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5"
    (tmp_path / "run.txt").write_text(text.replace("# Using devices", f"{second}\n# Using devices", 1))
    with pytest.raises(ForeignInputError, match="8 GPUs a process here but 1 at"):
        read_runs(tmp_path / "run.txt")


def test_rccls_msccl_settings_are_read_from_the_output(tmp_path) -> None:
    """RCCL_MSCCL_ENABLE / RCCL_MSCCL_ENABLE_SINGLE_PROCESS as NCCL_DEBUG=INFO echoes them (RCCL_PARAM loads
    "RCCL_" + name through ncclLoadParam: "... set by environment to 0.")."""
    lines = _amd_output(8).split("\n")
    info = [
        "mi01:4242:4242 [0] NCCL INFO RCCL_MSCCL_ENABLE set by environment to 0.",
        "mi01:4242:4242 [0] NCCL INFO RCCL_MSCCL_ENABLE_SINGLE_PROCESS set by environment to 1.",
    ]
    (tmp_path / "run.txt").write_text("\n".join([lines[0], *info, *lines[1:]]))
    (run,) = read_runs(tmp_path / "run.txt")
    assert run.settings.msccl_disabled and run.settings.msccl_single_process
    assert "RCCL_MSCCL_ENABLE=0" in run.settings.text()
    assert "RCCL_MSCCL_ENABLE_SINGLE_PROCESS=1" in run.settings.text()


@pytest.mark.parametrize("header", ["# nThread 1 nGpus", "# nThread  nGpus 8", "# nThread"])
def test_a_header_without_two_counts_is_refused(tmp_path, header: str) -> None:
    lines = [header if line.startswith("# nThread") else line for line in _amd_output(1).split("\n")]
    (tmp_path / "run.txt").write_text("\n".join(lines))
    with pytest.raises(ForeignInputError, match=r"run\.txt:\d+.*holds no two counts"):
        read_runs(tmp_path / "run.txt")


def test_more_gpus_a_process_than_a_host_lists_is_refused(tmp_path) -> None:
    """nGpus 8 on a host whose `# Rank` lines list 4 ranks: no run writes that."""
    text = nccl_text(["mi01"], 4, [(MIB, 60.0)])
    head = "# nThread 1 nGpus 8 minBytes 8 maxBytes 1048576 step: 2(factor) warmup iters: 5"
    (tmp_path / "run.txt").write_text(text.replace("# Using devices", f"{head}\n#\n# Using devices", 1))
    with pytest.raises(ForeignInputError, match="8 GPUs a process, but host mi01 lists 4 rank"):
        read_runs(tmp_path / "run.txt")


def test_the_report_predicts_each_run_as_it_ran(tmp_path, capsys) -> None:
    """acceptance-report: a -g 8 run that set RCCL_MSCCL_ENABLE_SINGLE_PROCESS=0 is predicted with the ring,
    the one-process-per-GPU run with MSCCL."""
    _, _, path = build(server_nodes("mi300x-8"), tmp_path)
    results = tmp_path / "results"
    results.mkdir()
    (results / "all_reduce_g1.txt").write_text(_amd_output(1))
    for name, setting in (
        ("all_reduce_g8.txt", "RCCL_MSCCL_ENABLE_SINGLE_PROCESS set by environment to 0."),
        ("all_reduce_off.txt", "RCCL_MSCCL_ENABLE set by environment to 0."),
        ("all_reduce_4ch.txt", "NCCL_MAX_NCHANNELS set by environment to 4."),
    ):
        lines = _amd_output(8 if name.endswith("g8.txt") else 1).split("\n")
        (results / name).write_text(
            "\n".join([lines[0], f"mi01:4242:4242 [0] NCCL INFO {setting}", *lines[1:]])
        )
    main(["acceptance-report", str(path), "--results", str(results), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    runs = {Path(r["file"]).name: r for r in report["runs"]}
    one, eight = runs["all_reduce_g1.txt"], runs["all_reduce_g8.txt"]
    first = {r["size_bytes"]: r for r in one["sizes"]}
    shared = {r["size_bytes"]: r for r in eight["sizes"]}
    assert first[MIB]["algorithm"] == "msccl_allpairs" and shared[MIB]["algorithm"] == "ring"
    assert eight["gpus_per_process"] == 8 and eight["rccl_msccl_enable_single_process"] == 0
    assert "gpus_per_process" not in one
    off, capped = runs["all_reduce_off.txt"], runs["all_reduce_4ch.txt"]
    assert off["rccl_msccl_enable"] == 0 and capped["nccl_max_nchannels"] == 4
    for run in (off, capped):  # RCCL_MSCCL_ENABLE=0, and fewer channels than MSCCL's 8: RCCL's tuner runs it
        assert {r["size_bytes"]: r for r in run["sizes"]}[MIB]["algorithm"] == "ring"
