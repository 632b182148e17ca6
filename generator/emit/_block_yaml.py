"""A small block-style YAML writer for generated configuration (NVUE startup.yaml, Ansible inventories).

PyYAML's pure-Python emitter is ~40x slower (150 s for the 512 routers of the dragonfly example) and not a
runtime dependency. Keys are sorted (ints before strings) so output is byte-identical on re-runs; strings
stay plain only when YAML 1.1 and 1.2 both read them back as the same string, else they are single-quoted.
Tests compare ``yaml.safe_load`` of the output with the document.
"""

from __future__ import annotations

import re
from typing import Any

# YAML 1.1 words a plain scalar would turn into a bool or null (quoted so they stay strings).
_YAML11_WORDS = {"y", "yes", "n", "no", "true", "false", "on", "off", "null", "~"}
# no trailing space: a plain scalar's trailing spaces are not part of it ("0 " would read back as 0).
# Brackets and commas after the first character stay plain: this writer emits block style only, where
# they are ordinary characters (YAML 1.2.2 §7.3.3, ns-plain-safe-out), so Slurm hostlists read as written.
_PLAIN = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9 ._/\[\],-]*[A-Za-z0-9._/\]-])?$")
# YAML 1.1 floats allow underscores after the point too ("0._" reads as 0.0)
_NUMBER_LIKE = re.compile(r"^[-+]?(\d[\d_]*)?(\.[\d_]*)?([eE][-+]?\d+)?$|^0[xob]|^\d+:\d")


def scalar(value: object) -> str:
    if type(value) is str:  # most scalars: port names, addresses, repeated across thousands of switches
        text = _STRINGS.get(value)
        if text is None:
            if len(_STRINGS) > _STRINGS_MAX:
                _STRINGS.clear()
            text = _STRINGS[value] = _string(value)
        return text
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(value)
    if not isinstance(value, str):
        raise TypeError(f"unexpected value {value!r} in generated YAML")
    return _string(value)


def _string(value: str) -> str:
    if _PLAIN.match(value) and value.lower() not in _YAML11_WORDS and not _NUMBER_LIKE.match(value):
        return value
    return "'" + value.replace("'", "''") + "'"


# Strings already written (a bounded memo: the plain-or-quoted decision is three regex/set tests).
_STRINGS: dict[str, str] = {}
_STRINGS_MAX = 1 << 18


def _key(k: Any) -> tuple[bool, Any]:
    return (isinstance(k, str), k)


class SharedBlock(dict[Any, Any]):
    """A mapping that appears many times in one document (the same object under each parent, e.g. the
    ``link`` block of every port of a switch): written once per indent, then its lines are reused. It
    must not change while the document is written."""


def mapping(
    node: dict[Any, Any], indent: int, out: list[str], shared: dict[tuple[int, int], list[str]] | None = None
) -> None:
    if shared is None:  # the top of a document: SharedBlocks are memoised for this document only
        shared = {}
    heads = _HEADS.get(indent)
    if heads is None or len(heads) > _STRINGS_MAX:
        heads = _HEADS[indent] = {}
    try:
        keys = sorted(node)  # one key type: the same order as by _key, without a call per key
    except TypeError:  # ints and strings: ints first
        keys = sorted(node, key=_key)
    for key in keys:
        value = node[key]
        head = heads.get(key) if type(key) is str else None
        if head is None:
            head = f"{' ' * indent}{scalar(key)}:"
            if type(key) is str:
                heads[key] = head
        kind = type(value)
        if kind is str:  # most values (scalar's string memo, without the call)
            text = _STRINGS.get(value)
            out.append(f"{head} {scalar(value) if text is None else text}")
        elif (kind is dict or kind is SharedBlock) and value:
            out.append(head)
            if kind is SharedBlock:
                _shared(value, indent + 2, out, shared)
            else:
                mapping(value, indent + 2, out, shared)
        elif isinstance(value, list) and value:
            out.append(head)
            sequence(value, indent, out)
        elif isinstance(value, dict | list):
            out.append(f"{head} {'{}' if isinstance(value, dict) else '[]'}")
        else:
            out.append(f"{head} {scalar(value)}")


# "<indent spaces><key>:" per indent and string key: the same keys (port names, description, link, type)
# start lines in every switch of a fabric. Bounded like _STRINGS.
_HEADS: dict[int, dict[str, str]] = {}


def _shared(node: SharedBlock, indent: int, out: list[str], shared: dict[tuple[int, int], list[str]]) -> None:
    # id() is a safe key: the caller holds the document, so the block stays alive while it is written
    lines = shared.get((id(node), indent))
    if lines is None:
        start = len(out)
        mapping(node, indent, out, shared)
        shared[(id(node), indent)] = out[start:]
    else:
        out.extend(lines)


def sequence(items: list[Any], indent: int, out: list[str]) -> None:
    pad = " " * indent
    for item in items:
        if isinstance(item, dict | list) and item:  # a block: its first line goes after the dash
            inner: list[str] = []
            if isinstance(item, dict):
                mapping(item, indent + 2, inner)
            else:
                sequence(item, indent + 2, inner)
            out.append(f"{pad}- {inner[0].lstrip()}")
            out.extend(inner[1:])
        elif isinstance(item, dict | list):  # an empty one
            out.append(f"{pad}- {'{}' if isinstance(item, dict) else '[]'}")
        else:
            out.append(f"{pad}- {scalar(item)}")


def block_yaml(doc: dict[Any, Any]) -> str:
    out: list[str] = []
    mapping(doc, 0, out)
    return "\n".join(out) + "\n"
