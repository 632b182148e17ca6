"""Forms of nccl-tests and rccl-tests output that `acceptance-report` refused or misread: a -J file of a
process that drives several GPUs, a -J file nccl-tests numbered because its path existed, old-format logs of
several programs one after another, and rccl-tests' `# nThread:` header. Formats: NVIDIA/nccl-tests src/util.cu
(commit cfa8a9674b467b8e200775a62b09ff11d4c363ac) and ROCm/rccl-tests src/common.cu (commit
043eef69996a825698c5679d8419ee12768740d0)."""

from __future__ import annotations

import json
from pathlib import Path

from nccl_text import nccl_text
from perf_blueprints import server_nodes
from ruamel.yaml import YAML

from generator.cli import main
from generator.perf.nccl_results import read_results, read_runs


def _json(hosts: list[str], gpus_per_process: int) -> str:
    """One `config.devices` entry a process, as writeDeviceReport writes it (parseRankInfo reads the first
    `# Rank` line of each process's block: rank = process x GPUs a process)."""
    devices = [
        {"rank": p * gpus_per_process, "group": 0, "pid": 100 + p, "hostname": h, "device": 0}
        for p, h in enumerate(hosts)
    ]
    body = {"time": 45000.0, "alg_bw": 23.8, "bus_bw": 41.7, "nwrong": 0.0}
    return json.dumps(
        {
            "version": 1,
            "args": ["./build/all_reduce_perf", "-b", "1G", "-e", "1G", "-g", str(gpus_per_process)],
            "env": [],
            "nccl_version": 22602,
            "config": {"nthreads": 1, "ngpus": gpus_per_process, "devices": devices},
            "results": [{"size": 1 << 30, "out_of_place": body, "in_place": body}],
            "out_of_bounds": {"count": 0, "okay": "true"},
        }
    )


def test_a_json_file_of_processes_of_eight_gpus_is_read(tmp_path: Path) -> None:
    """`-g 8` on two hosts: two entries stand for sixteen ranks. It was refused: "8 GPUs a process, but host
    gpu001 lists 1 rank(s)"."""
    path = tmp_path / "all_reduce.json"
    path.write_text(_json(["gpu001", "gpu002"], 8))
    (run,) = read_runs(path)
    assert (run.ranks, run.hosts, run.ranks_per_node, run.settings.gpus_per_process) == (
        16,
        ("gpu001", "gpu002"),
        8,
        8,
    )


def test_a_json_file_listing_every_rank_is_read_as_it_stands(tmp_path: Path) -> None:
    """A file with an entry a rank (consecutive ranks, so not nccl-tests' process entries) is not spread."""
    doc = json.loads(_json(["gpu001"] * 8, 1))
    doc["args"] += ["-g", "8"]
    doc["config"]["devices"] = [{"rank": r, "hostname": "gpu001"} for r in range(8)]
    path = tmp_path / "all_reduce.json"
    path.write_text(json.dumps(doc))
    (run,) = read_runs(path)
    assert (run.ranks, run.hosts) == (8, ("gpu001",))


def test_a_numbered_json_file_is_a_result_too(tmp_path: Path) -> None:
    """nccl-tests never replaces a -J file: a second run into `out.json` writes `out.json.0` (jsonOutputInit).
    It was neither read nor named."""
    (tmp_path / "out.json").write_text(_json(["gpu001", "gpu002"], 8))
    (tmp_path / "out.json.0").write_text(_json(["gpu003", "gpu004"], 8))
    runs, not_compared = read_results(tmp_path)
    assert sorted(r.hosts for r in runs) == [("gpu001", "gpu002"), ("gpu003", "gpu004")] and not not_compared


OLD_PROGRAM = """# nThread 1 nGpus 1 minBytes 1073741824 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20 validation: 1
#
# Using devices
#   Rank  0 Pid  11 on     gpu001 device  0 [0x27] A100-SXM4-40GB
#   Rank  1 Pid  12 on     gpu002 device  0 [0x27] A100-SXM4-40GB
#
#                                                     out-of-place                       in-place
#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error
#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
  1073741824     268435456   float     sum    45688   23.50   {busbw}  0e+00    45690   23.50   {busbw}  0e+00
# Out of bounds values : 0 OK
# Avg bus bandwidth    : {busbw}
#
"""


def test_old_format_programs_one_after_another_are_runs_of_their_own(tmp_path: Path) -> None:
    """Releases without a version or `# Collective test starting` line open each program with `# nThread`:
    two programs' outputs in one log were one run of both rows (1 GiB twice, averaged)."""
    path = tmp_path / "all_reduce_perf.log"
    path.write_text(OLD_PROGRAM.format(busbw="47.00") + OLD_PROGRAM.format(busbw="12.00"))
    runs = read_runs(path)
    assert [[r.busbw_gbytes for r in run.rows] for run in runs] == [[47.0], [12.0]]
    assert [run.line for run in runs] == [1, 14]


def test_the_rccl_tests_header_is_read(tmp_path: Path) -> None:
    """rccl-tests prints `# nThread: 1 nGpus: 8 minBytes: ...`: it was refused ("holds no two counts")."""
    text = OLD_PROGRAM.format(busbw="47.00").replace(
        "# nThread 1 nGpus 1 minBytes 1073741824 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20",
        "# nThread: 1 nGpus: 1 minBytes: 1073741824 maxBytes: 1073741824 step: 2(factor) warmupIters: 5 iters: 20",
    )
    assert text.startswith("# nThread: 1 nGpus: 1")
    path = tmp_path / "all_reduce_perf.log"
    path.write_text(text)
    (run,) = read_runs(path)
    assert (run.ranks, run.settings.gpus_per_process, run.rows[0].busbw_gbytes) == (2, 1, 47.0)


def test_a_run_split_into_communicators_is_not_predicted_as_one(tmp_path: Path, capsys) -> None:
    """NCCL_TESTS_SPLIT_MASK=0x1 on two nodes of two GPUs: ranks 0 and 2 form one communicator and 1 and 3
    another (nccl-tests' `Group` column is the color). It was compared as one run of four ranks; now it is an
    ERROR row that says why, and a run of one communicator stays as it was."""
    text = nccl_text(["gpu001", "gpu002"], 2, [(1 << 30, 47.0)])
    split = "\n".join(
        line.replace("Group  0", f"Group  {int(line.split()[2]) % 2}") if line.startswith("#  Rank") else line
        for line in text.split("\n")
    )
    results = tmp_path / "r"
    results.mkdir()
    (results / "all_reduce_perf.txt").write_text(split)
    bp = tmp_path / "bp.yaml"
    ndr = {"technology": "infiniband-ndr", "topology": {"kind": "fat-tree", "switch": "qm9700"}}
    with bp.open("w") as fh:
        YAML().dump(server_nodes("dgx-h100", 2, {**ndr, "subnet_manager": {"kind": "opensm"}}), fh)
    assert main(["acceptance-report", str(bp), "--results", str(results), "--format", "json"]) == 1
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert run["error"].startswith("its ranks form 2 communicators (the Group column: NCCL_TESTS_SPLIT_MASK)")
    (results / "all_reduce_perf.txt").write_text(text)
    main(["acceptance-report", str(bp), "--results", str(results), "--format", "json"])
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert run["error"] is None


def test_a_json_file_names_its_communicators_in_devices_group(tmp_path: Path) -> None:
    doc = json.loads(_json(["gpu001", "gpu002", "gpu003", "gpu004"], 1))
    for i, dev in enumerate(doc["config"]["devices"]):
        dev["group"] = i % 2
    path = tmp_path / "all_reduce.json"
    path.write_text(json.dumps(doc))
    assert read_runs(path)[0].communicators == 2
    path.write_text(_json(["gpu001", "gpu002"], 8))
    assert read_runs(path)[0].communicators == 1
