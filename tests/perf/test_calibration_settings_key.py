"""A factor is keyed by what the run changed in one canonical spelling (calibration.settings_key): NCCL takes an
NCCL_ALGO / NCCL_PROTO list as the set it names, and a channel count above the release's MAXCHANNELS as
MAXCHANNELS, so `NCCL_ALGO=Tree,Ring` and `--algo ring,tree`, `Simple,LL128` and `LL128,Simple`, and
NCCL_MAX_NCHANNELS=64 on 2.21 and `--channels 64` (both 32 channels) key the same factor."""

from __future__ import annotations

import json
from pathlib import Path

from nccl_text import nccl_text
from perf_blueprints import build, server_nodes

from generator.cli import main
from generator.perf.calibration import settings_key
from generator.perf.predict import RunSettings
from generator.perf.system import system_for

NDR = {
    "technology": "infiniband-ndr",
    "topology": {"kind": "fat-tree", "switch": "qm9700", "rail_optimized": True},
    "subnet_manager": {"kind": "opensm"},
}
SIZES = [1 << 28, 1 << 30, 2 << 30]


def test_lists_are_keyed_as_sets_and_channels_as_the_release_runs_them(tmp_path: Path) -> None:
    cluster, plan, _ = build(server_nodes("dgx-h100", 2, NDR), tmp_path)
    system = system_for(cluster, plan, nccl_version="2.21.5")

    def key(**given: object) -> str:
        return settings_key(RunSettings(**given), "all_reduce", system)  # type: ignore[arg-type]

    assert key(algorithms=("tree", "ring")) == key(algorithms=("ring", "tree")) == "NCCL_ALGO=ring,tree"
    assert key(protocols=("simple", "ll128")) == key(protocols=("ll128", "simple"))
    assert key(channels=64) == key(channels=32) == "32 inter-node channels"  # 2.21's MAXCHANNELS is 32
    assert key(min_channels=64) == key(min_channels=32)
    assert key(channels=64, nccl_version="2.26.2") == "64 inter-node channels"  # the run's release: 64


def test_a_calibration_from_nccl_spellings_applies_to_the_estimate_options(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    _, _, bp = build(server_nodes("dgx-h100", 2, NDR), tmp_path)
    results = tmp_path / "results"
    results.mkdir()
    lines = nccl_text(["gpu001", "gpu002"], 8, [(s, 100.0) for s in SIZES]).split("\n")
    lines[0] = lines[0].replace("nccl-library=22602", "nccl-library=22105")
    info = [
        "NCCL_ALGO set by environment to Tree,Ring",
        "NCCL_PROTO set by environment to Simple,LL128",
        "NCCL_MAX_NCHANNELS set by environment to 64.",
    ]
    lines[1:1] = [f"gpu001:1:1 [0] NCCL INFO {i}" for i in info]
    (results / "all_reduce_perf.txt").write_text("\n".join(lines))
    cal = tmp_path / "cal.yaml"
    assert main(["acceptance-report", str(bp), "--results", str(results), "--calibrate", str(cal)]) in (0, 1)
    capsys.readouterr()
    options = [
        "--algo",
        "ring,tree",
        "--proto",
        "LL128,Simple",
        "--channels",
        "64",
        "--nccl-version",
        "2.21.5",
    ]
    args = [
        "estimate",
        str(bp),
        "--nodes",
        "2",
        "--sizes",
        "1G",
        "--format",
        "json",
        "--calibration",
        str(cal),
    ]
    assert main([*args, *options]) == 0
    factors = json.loads(capsys.readouterr().out)["blueprints"][0]["site_calibration"]["factors"]
    assert factors["all_reduce"] is not None
