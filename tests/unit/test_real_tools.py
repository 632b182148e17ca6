"""A missing real tool skips a test on a workstation and fails it in CI (tests/real_tools.py)."""

from __future__ import annotations

import pytest
from real_tools import STRICT_VARIABLES, missing_executables, needs, needs_module, required


@pytest.fixture
def workstation(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in STRICT_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.usefixtures("workstation")
def test_missing_tool_skips_outside_ci() -> None:
    assert not required()
    with pytest.raises(pytest.skip.Exception, match="no-such-tool"):
        needs(["no-such-tool"], "apt-get install it")


@pytest.mark.usefixtures("workstation")
@pytest.mark.parametrize("variable", STRICT_VARIABLES)
def test_missing_tool_fails_in_ci(monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    monkeypatch.setenv(variable, "1" if variable == "CB_REQUIRE_REAL_TOOLS" else "true")
    assert required()
    with pytest.raises(pytest.fail.Exception, match="no-such-tool"):
        needs(["no-such-tool"])
    with pytest.raises(pytest.fail.Exception, match="no_such_package_xyz"):
        needs_module("no_such_package_xyz")


@pytest.mark.usefixtures("workstation")
def test_switch_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CB_REQUIRE_REAL_TOOLS", "0")
    assert not required()


def test_nothing_missing_is_a_no_op(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    needs([])  # neither skips nor fails
    assert missing_executables(["sh", "no-such-tool-xyz"]) == ["no-such-tool-xyz"]
