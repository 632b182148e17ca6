"""The one YAML writer of generated files: how every scalar is quoted, block documents, and an Ansible mode.

Every YAML file the generator writes goes through this module (NVUE ``startup.yaml``, the switch and
subnet-manager inventories, Slurm ``topology.yaml``, Ansible inventories and group_vars, the
``--from-stack`` inventory, the Pulumi stack files), so a string such as ``123``, ``1e3``, ``y``, ``~``,
``2001-12-14`` or ``<<`` is a string in every one of them, whatever reads it: YAML 1.1 readers (PyYAML,
so Ansible; ruamel in 1.1 mode; NVUE) and YAML 1.2 ones (ruamel's default) alike. tests/unit/test_yamltext.py
reads a corpus of awkward strings back with PyYAML and with ruamel.yaml in both versions.

Two styles, one rule for which strings must be quoted:

* block style (:func:`block_yaml`, :func:`mapping`, :func:`scalar`): a string stays plain only when YAML
  1.1 and 1.2 both read it back as the same string, else it is single-quoted, or double-quoted with
  escapes when it holds a line break, a tab or a character YAML does not allow unescaped;
* Ansible mode (:func:`ansible_block`, :func:`tagged`): every string double-quoted, tagged ``!unsafe``
  (Ansible never templates it) unless the caller has proven it free of template syntax.

PyYAML's pure-Python emitter is ~40x slower (150 s for the 512 routers of the dragonfly example) and not a
runtime dependency, hence this writer. Keys of block documents are sorted (ints before strings) so output
is byte-identical on re-runs; the Ansible mode keeps the caller's order.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

# --------------------------------------------------------------------------------------------- scalars
# YAML 1.1 words a plain scalar would turn into a bool or null (yaml.org/type/bool.html lists y/n too;
# ruamel in 1.1 mode reads them as bools, PyYAML does not), compared in lower case.
_YAML11_WORDS = {"y", "yes", "n", "no", "true", "false", "on", "off", "null", "~"}
# no trailing space: a plain scalar's trailing spaces are not part of it ("0 " would read back as 0).
# Brackets and commas after the first character stay plain: the block writer emits block style only, where
# they are ordinary characters (YAML 1.2.2 §7.3.3, ns-plain-safe-out), so Slurm hostlists read as written.
# (\Z, not $: "$" also matches before a final line break, and "a\n" is no plain scalar)
_PLAIN = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9 ._/\[\],-]*[A-Za-z0-9._/\]-])?\Z")
# YAML 1.1 ints and floats (yaml.org/type/int.html, float.html: underscores anywhere after the first digit,
# "0._" is a float), 1.2 floats without a dot ("1e3"), 0x/0o/0b and sexagesimal numbers.
_NUMBER_LIKE = re.compile(r"^[-+]?(\d[\d_]*)?(\.[\d_]*)?([eE][-+]?\d+)?\Z|^0[xob]|^\d+:\d")
# A YAML 1.1 timestamp's date form (yaml.org/type/timestamp.html): PyYAML and ruamel read it as a date.
_DATE = re.compile(r"^\d{4}-\d\d?-\d\d?\Z")
# Characters a single-quoted scalar cannot hold as they are: line breaks (folded into spaces), tabs, and
# what YAML's c-printable set leaves out (C0/C1 controls, DEL, surrogates, U+FFFE/U+FFFF) plus the BOM and
# the Unicode line/paragraph separators (line breaks in YAML 1.1).
_NEEDS_ESCAPE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")
# What a double-quoted scalar escapes: the above, the quote and the backslash (json.dumps escapes the C0
# controls, the quote and the backslash itself; the rest become \\uXXXX, a YAML escape too).
_DOUBLE_ESCAPED = re.compile('[\x00-\x1f\\\\"\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]')
_JSON_LEFT = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")


def double_quoted(value: str) -> str:
    """``value`` as a double-quoted scalar every YAML reader reads back as ``value`` (JSON escapes)."""
    if _DOUBLE_ESCAPED.search(value) is None:  # most names and addresses: nothing to escape
        return f'"{value}"'
    text = json.dumps(value, ensure_ascii=False)
    return _JSON_LEFT.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def number(value: float) -> str:
    """A float every reader reads back as this float: PyYAML (YAML 1.1) wants a dot in the mantissa and a
    signed exponent (``1.0e+16``, not ``1e+16``, which it reads as a string); ``.inf`` and ``.nan``."""
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value)
    if "e" in text:
        mantissa, exponent = text.split("e")
        if "." not in mantissa:
            mantissa += ".0"
        if exponent[0] not in "+-":
            exponent = "+" + exponent
        text = f"{mantissa}e{exponent}"
    return text


def _string(value: str) -> str:
    if (
        _PLAIN.match(value)
        and value.lower() not in _YAML11_WORDS
        and not _NUMBER_LIKE.match(value)
        and not _DATE.match(value)
    ):
        return value
    if _NEEDS_ESCAPE.search(value) is None:
        return "'" + value.replace("'", "''") + "'"
    return double_quoted(value)


# Strings already written (a bounded memo: the plain-or-quoted decision is a few regex/set tests).
_STRINGS: dict[str, str] = {}
_STRINGS_MAX = 1 << 18


def scalar(value: object) -> str:
    """A block-style scalar: strings plain when every reader reads them back as strings, else quoted."""
    if type(value) is str:  # most scalars: port names, addresses, repeated across thousands of switches
        text = _STRINGS.get(value)
        if text is None:
            if len(_STRINGS) > _STRINGS_MAX:
                _STRINGS.clear()
            text = _STRINGS[value] = _string(value)
        return text
    if (plain := _non_string(value)) is not None:
        return plain
    if not isinstance(value, str):
        raise TypeError(f"unexpected value {value!r} in generated YAML")
    return _string(value)


# ---------------------------------------------------------------------------------------- block style
def _key(k: Any) -> tuple[bool, Any]:
    return (isinstance(k, str), k)


class SharedBlock(dict[Any, Any]):
    """A mapping that appears many times in one document (the same object under each parent, e.g. the
    ``link`` block of every port of a switch): written once per indent, then its lines are reused. It
    must not change while the document is written."""


def mapping(
    node: dict[Any, Any], indent: int, out: list[str], shared: dict[tuple[int, int], list[str]] | None = None
) -> None:
    """Append the lines of ``node`` (keys sorted, ints first) at ``indent`` to ``out``."""
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
    """A block-style document (keys sorted), ending in a newline."""
    out: list[str] = []
    mapping(doc, 0, out)
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------- Ansible mode
# Every string value is data: `!unsafe` tells Ansible never to template it, so a catalogue or blueprint
# string holding `{{ lookup('pipe', ...) }}` stays text on the controller (check mode included). Ansible's
# YAML loader reads the tag as a string it never templates (Ansible docs, "Advanced playbook syntax:
# Unsafe or raw strings"); the tag is valid before a flow (JSON-shaped) scalar too. It is written only where
# a value holds a brace, the first character of every Jinja delimiter (`{{`, `{%`, `{#`), or the `#jinja2:`
# header that sets other delimiters: a string without them is never templated, and ansible-core 2.19 reads
# an `!unsafe` scalar as if it were unquoted (its constructor resolves the value's type again: `!unsafe
# "550.120"` is the float 550.12, `!unsafe ""` null, `!unsafe "no"` false), which a double-quoted string
# without the tag never is.
UNSAFE = "!unsafe "
# A string that starts with this header is templated too, with the delimiters the header sets (`[[ ]]`):
# ansible-core's templar checks for it (JINJA2_OVERRIDE, ansible/template/__init__.py, 2.16-2.18), so a
# value holding it is tagged whatever its braces.
JINJA2_OVERRIDE = "#jinja2:"
# No tag: for values the caller proves template-free (tagged() checks them).
PROVEN_PLAIN = ""
TEMPLATE_MARKS = re.compile(r"\{[{%#]|[}%#]\}")
WRAP = 130  # the width long strings are folded to


def tagged(value: str, tag: str = UNSAFE) -> str:
    """A double-quoted scalar, ``!unsafe`` where it holds a brace or ``#jinja2:`` (``tag=UNSAFE``); with
    ``tag=""`` it must be proven free of template syntax."""
    if not tag and (TEMPLATE_MARKS.search(value) or JINJA2_OVERRIDE in value):
        raise ValueError(f"inventory value {value!r} holds template syntax")
    if tag and "{" not in value and "}" not in value and JINJA2_OVERRIDE not in value:
        return double_quoted(value)
    return tag + double_quoted(value)


def _non_string(value: Any) -> str | None:
    """A boolean, null, int or float as YAML writes it (both writers), else None."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return number(value)
    return None


def ansible_scalar(value: Any, tag: str = UNSAFE) -> str:
    plain = _non_string(value)
    return plain if plain is not None else tagged(str(value), tag)


# A break point: one space between two non-space characters. YAML folds a line break inside a
# double-quoted scalar into one space and drops the spaces around it, so a run of spaces is never split.
_BREAK = re.compile(r"(?<=\S) (?=\S)")


def folded(value: str, indent: int, tag: str = UNSAFE) -> str:
    """A double-quoted scalar folded over lines of at most WRAP - indent (at least 40) characters at single
    spaces; a word longer than a line stays whole. For text with single spaces this is what
    ``textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)`` writes."""
    text = tagged(value, tag)
    width = max(40, WRAP - indent)
    if len(text) <= width:
        return text
    words = _BREAK.split(text)
    lines: list[str] = []
    line = words[0]
    for word in words[1:]:
        if len(line) + 1 + len(word) <= width:
            line = f"{line} {word}"
        else:
            lines.append(line)
            line = word
    lines.append(line)
    return ("\n" + " " * (indent + 2)).join(lines)


def _flow(value: Any, tag: str) -> str:
    """Flow style (``{"a": 1}``, ``[1, 2]``: tuples, empty collections) with every string tagged too."""
    if isinstance(value, dict):
        items = (f"{double_quoted(str(k))}: {_flow(x, tag)}" for k, x in value.items())
        return "{" + ", ".join(items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_flow(x, tag) for x in value) + "]"
    return ansible_scalar(value, tag)


def ansible_block(obj: Any, indent: int = 0, tag: str = UNSAFE) -> str:
    """Block-style YAML for Ansible variables and inventories: mappings keep their order, keys are quoted
    by the block rule (never tagged: Ansible does not template keys), string values double-quoted and
    ``tag``-ged, long ones folded. No trailing newline."""
    pad = " " * indent
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        parts = []
        for k, v in obj.items():
            key = scalar(k)
            if isinstance(v, dict | list) and v:
                parts.append(f"{pad}{key}:\n{ansible_block(v, indent + 2, tag)}")
            elif isinstance(v, str):
                parts.append(f"{pad}{key}: {folded(v, indent + len(key) + 2, tag)}")
            else:
                parts.append(f"{pad}{key}: {_flow(v, tag)}")
        return "\n".join(parts)
    if isinstance(obj, list):
        if not obj:
            return "[]"
        parts = []
        for item in obj:
            if isinstance(item, dict | list) and item:
                body = ansible_block(item, indent + 2, tag)
                parts.append(f"{pad}- {body[indent + 2 :]}")
            else:
                parts.append(f"{pad}- {_flow(item, tag)}")
        return "\n".join(parts)
    return _flow(obj, tag)
