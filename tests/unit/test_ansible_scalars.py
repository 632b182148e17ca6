"""The inventory's string scalars: the fast paths for plain strings must write exactly what json.dumps and
textwrap write (the references), for any text hypothesis can make."""

from __future__ import annotations

import json
import textwrap

from hypothesis import given
from hypothesis import strategies as st

from generator.emit.ansible import UNSAFE, WRAP, _long_string, _tagged


@given(st.text())
def test_a_scalar_is_what_json_dumps_writes(value: str) -> None:
    assert _tagged(value, UNSAFE) == UNSAFE + json.dumps(value, ensure_ascii=False)


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=300), st.integers(0, 120))
def test_a_long_string_is_folded_as_textwrap_folds_it(value: str, indent: int) -> None:
    text = UNSAFE + json.dumps(value, ensure_ascii=False)
    lines = textwrap.wrap(text, width=max(40, WRAP - indent), break_long_words=False, break_on_hyphens=False)
    expected = ("\n" + " " * (indent + 2)).join(lines) if lines else text
    assert _long_string(value, indent) == expected
