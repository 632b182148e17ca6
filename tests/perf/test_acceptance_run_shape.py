"""`blueprint acceptance-report` holds a run to the shape it really had: the rails its NCCL_IB_HCA lets it
use, read as NCCL reads the variable, the rail its file name names, and the hosts and ranks its output lists.
A run the model cannot predict as it ran is an ERROR row that says why, never compared with the prediction of
another shape (a two-host run with the one node the pool has, a run on two rails with one on all eight).

NCCL_IB_HCA: NVIDIA/nccl src/transport/net_ib.cc ncclIbInit (commit 48bb7fec) and src/misc/utils.cc
parseStringList / matchIfList (commit 01d18366): `^` excludes, `=` matches whole names, otherwise each entry
is a name prefix (`strncmp(name, entry, strlen(entry))`), `:N` a port, at most 32 entries. The DGX H100's
compute ports, in rail order, are mlx5_0, 3, 4, 5, 6, 9, 10, 11 (DGX H100 User Guide, Table 6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from nccl_text import nccl_json, nccl_text
from perf_blueprints import server_nodes
from ruamel.yaml import YAML

from generator.cli import main
from generator.foreign import ForeignInputError
from generator.perf.ib_hca import parse_hca

NDR = {
    "technology": "infiniband-ndr",
    "topology": {"kind": "fat-tree", "switch": "qm9700", "rail_optimized": True},
    "subnet_manager": {"kind": "opensm"},
}
PAIR = ["gpu001", "gpu002"]
ROWS = [(1 << 30, 47.0), (2 << 30, 47.0)]  # one NDR NIC's worth: a healthy one-rail run
DGX_H100_DEVICES = [f"mlx5_{i}" for i in range(12)]
COMPUTE = ["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"]


def _selected(value: str) -> list[str]:
    hca = parse_hca(value, "test")
    return [d for d in DGX_H100_DEVICES if hca.selects(d, 1)]


@pytest.mark.parametrize(
    ("value", "selected"),
    [
        # a prefix: mlx5_1 is also the start of mlx5_10 and mlx5_11
        ("mlx5_1", ["mlx5_1", "mlx5_10", "mlx5_11"]),
        ("=mlx5_1", ["mlx5_1"]),
        ("mlx5", DGX_H100_DEVICES),
        ("^mlx5_1", [d for d in DGX_H100_DEVICES if d not in ("mlx5_1", "mlx5_10", "mlx5_11")]),
        ("^=mlx5_1,mlx5_2,mlx5_7,mlx5_8", COMPUTE),  # storage and in-band ports left out by name
        ("=mlx5_0:1,mlx5_3:1", ["mlx5_0", "mlx5_3"]),
        ("=mlx5_0:2", []),  # port 2 of a one-port device
        ("", DGX_H100_DEVICES),  # set but empty: no list, every port
        ("^", []),  # an empty exclusion list excludes everything (matchIfList's empty list matches all)
        ("=mlx5_0,,mlx5_3", ["mlx5_0", "mlx5_3"]),  # empty entries add nothing
        ("=:1,mlx5_3", ["mlx5_3"]),  # nor does one without a name
        ("=mlx5_0:x", []),  # atoi("x") is port 0: no port matches
    ],
)
def test_nccl_ib_hca_selects_what_nccl_selects(value: str, selected: list[str]) -> None:
    assert _selected(value) == selected


def test_only_nccls_first_32_entries_count() -> None:
    """parseStringList stops at MAX_IB_DEVS (32) entries: a 33rd selects nothing."""
    names = [f"=dev{i}" if i == 0 else f"dev{i}" for i in range(33)]
    hca = parse_hca(",".join(names), "test")
    assert hca.selects("dev31", 1) and not hca.selects("dev32", 1)


def test_values_nccl_cannot_hold_are_refused_where_they_stand() -> None:
    with pytest.raises(
        ForeignInputError, match=r"^x: NCCL_IB_HCA entry `a{63}\.\.\.` is longer than NCCL's 63"
    ):
        parse_hca("a" * 64, "x")
    with pytest.raises(ForeignInputError, match=r"^y: NCCL_IB_HCA: its value is no list"):
        parse_hca("mlx5_0\x00", "y")


# ---- acceptance-report ----------------------------------------------------------------------------------


def _report(tmp_path: Path, files: dict[str, str], capsys, nodes: int = 2) -> tuple[int, dict]:
    bp = tmp_path / "bp.yaml"
    with bp.open("w") as fh:
        YAML().dump(server_nodes("dgx-h100", nodes, NDR), fh)
    results = tmp_path / "r"
    results.mkdir(exist_ok=True)
    for name, text in files.items():
        (results / name).write_text(text)
    code = main(["acceptance-report", str(bp), "--results", str(results), "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def _runs(report: dict) -> dict[str, dict]:
    return {Path(r["file"]).name: r for r in report["runs"]}


def test_a_prefix_that_selects_two_rails_is_no_one_rail_run(tmp_path: Path, capsys) -> None:
    """NCCL_IB_HCA=mlx5_1 (no `=`) on a DGX H100 selects mlx5_10 and mlx5_11, rails 6 and 7: the run used two
    NICs, so it is neither held to one NIC's bandwidth nor to eight."""
    code, report = _report(tmp_path, {"a.json": nccl_json(PAIR, "mlx5_1", ROWS)}, capsys)
    run = _runs(report)["a.json"]
    assert code == 1 and run["rail"] is None and run["predicted_busbw_gbytes"] == 0.0
    assert run["error"] == (
        "NCCL_IB_HCA `mlx5_1` selects the ports of rails 6, 7 of 0, 1, 2, 3, 4, 5, 6, 7 on gpu001: the model "
        "predicts a run on one rail or on all of them"
    )


def test_the_same_device_exactly_is_its_rail(tmp_path: Path, capsys) -> None:
    """`=mlx5_10` is rail 6's port alone (a prefix `mlx5_10` would be the same here: no mlx5_10x exists)."""
    code, report = _report(
        tmp_path,
        {"a.json": nccl_json(PAIR, "=mlx5_10", ROWS), "b.json": nccl_json(PAIR, "mlx5_10:1", ROWS)},
        capsys,
    )
    runs = _runs(report)
    assert code == 0 and runs["a.json"]["rail"] == 6 and runs["b.json"]["rail"] == 6
    assert runs["a.json"]["error"] is None and not runs["a.json"]["low"]


@pytest.mark.parametrize(
    "value",
    [
        "=" + ",".join(f"{d}:1" for d in COMPUTE),  # what the generated NCCL role sets
        "^=mlx5_1,mlx5_2,mlx5_7,mlx5_8",
        "mlx5",
    ],
)
def test_every_compute_port_is_a_whole_pool_run(tmp_path: Path, capsys, value: str) -> None:
    rows = [(1 << 30, 450.0), (2 << 30, 450.0)]
    code, report = _report(tmp_path, {"a.json": nccl_json(PAIR, value, rows, gpus_per_node=8)}, capsys)
    (run,) = report["runs"]
    assert code == 0 and run["rail"] is None and run["error"] is None and run["predicted_busbw_gbytes"] > 100


def test_some_of_the_rails_is_an_error_row(tmp_path: Path, capsys) -> None:
    code, report = _report(tmp_path, {"a.json": nccl_json(PAIR, "=mlx5_0,mlx5_3", ROWS)}, capsys)
    assert code == 1
    assert report["runs"][0]["error"].startswith(
        "NCCL_IB_HCA `=mlx5_0,mlx5_3` selects the ports of rails 0, 1 of"
    )


def test_a_text_log_names_its_nccl_ib_hca(tmp_path: Path, capsys) -> None:
    """NCCL_DEBUG=INFO prints `NCCL_IB_HCA set to <value>` once a process (net_ib.cc ncclIbInit): a log whose
    file name names no rail is a one-rail run all the same."""
    text = nccl_text(PAIR, 1, ROWS)
    info = "".join(
        f"{h}:{1000 + i}:{1000 + i} [0] NCCL INFO NCCL_IB_HCA set to =mlx5_9:1\n" for i, h in enumerate(PAIR)
    )
    code, report = _report(tmp_path, {"all_reduce_perf.log": info + text}, capsys)
    (run,) = report["runs"]
    assert code == 0 and run["rail"] == 5 and not run["low"] and run["error"] is None


def test_one_port_a_rank_is_the_whole_server(tmp_path: Path, capsys) -> None:
    """A wrapper giving each local rank its own port prints a different value per process: together they are
    every rail, and the run is predicted as one on all of them."""
    text = nccl_text(PAIR, 8, [(1 << 30, 450.0), (2 << 30, 450.0)])
    info = "".join(
        f"{h}:{2000 + r}:{2000 + r} [{r}] NCCL INFO NCCL_IB_HCA set to ={COMPUTE[r]}:1\n"
        for h in PAIR
        for r in range(8)
    )
    code, report = _report(tmp_path, {"all_reduce_perf.log": info + text}, capsys)
    (run,) = report["runs"]
    assert code == 0 and run["rail"] is None and run["error"] is None and run["predicted_busbw_gbytes"] > 100


def test_a_rail_the_plan_does_not_have_is_an_error_row(tmp_path: Path, capsys) -> None:
    code, report = _report(tmp_path, {"all_reduce_perf_rail9.log": nccl_text(PAIR, 1, ROWS)}, capsys)
    (run,) = report["runs"]
    assert code == 1 and run["rail"] == 9 and run["predicted_busbw_gbytes"] == 0.0
    assert run["error"] == "the file name names rail 9; the plan's compute rails are 0 to 7"


def test_more_hosts_than_the_pool_has_is_an_error_row(tmp_path: Path, capsys) -> None:
    """Predicting a two-host run with the pool's one node would hold it to NVLink's bandwidth."""
    rows = [(1 << 30, 360.0), (2 << 30, 360.0)]
    code, report = _report(tmp_path, {"all_reduce_perf.log": nccl_text(PAIR, 8, rows)}, capsys, nodes=1)
    (run,) = report["runs"]
    assert code == 1 and run["predicted_busbw_gbytes"] == 0.0
    assert run["error"] == "the run spans 2 hosts but pool `gpu` has 1 node"


def test_more_ranks_on_a_host_than_gpus_is_an_error_row(tmp_path: Path, capsys) -> None:
    rows = [(1 << 30, 360.0), (2 << 30, 360.0)]
    code, report = _report(tmp_path, {"all_reduce_perf.log": nccl_text(PAIR, 16, rows)}, capsys)
    (run,) = report["runs"]
    assert code == 1
    assert run["error"] == "the run has 16 ranks a host but the servers of pool `gpu` have 8 GPUs each"


def test_an_output_without_ranks_is_an_error_row(tmp_path: Path, capsys) -> None:
    """Before: 0 nodes, 0 ranks, a prediction of 0 GB/s and the status ok."""
    text = "\n".join(line for line in nccl_text(PAIR, 8, ROWS).split("\n") if "Rank" not in line)
    code, report = _report(tmp_path, {"all_reduce_perf.log": text}, capsys)
    (run,) = report["runs"]
    assert code == 1
    assert run["error"].startswith("the output lists no ranks")


def test_a_hostile_nccl_ib_hca_line_is_refused_at_its_line(tmp_path: Path, capsys) -> None:
    text = "gpu001:1:1 [0] NCCL INFO NCCL_IB_HCA set to " + "m" * 70 + "\n" + nccl_text(PAIR, 1, ROWS)
    bp = tmp_path / "bp.yaml"
    with bp.open("w") as fh:
        YAML().dump(server_nodes("dgx-h100", 2, NDR), fh)
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "all_reduce_perf.log").write_text(text)
    assert main(["acceptance-report", str(bp), "--results", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'r' / 'all_reduce_perf.log'}:1" in err and "longer than NCCL's 63" in err


def test_placeholder_port_names_say_nothing_of_nccl_ib_hca(tmp_path: Path, capsys) -> None:
    """An HGX H200 server's RDMA names are not published: the plan's `mlx5_<n>` are placeholders. A run whose
    NCCL_IB_HCA lists as many devices as the plan has rails is a run on all of them (it was an ERROR row
    naming rails 0, 3, 4, 5, 6 by matching the placeholders); one device says no rail the plan knows."""
    bp = tmp_path / "bp.yaml"
    with bp.open("w") as fh:
        YAML().dump(server_nodes("hgx-h200", 2, NDR), fh)
    results = tmp_path / "r"
    results.mkdir()
    every = "=" + ",".join(COMPUTE)  # a DGX H100's names, which this server's hosts may well have
    rows = [(1 << 30, 450.0), (2 << 30, 450.0)]
    (results / "a.json").write_text(nccl_json(PAIR, every, rows, gpus_per_node=8))
    (results / "b.json").write_text(nccl_json(PAIR, "=mlx5_3", ROWS))
    main(["acceptance-report", str(bp), "--results", str(results), "--format", "json"])
    runs = _runs(json.loads(capsys.readouterr().out))
    assert runs["a.json"]["error"] is None and runs["a.json"]["rail"] is None
    assert runs["a.json"]["predicted_busbw_gbytes"] > 100
    assert runs["b.json"]["error"].startswith("NCCL_IB_HCA `=mlx5_3`: the plan does not know the RDMA names")
