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
_PLAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._/-]*$")
_NUMBER_LIKE = re.compile(r"^[-+]?(\d[\d_]*)?(\.\d*)?([eE][-+]?\d+)?$|^0[xob]|^\d+:\d")


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


def mapping(node: dict[Any, Any], indent: int, out: list[str]) -> None:
    pad = " " * indent
    try:
        keys = sorted(node)  # one key type: the same order as by _key, without a call per key
    except TypeError:  # ints and strings: ints first
        keys = sorted(node, key=_key)
    for key in keys:
        value = node[key]
        head = f"{pad}{scalar(key)}:"
        if isinstance(value, dict) and value:
            out.append(head)
            mapping(value, indent + 2, out)
        elif isinstance(value, list) and value:
            out.append(head)
            sequence(value, indent, out)
        elif isinstance(value, dict | list):
            out.append(f"{head} {'{}' if isinstance(value, dict) else '[]'}")
        else:
            out.append(f"{head} {scalar(value)}")


def sequence(items: list[Any], indent: int, out: list[str]) -> None:
    pad = " " * indent
    for item in items:
        if isinstance(item, dict) and item:
            inner: list[str] = []
            mapping(item, indent + 2, inner)
            out.append(f"{pad}- {inner[0].lstrip()}")
            out.extend(inner[1:])
        else:
            out.append(f"{pad}- {scalar(item)}")


def block_yaml(doc: dict[Any, Any]) -> str:
    out: list[str] = []
    mapping(doc, 0, out)
    return "\n".join(out) + "\n"
