"""The evaluation set (benchmarks/evaluation.yaml): complete, sourced, disjoint from the fitted facts, and
evaluated by the benchmark without error. Accuracy is reported by `python benchmarks/evaluate.py`."""

from __future__ import annotations

import sys
from pathlib import Path

from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import evaluate  # noqa: E402

DOC = YAML(typ="safe", pure=True).load((ROOT / "benchmarks" / "evaluation.yaml").read_text())


def test_at_least_fifteen_sourced_measurements_across_hardware() -> None:
    entries = DOC["measurements"]
    assert len(entries) >= 15
    assert all(e["source"].startswith("https://github.com/") for e in entries)
    hardware = " ".join(e["hardware"] for e in entries)
    for gpu in ("A100", "H100", "H200", "B200"):
        assert gpu in hardware
    techs = {e.get("fabric", {}).get("technology", "none").split("-")[0] for e in entries}
    assert {"infiniband", "roce", "none"} <= techs
    assert {e["nodes"] > 1 for e in entries} == {True, False}
    assert {"ring", "nvls", "default"} <= {e["algorithm"] for e in entries}
    alltoall = [e for e in entries if e["collective"] == "alltoall"]
    assert {e["nodes"] > 1 for e in alltoall} == {True, False}  # NVLink-bound and network-bound


def test_fitted_facts_are_not_in_the_evaluation_set() -> None:
    """The NDR-NIC and 8×H100-NVLS facts set constants (perf.yaml [FITTED]); their sources stay out."""
    sources = {e["source"] for e in DOC["measurements"]}
    assert not sources & {
        "https://github.com/NVIDIA/nccl-tests/issues/212",
        "https://github.com/NVIDIA/nccl-tests/issues/290",
    }


def test_every_measurement_evaluates() -> None:
    outcomes = evaluate.evaluate()
    assert [o.id for o in outcomes] == [e["id"] for e in DOC["measurements"]]
    assert all(o.predicted > 0 for o in outcomes)
    s = evaluate.summary(outcomes)
    assert s["count"] == len(outcomes) and s["worst_abs_error"] >= s["median_abs_error"]
