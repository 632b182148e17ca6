"""generator/foreign.py: the bounded reader every foreign input goes through."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.foreign import (
    ByteBudget,
    ForeignInputError,
    _depth_ok,
    host_name_problem,
    parse_json,
    read_foreign,
    read_foreign_text,
)


def _depth_by_hand(text: str, limit: int) -> int | None:
    """Character by character, as RFC 8259 strings are defined (a backslash escapes the next char)."""
    depth, in_string, escaped = 0, False, False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return i
        elif ch in "]}":
            depth -= 1
    return None


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(alphabet='ab"\\[]{}\n', max_size=6)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(value=json_values, limit=st.integers(min_value=0, max_value=6))
def test_depth_scan_equals_the_character_scan(value: object, limit: int) -> None:
    text = json.dumps(value)
    assert _depth_ok(text, limit) == _depth_by_hand(text, limit)


@settings(max_examples=500, deadline=None)
@given(text=st.text(alphabet='a"\\[]{}é\n', max_size=40), limit=st.integers(min_value=0, max_value=4))
def test_depth_scan_equals_the_character_scan_on_any_text(text: str, limit: int) -> None:
    """Text that is no JSON too (unterminated strings, a backslash outside a string, more closing brackets
    than opening ones): the answer json.loads is spared is the same, with or without a backslash in it."""
    assert _depth_ok(text, limit) == _depth_by_hand(text, limit)


def test_regular_files_only_and_bounded(tmp_path: Path) -> None:
    link = tmp_path / "zero.json"
    os.symlink("/dev/zero", link)
    with pytest.raises(ForeignInputError, match="not a regular file"):
        read_foreign(link, 1024)
    with pytest.raises(ForeignInputError, match="folder"):
        read_foreign(tmp_path, 1024)
    big = tmp_path / "big"
    big.write_bytes(b"x" * 11)
    with pytest.raises(ForeignInputError, match="larger than 10 bytes"):
        read_foreign(big, 10)
    assert read_foreign(big, 11) == b"x" * 11


def test_one_budget_for_all_files(tmp_path: Path) -> None:
    files = []
    for i in range(3):
        files.append(tmp_path / f"f{i}")
        files[-1].write_bytes(b"y" * 40)
    budget = ByteBudget(100)
    read_foreign(files[0], 50, budget)
    read_foreign(files[1], 50, budget)
    with pytest.raises(ForeignInputError, match="exceed 100 bytes in all"):
        read_foreign(files[2], 50, budget)


def test_text_is_utf8_without_nul(tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    bad.write_bytes(b"ok\nok\n\xff")
    with pytest.raises(ForeignInputError) as err:
        read_foreign_text(bad, 100)
    assert err.value.where.endswith(":3")
    bad.write_bytes(b"a\n\x00")
    with pytest.raises(ForeignInputError, match="NUL"):
        read_foreign_text(bad, 100)


def test_json_is_the_standard_only() -> None:
    for text in ('{"a": NaN}', "[Infinity]", "[-Infinity]"):
        with pytest.raises(ForeignInputError, match="not a number JSON allows"):
            parse_json(text, "f.json")
    with pytest.raises(ForeignInputError, match="nested deeper than 3"):
        parse_json("[[[[1]]]]", "f.json", max_depth=3)
    with pytest.raises(ForeignInputError) as err:
        parse_json('{\n"a": }', "f.json")
    assert err.value.where == "f.json:2:6"
    assert parse_json('{"a": "[[[["}', "f.json", max_depth=1) == {"a": "[[[["}
    # the first key given again is the one named, whichever object it is in
    with pytest.raises(ForeignInputError, match="the key `b` is given twice"):
        parse_json('[{"a": 1}, {"a": 1, "b": 2, "b": 3, "a": 4}]', "f.json")


@pytest.mark.parametrize(
    "name",
    ["0x7f000001", "127.0.0.1", "2130706433", "-gpu", "gpu-", "gpu\n", "gp u", "a" * 64, "", "::1", "gpu.x"],
)
def test_names_that_are_not_host_names(name: str) -> None:
    assert host_name_problem(name) is not None


@pytest.mark.parametrize("name", ["gpu001", "P1-IBLEAF-3-2", "a", "c-spine-001", "dgx-h100-01", "x" * 63])
def test_host_names(name: str) -> None:
    assert host_name_problem(name) is None
