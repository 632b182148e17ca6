"""NCCL_COLLNET_ENABLE in a run's output: IB SHARP (CollNet, and NVLS across nodes, which needs it) runs only
where it is 1, and NCCL's default is 0 (NCCL's environment variables reference: "Default is 0, define and set
to 1 to use the CollNet plugin"). On a SHARP fabric a run without CollNet is predicted as on the same fabric
without SHARP, never held to CollNet's bandwidth, and its calibration is kept apart from CollNet's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from nccl_text import nccl_json, nccl_text
from perf_blueprints import build, server_nodes

from generator.cli import main
from generator.foreign import ForeignInputError
from generator.perf.collectives import estimate
from generator.perf.nccl_results import read_runs
from generator.perf.predict import job_for
from generator.perf.system import system_for

GIB = 1 << 30
ROWS = [(1 << 28, 150.0), (GIB, 200.0), (2 * GIB, 200.0)]
HOSTS = [f"gpu{i:03d}" for i in range(1, 5)]  # the plan's node names


def _ndr(sharp: bool) -> dict:
    return {
        "technology": "infiniband-ndr",
        "topology": {"kind": "fat-tree", "switch": "qm9700", "rail_optimized": True},
        "subnet_manager": {"kind": "ufm", "sharp": sharp},
    }


def _with_info(text: str, *info: str) -> str:
    first, rest = text.split("\n", 1)
    return "\n".join([first, *(f"gpu001:4242:4242 [0] NCCL INFO {i}" for i in info), rest])


def _results(tmp_path: Path) -> Path:
    results = tmp_path / "results"
    results.mkdir()
    base = nccl_text(HOSTS, 8, ROWS)
    (results / "default.txt").write_text(base)
    (results / "on.txt").write_text(_with_info(base, "NCCL_COLLNET_ENABLE set by environment to 1."))
    (results / "off.txt").write_text(_with_info(base, "NCCL_COLLNET_ENABLE set by environment to 0."))
    doc = json.loads(nccl_json(HOSTS, None, ROWS, gpus_per_node=8))
    doc["env"].append("NCCL_COLLNET_ENABLE=0")
    (results / "offj.json").write_text(json.dumps(doc))
    return results


def _predicted(bp: Path, sharp: bool, tmp_path: Path) -> tuple[float, str]:
    """What `estimate` predicts at 1 GiB on four nodes of the blueprint's servers with or without SHARP."""
    cluster, plan, _ = build(server_nodes("dgx-h100", 4, _ndr(sharp)), tmp_path, f"sharp-{sharp}.yaml")
    est = estimate("all_reduce", GIB, job_for(system_for(cluster, plan, nccl_version="2.26.2"), 4))
    return round(est.busbw_gbytes, 3), est.algorithm


def test_a_run_without_collnet_is_predicted_without_sharp(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    _, _, bp = build(server_nodes("dgx-h100", 4, _ndr(True)), tmp_path)
    results = _results(tmp_path)
    (on,) = read_runs(results / "on.txt")
    (off,) = read_runs(results / "off.txt")
    (default,) = read_runs(results / "default.txt")
    assert (on.settings.collnet, off.settings.collnet, default.settings.collnet) == (True, False, None)
    assert off.settings.text() == "NCCL_COLLNET_ENABLE=0 NCCL 2.26.2"
    assert main(["acceptance-report", str(bp), "--results", str(results), "--format", "json"]) in (0, 1)
    runs = {Path(r["file"]).stem: r for r in json.loads(capsys.readouterr().out)["runs"]}
    at_gib = {k: next(s for s in r["sizes"] if s["size_bytes"] == GIB) for k, r in runs.items()}
    got = {k: (s["predicted_busbw_gbytes"], s["algorithm"]) for k, s in at_gib.items()}
    with_sharp, without = _predicted(bp, True, tmp_path), _predicted(bp, False, tmp_path)
    assert with_sharp[1] in ("collnet", "nvls") and without[1] not in ("collnet", "nvls")
    assert got["on"] == with_sharp
    # recorded 0 (text or -J env) or not recorded at all (NCCL's default): no SHARP
    assert got["off"] == got["offj"] == got["default"] == without
    assert runs["off"]["nccl_collnet_enable"] == 0 and runs["on"]["nccl_collnet_enable"] == 1
    assert "nccl_collnet_enable" not in runs["default"]


def test_a_calibration_without_collnet_is_not_applied_to_sharp(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    _, _, bp = build(server_nodes("dgx-h100", 4, _ndr(True)), tmp_path)
    results = _results(tmp_path)
    for name in ("on.txt", "default.txt", "offj.json"):
        (results / name).unlink()
    cal = tmp_path / "cal.yaml"
    assert main(["acceptance-report", str(bp), "--results", str(results), "--calibrate", str(cal)]) in (0, 1)
    assert "settings: CollNet off" in cal.read_text()
    capsys.readouterr()
    assert main(["estimate", str(bp), "--sizes", "1G", "--calibration", str(cal), "--format", "json"]) == 0
    site = json.loads(capsys.readouterr().out)["blueprints"][0]["site_calibration"]
    assert site["factors"]["all_reduce"] is None


def test_a_collnet_value_the_model_cannot_follow_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text(_with_info(nccl_text(HOSTS, 8, ROWS), "NCCL_COLLNET_ENABLE set by environment to 2."))
    with pytest.raises(ForeignInputError, match="NCCL_COLLNET_ENABLE `2`: the model follows 0 or 1"):
        read_runs(bad)
