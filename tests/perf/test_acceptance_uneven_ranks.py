"""A run whose hosts ran different numbers of ranks (`mpirun -np 12` on two 8-slot hosts: ranks 0-7 on one,
8-11 on the other) is not the even split the model predicts (6 ranks a node): it is an ERROR row that says
so, as a split communicator or more ranks than GPUs are, and calibrates nothing."""

from __future__ import annotations

import json
from pathlib import Path

from nccl_text import nccl_json, nccl_text
from perf_blueprints import server_nodes
from ruamel.yaml import YAML

from generator.cli import main

NDR = {
    "technology": "infiniband-ndr",
    "topology": {"kind": "fat-tree", "switch": "qm9700", "rail_optimized": True},
    "subnet_manager": {"kind": "opensm"},
}
ROWS = [(1 << 30, 150.0), (2 << 30, 150.0)]


def _eight_and_four(text: str) -> str:
    """The two-host output with gpu002's last four ranks left out (ranks 0-7 on gpu001, 8-11 on gpu002)."""
    return "\n".join(
        line for line in text.split("\n") if not any(f"Rank {r} " in line for r in range(12, 16))
    )


def test_hosts_with_different_rank_counts_are_an_error_row(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    bp = tmp_path / "bp.yaml"
    with bp.open("w") as fh:
        YAML().dump(server_nodes("dgx-h100", 2, NDR), fh)
    results = tmp_path / "results"
    results.mkdir()
    (results / "all_reduce_perf-8plus4.txt").write_text(
        _eight_and_four(nccl_text(["gpu001", "gpu002"], 8, ROWS))
    )
    doc = json.loads(nccl_json(["gpu001"] * 8 + ["gpu002"] * 4, None, ROWS))
    (results / "all_reduce_perf-8plus4.json").write_text(json.dumps(doc))
    (results / "all_reduce_perf-even.txt").write_text(nccl_text(["gpu001", "gpu002"], 6, ROWS))
    assert main(["acceptance-report", str(bp), "--results", str(results), "--format", "json"]) == 1
    runs = {Path(r["file"]).name: r for r in json.loads(capsys.readouterr().out)["runs"]}
    for name in ("all_reduce_perf-8plus4.txt", "all_reduce_perf-8plus4.json"):
        assert runs[name]["ranks"] == 12
        assert runs[name]["error"].startswith("hosts run 8 and 4 ranks: uneven (gpu001: 8, gpu002: 4)"), name
        assert not runs[name]["low"]
    assert runs["all_reduce_perf-even.txt"]["error"] is None  # 6 and 6: the shape the model predicts
    (results / "all_reduce_perf-even.txt").unlink()
    cal = tmp_path / "cal.yaml"
    assert main(["acceptance-report", str(bp), "--results", str(results), "--calibrate", str(cal)]) == 2
    err = capsys.readouterr().err
    assert "no run can calibrate the model" in err and "uneven" in err and not cal.exists()
