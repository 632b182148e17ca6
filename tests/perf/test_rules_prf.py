"""PRF rules: each fail fixture raises its rule (and no other warning or error), each pass fixture does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.findings import Severity
from generator.pipeline import check
from generator.rules.registry import rule_by_id

FIXTURES = Path(__file__).resolve().parent.parent / "rules" / "fixtures"
IDS = ("PRF001", "PRF002", "PRF003", "PRF004")


@pytest.mark.parametrize("rule", IDS)
def test_fail_fixture_fires(rule: str) -> None:
    findings = check(FIXTURES / rule / "fail.yaml").findings
    mine = [f for f in findings if f.rule == rule]
    assert mine, [f.message for f in findings]
    assert all(f.location is not None for f in mine)
    others = [f for f in findings if f.rule != rule and f.severity >= Severity.WARNING]
    assert not others, [f"{f.rule}: {f.message}" for f in others]


@pytest.mark.parametrize("rule", IDS)
def test_pass_fixture_is_quiet(rule: str) -> None:
    findings = check(FIXTURES / rule / "pass.yaml").findings
    assert not [f for f in findings if f.rule == rule]
    assert not [f for f in findings if f.severity == Severity.ERROR]


@pytest.mark.parametrize("rule", IDS)
def test_rule_is_documented(rule: str) -> None:
    cls = rule_by_id(rule)
    assert cls is not None
    assert len(cls.doc()) > 200 and cls.fix and cls.rationale


def test_prf002_numbers_follow_the_oversubscription() -> None:
    """2:1 uplinks with most peers off-leaf: the spread all_reduce is near half the NICs' bandwidth."""
    msg = next(f.message for f in check(FIXTURES / "PRF002" / "fail.yaml").findings if f.rule == "PRF002")
    spread = float(msg.split("reaches ")[1].split(" GB/s")[0])
    nic = float(msg.split("against ")[1].split(" GB/s")[0])
    assert nic == pytest.approx(188.0)
    assert 0.5 * 0.92 * nic * 0.9 < spread < 0.75 * nic
