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
        outputs=[Piece("rules", 1.0, "rules"), Piece("pulumi", 3.0, "pulumi")],
        cable_rows=Piece("cable rows", 2.0, "cabling"),
        row_formats=[Piece("cabling csv", 1.0, "cabling"), Piece("cabling xlsx", 5.0, "cabling")],
        rowless_formats=[Piece("cabling ibnetdiscover", 2.5, "cabling")],
        tail=[
            Piece("manifest: cabling", 0.4, "cabling"),
            Piece("manifest: pulumi", 0.1, "pulumi"),
            Piece("generate: finish", 0.25),
        ],
    )


def test_two_cores_wait_for_the_longest_chain() -> None:
    # 14.5 s of shared work is 7.25 s on two cores: more than rows then workbook (7 s) in a row
    assert lower_bound(_profile(), 2) == pytest.approx(4.0 + 7.25 + 0.75)


def test_four_cores_wait_for_the_rows_then_the_workbook() -> None:
    # 14.5 s over four cores is 3.6 s, but the workbook cannot start before its rows: 2 + 5 s
    assert lower_bound(_profile(), 4) == pytest.approx(4.0 + 7.0 + 0.75)


def test_one_core_does_everything_in_turn() -> None:
    assert lower_bound(_profile(), 1) == pytest.approx(4.0 + 14.5 + 0.75)


def test_a_format_made_without_the_rows_does_not_wait_for_them() -> None:
    # without the workbook: rows + csv = 3 s, ibnetdiscover alone 2.5 s, pulumi 3 s; 9.5 s shared / 2 = 4.75
    bound = lower_bound(_profile(), 2, lambda p: p.name == "cabling xlsx")
    assert bound == pytest.approx(4.0 + 4.75 + 0.75)
    # eight cores: the longest chain, rows then csv or pulumi (3 s), not rows then ibnetdiscover (4.5 s)
    bound = lower_bound(_profile(), 8, lambda p: p.name == "cabling xlsx")
    assert bound == pytest.approx(4.0 + 3.0 + 0.75)


def test_without_the_cabling_plan_its_rows_and_manifest_share_go_too() -> None:
    # rules + pulumi = 4 s: 2 s each core, but pulumi alone is 3 s; the tail keeps pulumi's 0.1 and 0.25
    bound = lower_bound(_profile(), 2, lambda p: p.output == "cabling")
    assert bound == pytest.approx(4.0 + 3.0 + 0.35)


def test_spans_are_the_cpu_between_marks() -> None:
    spans = _spans([("cabling", 10.0), ("ansible", 13.5), ("slurm", 14.0)], 16.25)
    assert spans == [
        Piece("cabling", 3.5, "cabling"),
        Piece("ansible", 0.5, "ansible"),
        Piece("slurm", 2.25, "slurm"),
    ]
