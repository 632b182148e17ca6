"""Names that reach frr.conf / startup.yaml unquoted must be plain tokens (letters, digits, `._/-`, at most
64): the one-pass check of all cable ids refuses exactly what the per-token check refuses, including a
token with a line break inside or at its end (a line break would start a new configuration line)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.emit.switches.underlay import _check, _check_all
from generator.findings import BlueprintError

# The token rule, written independently: what a switch configuration line can carry unquoted.
PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,63}")


@pytest.mark.parametrize("bad", ["C-1\nC-2", "C-1\n", "\nC-1", "C 1", "", "-C1", "C" * 65, "C-1;reboot"])
def test_a_bad_cable_id_is_refused_by_name(bad: str) -> None:
    with pytest.raises(BlueprintError) as err:
        _check_all(["C-NL-0001", bad, "C-NL-0003"], "cable id")
    assert f"cable id `{bad}`" in str(err.value.findings[0].message)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="Cab01.-_/ \n;é", max_size=6), max_size=6))
def test_one_pass_check_agrees_with_the_token_rule(tokens: list[str]) -> None:
    ok = all(PLAIN.fullmatch(t) for t in tokens)
    if ok:
        _check_all(tokens, "cable id")
        for t in tokens:
            assert _check(t, "cable id") == t
    else:
        with pytest.raises(BlueprintError):
            _check_all(tokens, "cable id")
