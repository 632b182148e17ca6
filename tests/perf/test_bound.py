"""The lower bound benchmarks/bound.py prints, against schedules worked out by hand."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from bound import Piece, Profile, _spans, lower_bound


def _profile() -> Profile:
    return Profile(
        serial=[Piece("plan", 4.0)],
        outputs=[Piece("rules", 1.0), Piece("pulumi", 3.0)],
        cable_rows=2.0,
        formats=[Piece("cabling csv", 1.0), Piece("cabling xlsx", 5.0)],
        tail=[Piece("manifest hashes", 0.5)],
    )


def test_two_cores_wait_for_the_longest_chain() -> None:
    # 12 s of shared work is 6 s on two cores, but rows (2 s) then the workbook (5 s) take 7 s in a row
    assert lower_bound(_profile(), 2) == pytest.approx(4.0 + 7.0 + 0.5)


def test_one_core_does_everything_in_turn() -> None:
    assert lower_bound(_profile(), 1) == pytest.approx(4.0 + 12.0 + 0.5)


def test_leaving_out_the_workbook() -> None:
    # 7 s shared is 3.5 s on two cores; the longest chain is now pulumi's 3 s
    bound = lower_bound(_profile(), 2, lambda p: p.name == "cabling xlsx")
    assert bound == pytest.approx(4.0 + 3.5 + 0.5)


def test_without_the_cabling_plan_its_rows_go_too() -> None:
    bound = lower_bound(_profile(), 2, lambda p: p.name.startswith("cabling"))
    assert bound == pytest.approx(4.0 + 3.0 + 0.5)  # rules + pulumi = 4 s: 2 s each core, pulumi alone 3 s


def test_spans_are_the_cpu_between_marks() -> None:
    spans = _spans([("cabling", 10.0), ("ansible", 13.5), ("slurm", 14.0)], 16.25)
    assert spans == [Piece("cabling", 3.5), Piece("ansible", 0.5), Piece("slurm", 2.25)]
