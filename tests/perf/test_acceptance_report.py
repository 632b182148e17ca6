"""`blueprint acceptance-report`: real nccl-tests outputs (tests/perf/data/nccl_tests, sources in its README)
and a synthetic acceptance run of 4 DGX H100 with one weak cable, which the report must name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from nccl_text import nccl_json, nccl_text
from perf_blueprints import server_nodes
from ruamel.yaml import YAML

from generator.cli import main
from generator.perf.nccl_results import (
    MAX_NOT_COMPARED_NAMED,
    MAX_RUNS_PER_FILE,
    ResultsError,
    parse_text,
    read_results,
    read_runs,
)

DATA = Path(__file__).resolve().parent / "data" / "nccl_tests"
NDR = {
    "technology": "infiniband-ndr",
    "topology": {"kind": "fat-tree", "switch": "qm9700", "rail_optimized": True},
    "subnet_manager": {"kind": "opensm"},
}
SIZES = [1 << p for p in range(20, 31)]  # 1 MiB .. 1 GiB


def _write(data: dict, path: Path) -> Path:
    with path.open("w") as fh:
        YAML().dump(data, fh)
    return path


# ---- real outputs -------------------------------------------------------------------------------


def test_reads_the_oci_outputs_exactly() -> None:
    (one,) = read_runs(DATA / "oci-bm-gpu4.8-1node-all_reduce.txt")
    (two,) = read_runs(DATA / "oci-bm-gpu4.8-2node-all_reduce.txt")
    assert (one.collective, one.ranks, one.hosts, one.rail) == (
        "all_reduce",
        8,
        ("inst-lscuv-ao-ub24",),
        None,
    )
    assert [(r.size_bytes, r.busbw_gbytes, r.time_us, r.wrong) for r in one.rows] == [
        (10737418240, 232.20, 80922.0, 0.0)
    ]
    assert one.avg_busbw == 232.167
    assert two.hosts == ("inst-li3ob-ao-ub24", "inst-wyzi7-ao-ub24")
    assert (two.ranks, two.nodes, two.ranks_per_node) == (16, 2, 8)
    assert two.rows[0].busbw_gbytes == 191.76


def test_reads_excerpts_from_issues() -> None:
    (gb,) = read_runs(DATA / "gb200-nvl72-all_reduce_perf-excerpt.txt")
    assert [r.size_bytes for r in gb.rows] == [1 << 29, 1 << 30, 1 << 31, 1 << 32, 1 << 33]
    assert [r.busbw_gbytes for r in gb.rows] == [586.06, 681.17, 757.78, 839.16, 834.57]
    assert gb.hosts == ("slurm-gb200-207-171",)
    (h20,) = read_runs(DATA / "nccl-1244-h20-all_reduce-nvlstree-excerpt.txt")
    assert h20.collective == "all_reduce"
    assert [r.size_bytes for r in h20.rows] == [4, 8, 16, 32, 64, 128, 256, 512]  # old format, no root
    assert h20.rows[0].wrong == 0.0 and h20.rows[0].time_us == 47.54


def test_a_log_of_several_programs_is_one_run_each(tmp_path: Path, capsys) -> None:
    """A script that runs each nccl-tests program into one log (xxrjun/nccl-tests-cluster, one H100 node):
    each program's rows are a run of their own, named by the line its output starts at, and sendrecv_perf,
    which the model does not predict, is left out. Read as one run, every row was the last known program's."""
    runs = read_runs(DATA / "xxrjun-cnode3-003-five-programs.log")
    name = "xxrjun-cnode3-003-five-programs.log"
    assert [(r.collective, r.line, r.name) for r in runs] == [
        ("all_reduce", 1, f"{name}:1"),
        ("all_gather", 34, f"{name}:34"),
        ("reduce_scatter", 67, f"{name}:67"),
        ("alltoall", 100, f"{name}:100"),
    ]
    # each run holds its own ten rows: the 16 GiB row of each as the log prints it
    assert [(len(r.rows), r.rows[-1].busbw_gbytes, r.avg_busbw) for r in runs] == [
        (10, 482.12, 437.973),
        (10, 362.06, 327.669),
        (10, 363.74, 330.729),
        (10, 348.09, 311.63),
    ]
    assert {(r.hosts, r.ranks, r.settings.nccl_version) for r in runs} == {(("cnode3-003",), 8, "2.29.2")}
    # a program that stopped before its rows (its header alone) does not take the next one's version line
    lines = (DATA / "xxrjun-cnode3-003-five-programs.log").read_text().split("\n")
    (gather,) = parse_text("\n".join(lines[:17] + lines[33:66]), tmp_path / "stopped.log")
    assert (gather.collective, gather.line, gather.settings.nccl_version, len(gather.rows)) == (
        "all_gather",
        None,
        "2.29.2",
        10,
    )
    # the report keeps the runs apart (and a one-program file is still one run, named without a line)
    bp = _write(server_nodes("dgx-h100", 2, NDR), tmp_path / "bp.yaml")
    results = tmp_path / "results"
    results.mkdir()
    (results / "node.log").write_bytes((DATA / f"{name}").read_bytes())
    (results / "one.txt").write_bytes((DATA / "oci-bm-gpu4.8-1node-all_reduce.txt").read_bytes())
    found, ignored = read_results(results)
    assert [(Path(r.path).name, r.name, r.collective) for r in found] == [
        ("node.log", "node.log:1", "all_reduce"),
        ("node.log", "node.log:34", "all_gather"),
        ("node.log", "node.log:67", "reduce_scatter"),
        ("node.log", "node.log:100", "alltoall"),
        ("one.txt", "one.txt", "all_reduce"),
    ]
    assert ignored == [f"{results / 'node.log'}:133 (sendrecv_perf)"]  # named as not compared, not dropped
    assert main(["acceptance-report", str(bp), "--results", str(results)]) in (0, 1)
    said = capsys.readouterr().out
    assert "not compared (no result of a collective the model predicts): " in said
    assert said.rstrip().endswith("node.log:133 (sendrecv_perf)")
    assert main(["acceptance-report", str(bp), "--results", str(results), "--format", "json"]) in (0, 1)
    out = json.loads(capsys.readouterr().out)
    assert sorted((Path(r["file"]).name, r["line"], r["collective"]) for r in out["runs"]) == [
        ("node.log", 1, "all_reduce"),
        ("node.log", 34, "all_gather"),
        ("node.log", 67, "reduce_scatter"),
        ("node.log", 100, "alltoall"),
        ("one.txt", None, "all_reduce"),
    ]


def test_what_was_not_compared_is_named_up_to_a_bound(tmp_path: Path) -> None:
    """Files without a result of a collective the model predicts are named, the first
    MAX_NOT_COMPARED_NAMED of them, then counted: a folder of hostile files cannot grow the report's list
    without bound."""
    results = tmp_path / "results"
    results.mkdir()
    (results / "a-run.txt").write_bytes((DATA / "oci-bm-gpu4.8-1node-all_reduce.txt").read_bytes())
    for i in range(MAX_NOT_COMPARED_NAMED + 5):
        (results / f"b-note{i:05}.txt").write_text("hello\n")
    runs, ignored = read_results(results)
    assert len(runs) == 1 and len(ignored) == MAX_NOT_COMPARED_NAMED + 1
    assert ignored[0] == str(results / "b-note00000.txt") and ignored[-1] == "5 more"


def test_programs_in_one_file_are_bounded(tmp_path: Path, capsys) -> None:
    """A file is foreign input: headers alone (programs that printed no row) make no run and cost nothing
    kept, and more programs with rows than MAX_RUNS_PER_FILE are refused where the bound is passed."""
    head = "# Collective test starting: all_reduce_perf\n"
    row = "    33554432       4194304    double     sum      -1   182.85  183.50  321.13       0   182.65  183.71  321.49       0\n"
    assert parse_text(head * 200_000, tmp_path / "heads.log") == []
    (one, last) = parse_text((head + row) * 2, tmp_path / "two.log")
    assert (one.line, last.line, len(one.rows), len(last.rows)) == (1, 3, 1, 1)
    results = tmp_path / "results"
    results.mkdir()
    (results / "many.log").write_text((head + row) * (MAX_RUNS_PER_FILE + 1))
    bp = _write(server_nodes("dgx-h100", 2, NDR), tmp_path / "bp.yaml")
    assert main(["acceptance-report", str(bp), "--results", str(results)]) == 2
    err = capsys.readouterr().err
    assert f"many.log:{2 * MAX_RUNS_PER_FILE + 1}" in err and "programs' outputs in one file" in err


OCI_SPEC = {
    "gpu": "a100-40",
    "gpus": 8,
    "gpu_interconnect": "nvlink3",
    "nvlink_domain_gpus": 8,
    "nvswitches": 6,
    "pcie_gen": 4,
    "power_kw": 6.5,
    "rack_units": 4,
    "nics": [{"purpose": "compute", "model": "cx6-dx", "count": 16, "ports": 1, "speed_gbps": 100}],
}


def test_oci_runs_against_the_model(tmp_path: Path, capsys) -> None:
    """BM.GPU4.8 (8×A100-40GB, 16×100G RoCE): both published runs sit within the threshold of the model."""
    bp = server_nodes(
        "dgx-a100",
        2,
        {"technology": "roce-v2-100", "topology": {"kind": "fat-tree", "switch": "sn4600c"}, "lossless": {}},
    )
    bp["pools"][0] = {"name": "gpu", "count": 2, "spec": OCI_SPEC}
    path = _write(bp, tmp_path / "oci.yaml")
    results = tmp_path / "results"
    results.mkdir()
    for name in ("oci-bm-gpu4.8-1node-all_reduce.txt", "oci-bm-gpu4.8-2node-all_reduce.txt"):
        (results / name).write_bytes((DATA / name).read_bytes())
    code = main(["acceptance-report", str(path), "--results", str(results), "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0, out
    runs = {Path(r["file"]).name: r for r in out["runs"]}
    one = runs["oci-bm-gpu4.8-1node-all_reduce.txt"]
    two = runs["oci-bm-gpu4.8-2node-all_reduce.txt"]
    assert one["measured_busbw_gbytes"] == 232.2 and two["measured_busbw_gbytes"] == 191.76
    # NCCL's A100 ring: 12 NVLinks × 20 GB/s = 240 GB/s; the measurement is 3 % below
    assert one["predicted_busbw_gbytes"] == pytest.approx(240.0 * 0.999, rel=0.01)
    assert 0.85 <= two["ratio"] <= 1.15
    assert out["unknown_hosts"] == ["inst-li3ob-ao-ub24", "inst-lscuv-ao-ub24", "inst-wyzi7-ao-ub24"]
    assert not out["suspects"]


# ---- synthetic acceptance run with one weak cable -----------------------------------------------


def _text(hosts: list[str], gpus_per_node: int, rows: list[tuple[int, float]]) -> str:
    return nccl_text(hosts, gpus_per_node, rows)


# DGX H100 compute ports in rail order (NVIDIA DGX H100/H200 User Guide, Table 6; the catalogue's port map)
DGX_H100_RAILS = ("mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11")


def _curve(plateau: float) -> list[tuple[int, float]]:
    """A bandwidth curve rising to ``plateau`` (half of it at 8 MiB), as nccl-tests curves do."""
    return [(s, round(plateau * s / (s + (8 << 20)), 2)) for s in SIZES]


@pytest.fixture()
def acceptance_run(tmp_path: Path) -> tuple[Path, Path]:
    """4 DGX H100, 8 NDR rails; one-rail runs between ring neighbours on every rail (half text named
    rail<i> as the acceptance role names them, half JSON whose only rail mark is NCCL_IB_HCA = the rail's
    device, as a user's own -J run records it); gpu003's rail-5 cable trained at HDR: its two runs reach
    24 GB/s (one HDR NIC) instead of 47 (one NDR)."""
    bp = _write(server_nodes("dgx-h100", 4, NDR), tmp_path / "bp.yaml")
    results = tmp_path / "results"
    results.mkdir()
    hosts = [f"gpu{i:03d}" for i in range(1, 5)]
    for rail in range(8):
        for i in range(4):
            pair = [hosts[i], hosts[(i + 1) % 4]]
            plateau = 24.0 if (rail == 5 and "gpu003" in pair) else 47.0
            rows = _curve(plateau)
            if (rail + i) % 2:
                hca = f"={DGX_H100_RAILS[rail]}:1"
                (results / f"all_reduce_perf-{pair[0]}-{pair[1]}-run{rail}.json").write_text(
                    nccl_json(pair, hca, rows)
                )
            else:
                stem = f"all_reduce_perf-rail{rail}-{pair[0]}-{pair[1]}"
                (results / f"{stem}.txt").write_text(_text(pair, 1, rows))
    for host in hosts:  # single-node NVLink runs, healthy (NVLS ~480 GB/s)
        (results / f"all_reduce_perf-{host}-nvlink.txt").write_text(_text([host], 8, _curve(480.0)))
    return bp, results


def test_finds_the_weak_cable(acceptance_run, capsys, tmp_path: Path) -> None:
    bp, results = acceptance_run
    plot = tmp_path / "busbw.svg"
    code = main(
        ["acceptance-report", str(bp), "--results", str(results), "--format", "json", "--plot", str(plot)]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 1
    low = sorted(Path(r["file"]).name for r in out["runs"] if r["low"])
    # the JSON run's NCCL_IB_HCA==mlx5_9:1 is rail 5 on a DGX H100 (the plan's port), not rail 9
    assert low == ["all_reduce_perf-gpu003-gpu004-run5.json", "all_reduce_perf-rail5-gpu002-gpu003.txt"]
    assert {r["rail"] for r in out["runs"] if r["format"] == "json"} == set(range(8))
    assert [(s["kind"], s["name"]) for s in out["suspects"]] == [("link", "gpu003 rail 5")]
    cables = out["suspects"][0]["cables"]
    # cables are numbered node by node, rail by rail: gpu003 (3rd node) rail 5 = 2·8 + 6 = 22; on a DGX
    # H100 rail 5 is mlx5_9 (DGX H100/H200 User Guide, Table 6: rails in GPU order are mlx5_0,3,4,5,6,9,10,11)
    assert [(c["cable"], c["node_port"], c["switch"]) for c in cables] == [
        ("C-NL-000022", "mlx5_9/1", "c-leaf-su1-r5")
    ]
    healthy = [r for r in out["runs"] if not r["low"] and r["rail"] is not None]
    assert all(0.9 < r["ratio"] < 1.1 for r in healthy)  # 47 GB/s against one NDR NIC's prediction
    assert plot.read_bytes().startswith(b"<?xml")


def test_text_report_points_to_the_cable(acceptance_run, capsys) -> None:
    bp, results = acceptance_run
    assert main(["acceptance-report", str(bp), "--results", str(results)]) == 1
    text = capsys.readouterr().out
    assert "link gpu003 rail 5" in text
    assert "C-NL-000022: gpu003 mlx5_9/1 <-> c-leaf-su1-r5" in text
    assert "rail 5 " in text and "node gpu003" in text


def test_healthy_run_exits_zero(acceptance_run, capsys) -> None:
    bp, results = acceptance_run
    for f in [*results.glob("*rail5*gpu003*"), *results.glob("*gpu003*run5*")]:
        f.unlink()
    assert main(["acceptance-report", str(bp), "--results", str(results)]) == 0


def test_every_run_low_is_cluster_wide(tmp_path: Path, capsys) -> None:
    bp = _write(server_nodes("dgx-h100", 2, NDR), tmp_path / "bp.yaml")
    results = tmp_path / "r"
    results.mkdir()
    for rail in range(2):
        (results / f"all_reduce_perf-rail{rail}.txt").write_text(_text(["gpu001", "gpu002"], 1, _curve(12.0)))
    assert main(["acceptance-report", str(bp), "--results", str(results)]) == 1
    assert "cluster-wide cause" in capsys.readouterr().out


def test_one_gpu_a_node_is_held_to_its_own_nic(tmp_path: Path, capsys) -> None:
    """A run of one GPU a node on every rail (no NCCL_IB_HCA) reaches one NIC, the one nearest its GPU
    (NCCL's ncclTopoGetLocalNet): ~48 GB/s on NDR is healthy, not 0.13 of eight NICs."""
    bp = _write(server_nodes("dgx-h100", 2, NDR), tmp_path / "bp.yaml")
    results = tmp_path / "r"
    results.mkdir()
    (results / "all_reduce_perf-1gpu.txt").write_text(_text(["gpu001", "gpu002"], 1, _curve(48.0)))
    assert main(["acceptance-report", str(bp), "--results", str(results), "--format", "json"]) == 0
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert (run["nodes"], run["ranks"], run["rail"], run["low"]) == (2, 2, None, False)
    assert 0.9 < run["ratio"] < 1.1


def test_bad_json_is_located(tmp_path: Path, capsys) -> None:
    bp = _write(server_nodes("dgx-h100", 2, NDR), tmp_path / "bp.yaml")
    results = tmp_path / "r"
    results.mkdir()
    (results / "all_reduce_perf.json").write_text('{"version": 2,\n  "results": [\n')
    assert main(["acceptance-report", str(bp), "--results", str(results)]) == 2
    err = capsys.readouterr().err
    assert "all_reduce_perf.json:3:1" in err.replace("\n", "")


def test_empty_results_dir_is_an_error(tmp_path: Path, capsys) -> None:
    bp = _write(server_nodes("dgx-h100", 2, NDR), tmp_path / "bp.yaml")
    (tmp_path / "r").mkdir()
    assert main(["acceptance-report", str(bp), "--results", str(tmp_path / "r")]) == 2
    with pytest.raises(ResultsError):
        read_results(tmp_path / "nothing")
    assert parse_text("hello\n", tmp_path / "x.txt") == []


def test_finds_a_degraded_rail(tmp_path: Path, capsys) -> None:
    """Every rail-3 run at one HDR NIC's 24 GB/s (a misconfigured leaf / rail): the report names rail 3 and
    its leaf switch with the four cables, not four separate links."""
    bp = _write(server_nodes("dgx-h100", 4, NDR), tmp_path / "bp.yaml")
    results = tmp_path / "results"
    results.mkdir()
    hosts = [f"gpu{i:03d}" for i in range(1, 5)]
    for rail in range(8):
        for i in range(4):
            pair = [hosts[i], hosts[(i + 1) % 4]]
            rows = _curve(24.0 if rail == 3 else 47.0)
            (results / f"all_reduce_perf-rail{rail}-{pair[0]}-{pair[1]}.txt").write_text(_text(pair, 1, rows))
    assert main(["acceptance-report", str(bp), "--results", str(results), "--format", "json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert [(s["kind"], s["name"]) for s in out["suspects"]] == [("rail", "3"), ("switch", "c-leaf-su1-r3")]
    # node n's rail-3 cable is the (8(n-1) + 4)-th: C-NL-000004, -12, -20, -28
    assert [c["cable"] for c in out["suspects"][0]["cables"]] == [
        "C-NL-000004",
        "C-NL-000012",
        "C-NL-000020",
        "C-NL-000028",
    ]


def test_a_device_that_is_no_compute_rail_is_an_error_row(tmp_path: Path, capsys) -> None:
    """NCCL_IB_HCA naming a device the plan does not cable as a compute rail (mlx5_1 is not one of a DGX
    H100's compute ports): the run is reported as not predictable, never put on rail 1."""
    bp = _write(server_nodes("dgx-h100", 2, NDR), tmp_path / "bp.yaml")
    results = tmp_path / "r"
    results.mkdir()
    (results / "a.json").write_text(nccl_json(["gpu001", "gpu002"], "=mlx5_1:1", _curve(47.0)))
    (results / "b.json").write_text(nccl_json(["gpu001", "gpu002"], "mlx5_9", _curve(47.0)))
    assert main(["acceptance-report", str(bp), "--results", str(results), "--format", "json"]) == 1
    runs = {Path(r["file"]).name: r for r in json.loads(capsys.readouterr().out)["runs"]}
    assert runs["a.json"]["rail"] is None
    assert runs["a.json"]["error"] == (
        "NCCL_IB_HCA `=mlx5_1:1` selects none of gpu001's compute ports in the plan (mlx5_0:1, mlx5_3:1, "
        "mlx5_4:1, mlx5_5:1, mlx5_6:1, mlx5_9:1, mlx5_10:1, mlx5_11:1)"
    )
    assert runs["b.json"]["rail"] == 5 and runs["b.json"]["error"] is None


def test_a_cable_without_a_planned_rail_gets_none_from_its_device_number() -> None:
    """The suspects' rail is the plan's: a device's number is not its rail (DGX H100 User Guide Table 6:
    compute rail 5 is mlx5_9), so a link the plan gives no rail is not put on rail 9."""
    from generator.perf.acceptance import _cable
    from generator.plan.model import Endpoint, Link

    node, leaf = Endpoint("gpu001", "mlx5_9/1", 1), Endpoint("leaf01", "17", 17)
    kinds = {"gpu001": "node", "leaf01": "switch"}
    unplanned = _cable(Link("C-NL-000001", "compute", "node_leaf", node, leaf, 400.0), kinds)
    planned = _cable(Link("C-NL-000002", "compute", "node_leaf", leaf, node, 400.0, rail=5), kinds)
    assert unplanned is not None and unplanned.rail is None
    assert planned is not None and (planned.node, planned.rail) == ("gpu001", 5)


def test_runs_on_hosts_not_in_the_plan_calibrate_nothing(tmp_path: Path, capsys) -> None:
    """A run whose hosts are all other machines passed and `--calibrate` recorded its factor as this
    blueprint's; it is still compared (a site's names may differ from the plan's), but calibrates nothing,
    and the report says how many runs were such, naming at most MAX_UNKNOWN_HOSTS_NAMED hosts."""
    from generator.perf.acceptance import MAX_UNKNOWN_HOSTS_NAMED

    bp = _write(server_nodes("dgx-h100", 4, NDR), tmp_path / "bp.yaml")
    results = tmp_path / "r"
    results.mkdir()
    others = [f"other{i:02d}" for i in range(1, 5)]
    (results / "all_reduce_perf-4n.txt").write_text(_text(others, 8, _curve(300.0)))
    cal = tmp_path / "cal.yaml"
    code = main(["acceptance-report", str(bp), "--results", str(results), "--calibrate", str(cal)])
    err = capsys.readouterr().err
    assert code == 2 and not cal.exists(), err
    assert "ran on host(s) not in the plan (other01, other02, other03, other04)" in err
    main(["acceptance-report", str(bp), "--results", str(results)])
    text = capsys.readouterr().out
    assert "1 of 1 run(s) ran on hosts not in the plan: they say nothing of its cables" in text
    many = [f"n{i:06d}" for i in range(MAX_UNKNOWN_HOSTS_NAMED + 25)]
    (results / "all_reduce_perf-4n.txt").write_text(_text(many[:4], 8, _curve(300.0)))
    for k in range(0, len(many), 4):
        (results / f"all_reduce_perf-{k}.txt").write_text(_text(many[k : k + 4], 8, _curve(300.0)))
    main(["acceptance-report", str(bp), "--results", str(results), "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert len(out["unknown_hosts"]) == MAX_UNKNOWN_HOSTS_NAMED and out["unknown_hosts_more"] == 25


def test_a_line_far_longer_than_any_result_row_is_not_split_into_words(tmp_path: Path) -> None:
    """One 63 MB line of `10 ` tokens, under the per-file limit, took 1.8 GB to split into words (the out
    of memory message blamed "this design"); a line past MAX_ROW_CHARS is no result row and is passed by."""
    from generator.perf.nccl_results import MAX_ROW_CHARS, parse_text

    text = _text(["gpu001", "gpu002"], 8, _curve(300.0))
    long_line = "10 " * (MAX_ROW_CHARS // 3 + 1)
    runs = parse_text(text + long_line + "\n", tmp_path / "all_reduce_perf.txt")
    plain = parse_text(text, tmp_path / "all_reduce_perf.txt")
    assert [r.rows for r in runs] == [r.rows for r in plain] and runs


def test_a_calibration_of_another_nccl_release_is_said(tmp_path: Path, capsys) -> None:
    """Factors calibrated on NCCL 2.26.2 runs took a 2.18.5 run's prediction (266 -> 214 GB/s) without a
    word, where `estimate` warns: the report says so, in its header and its JSON."""
    bp = _write(server_nodes("dgx-h100", 4, NDR), tmp_path / "bp.yaml")
    hosts = [f"gpu{i:03d}" for i in range(1, 5)]
    runs226, runs218 = tmp_path / "r226", tmp_path / "r218"
    runs226.mkdir()
    runs218.mkdir()
    text = _text(hosts, 8, _curve(200.0))
    (runs226 / "all_reduce_perf-4n.txt").write_text(text)
    (runs218 / "all_reduce_perf-4n.txt").write_text(text.replace("=22602", "=21805"))
    cal = tmp_path / "cal.yaml"
    assert main(["acceptance-report", str(bp), "--results", str(runs226), "--calibrate", str(cal)]) in (0, 1)
    capsys.readouterr()
    main(["acceptance-report", str(bp), "--results", str(runs226), "--calibration", str(cal)])
    assert "warning: its factors" not in capsys.readouterr().out
    main(["acceptance-report", str(bp), "--results", str(runs218), "--calibration", str(cal)])
    assert (
        "warning: its factors were measured with NCCL 2.26.2, and runs of NCCL 2.18.5"
        in capsys.readouterr().out
    )
    main(
        [
            "acceptance-report",
            str(bp),
            "--results",
            str(runs218),
            "--calibration",
            str(cal),
            "--format",
            "json",
        ]
    )
    assert json.loads(capsys.readouterr().out)["calibration_other_releases"] == ["2.18.5"]


def test_a_run_far_above_its_prediction_is_an_error_row(tmp_path: Path, capsys) -> None:
    """99,999 GB/s, and an all-rail log named as a one-rail run (240 GB/s over one 50 GB/s NIC), were `ok`
    and the report clean: past the 2x a calibration may scale the model, a run is an error row."""
    bp = _write(server_nodes("dgx-h100", 4, NDR), tmp_path / "bp.yaml")
    results = tmp_path / "r"
    results.mkdir()
    (results / "all_reduce_perf-rail3-gpu001-gpu002.txt").write_text(
        _text(["gpu001", "gpu002"], 1, _curve(240.0))
    )
    code = main(["acceptance-report", str(bp), "--results", str(results), "--format", "json"])
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert code == 1 and "x the prediction, past the 2x a site calibration may scale it" in run["error"], run
    (results / "all_reduce_perf-rail3-gpu001-gpu002.txt").write_text(
        _text(["gpu001", "gpu002"], 1, _curve(47.0))
    )
    assert main(["acceptance-report", str(bp), "--results", str(results)]) == 0


@pytest.mark.parametrize("tag", ["0: ", " 0: ", "[1,0]<stdout>:", "[1,0]<stdout>: "])
def test_a_log_a_launcher_tagged_reads_as_the_plain_one(tmp_path: Path, tag: str) -> None:
    """`srun -l` prefixes each line with its task id and Open MPI's `--tag-output` with `[job,rank]<stdout>:`:
    such a log was "no nccl-tests results found"; the tags are taken off."""
    from generator.perf.nccl_results import parse_text

    text = _text(["gpu001", "gpu002"], 8, _curve(300.0))
    tagged = "".join(tag + line for line in text.splitlines(keepends=True))
    plain = parse_text(text, tmp_path / "all_reduce_perf.txt")
    runs = parse_text(tagged, tmp_path / "all_reduce_perf.txt")
    assert plain and [(r.hosts, r.rows) for r in runs] == [(r.hosts, r.rows) for r in plain]
    # after an untagged preamble (the job script's `env`) longer than a first look would read
    runs = parse_text("PATH=/usr/bin\n" * 600 + tagged, tmp_path / "all_reduce_perf.txt")
    assert [(r.hosts, r.rows) for r in runs] == [(r.hosts, r.rows) for r in plain]


def test_calibrate_to_standard_output_is_refused(tmp_path: Path, capsys) -> None:
    bp = _write(server_nodes("dgx-h100", 2, NDR), tmp_path / "bp.yaml")
    results = tmp_path / "r"
    results.mkdir()
    (results / "all_reduce_perf-2n.txt").write_text(_text(["gpu001", "gpu002"], 8, _curve(300.0)))
    assert main(["acceptance-report", str(bp), "--results", str(results), "--calibrate", "-"]) == 2
    assert "--calibrate -: give a file name" in capsys.readouterr().err
    assert not Path("-").exists()
