"""IB SHARP: the CollNet figure assumes streaming aggregation (SAT), which the generated NCCL settings turn on and
SHARP leaves off by default; an estimate says so wherever SHARP is on, and only there."""

from __future__ import annotations

from pathlib import Path

from perf_blueprints import build, server_nodes

from generator.emit.nccl import profiles
from generator.perf.collectives import candidates
from generator.perf.predict import job_for
from generator.perf.system import system_for


def _ndr(sharp: bool) -> dict:
    return {
        "technology": "infiniband-ndr",
        "topology": {"kind": "fat-tree", "switch": "qm9700", "rail_optimized": True},
        "subnet_manager": {"kind": "ufm", "sharp": sharp},
    }


def _sat_notes(notes: tuple[str, ...]) -> list[str]:
    return [n for n in notes if "SHARP_COLL_ENABLE_SAT" in n]


def test_a_sharp_fabric_says_its_collnet_rate_is_streaming_aggregations(tmp_path: Path) -> None:
    cluster, plan, _ = build(server_nodes("dgx-h100", 4, _ndr(True)), tmp_path)
    system = system_for(cluster, plan)
    assert any(c.algorithm == "collnet" for c in candidates("all_reduce", job_for(system, 4)))
    (note,) = _sat_notes(system.notes)
    assert "low-latency trees" in note
    # the note's claim about what generate writes holds: the same cluster's NCCL settings turn SAT on
    (profile,) = profiles(cluster, plan)
    assert profile.env()["SHARP_COLL_ENABLE_SAT"] == "1"


def test_no_sharp_no_note(tmp_path: Path) -> None:
    cluster, plan, _ = build(server_nodes("dgx-h100", 4, _ndr(False)), tmp_path)
    system = system_for(cluster, plan)
    assert not any(c.algorithm == "collnet" for c in candidates("all_reduce", job_for(system, 4)))
    assert _sat_notes(system.notes) == []
