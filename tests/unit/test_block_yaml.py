"""The block-style YAML writer (generator/yamltext.py) read back by PyYAML: the document it was
given, whatever the nesting, key types, awkward strings, and shared blocks (one object under many parents,
written once per indent and reused)."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.yamltext import SharedBlock, block_yaml

_key = st.one_of(st.integers(0, 99), st.text(alphabet="abc-_/. 'yn019", min_size=1, max_size=6))
_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.text(alphabet="abz09 .:-_'\"#@{}[]yesnoONtrue", max_size=8),
)


def _one_key_type(d: dict[Any, Any]) -> dict[Any, Any]:
    return d  # int and str keys may mix: the writer orders ints first


_doc = st.recursive(
    _leaf,
    lambda inner: st.one_of(st.dictionaries(_key, inner, max_size=4), st.lists(inner, max_size=3)),
    max_leaves=20,
)


def _plain(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(_key, _doc, min_size=1, max_size=5), st.dictionaries(_key, _leaf, min_size=1, max_size=3)
)
def test_written_document_reads_back_with_shared_blocks(doc, block_items) -> None:
    shared = SharedBlock(block_items)
    # the same block under several parents at different depths, and twice under one parent
    document = {
        **doc,
        "zz-a": shared,
        "zz-b": {"inner": shared, "again": shared},
        "zz-c": {"deep": {"x": shared}},
    }
    text = block_yaml(document)
    assert yaml.safe_load(text) == _plain(document)
    assert text.count("\n") == block_yaml(_plain(document)).count("\n")


def test_a_shared_block_is_written_at_each_parents_indent() -> None:
    link = SharedBlock(mtu=9216, state={"up": {}})
    text = block_yaml({"swp1": {"link": link}, "top": link})
    assert text == (
        "swp1:\n  link:\n    mtu: 9216\n    state:\n      up: {}\ntop:\n  mtu: 9216\n  state:\n    up: {}\n"
    )
