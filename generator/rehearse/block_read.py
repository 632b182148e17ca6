"""A fast reader for the block YAML that ``generator/yamltext.py`` writes (NVUE ``startup.yaml``).

ruamel's pure-Python loader needs about 90 ms for one 16 KB ``startup.yaml``: 45 s of the 49 s a rehearsal
of the 512-router dragonfly spent before any switch started. The writer uses a small subset of YAML:
block mappings and sequences, two spaces per level, a sequence under a key at the key's indent, scalars
plain (only when YAML 1.1 and 1.2 read them as the same string), single-quoted (``''`` for a quote),
decimal integers, ``true``/``false``/``null`` and the empty ``{}``/``[]``; comments only on their own lines.
This reader accepts exactly that subset and returns what a YAML 1.2 safe loader returns for it; anything
else (a file edited by hand into flow style, anchors, another scalar form) raises ``NotBlock`` and the
caller falls back to ruamel, so a valid edit is never read differently. tests/rehearse compares the two
loaders on generated files.
"""

from __future__ import annotations

import re
from typing import Any

from generator.foreign import MAX_YAML_DEPTH

# A plain scalar the writer emits (its _PLAIN, minus brackets and commas that a hand edit could make flow)
_PLAIN = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9 ._/-]*[A-Za-z0-9._/-])?$")
_INT = re.compile(r"^(0|[1-9][0-9]*)$")
# Plain scalars a YAML 1.1 or 1.2 loader may read as something else than a string: left to ruamel
# (the writer's _NUMBER_LIKE: YAML 1.1 ints, floats, sexagesimals, 0x/0o/0b)
_SPECIAL = re.compile(r"^[-+]?(\d[\d_]*)?(\.[\d_]*)?([eE][-+]?\d+)?$|^0[xob]|^\d+:\d")
_WORDS = {"y", "yes", "n", "no", "true", "false", "on", "off", "null", "~"}
_KEY = re.compile(r"^('(?:[^']|'')*'|[^' ][^:]*?):(?: (.*))?$")


class NotBlock(ValueError):
    """The text leaves the writer's subset (the caller uses a full YAML loader)."""


def scalar(text: str) -> Any:
    if text == "{}":
        return {}
    if text == "[]":
        return []
    if text in ("true", "false"):
        return text == "true"
    if text == "null":
        return None
    if _INT.match(text):
        return int(text)
    if text.startswith("'"):
        inner = text[1:-1]
        if len(text) < 2 or not text.endswith("'") or "'" in inner.replace("''", ""):
            raise NotBlock(f"quoted scalar {text!r}")
        return inner.replace("''", "'")
    if _PLAIN.match(text) and text.lower() not in _WORDS and not _SPECIAL.match(text):
        return text
    raise NotBlock(f"scalar {text!r}")


def _lines(text: str) -> list[tuple[int, str]]:
    out = []
    for line in text.splitlines():
        body = line.lstrip(" ")
        if not body or body.startswith("#"):
            continue
        if "\t" in line or body != body.rstrip():
            raise NotBlock("tab or trailing space")
        out.append((len(line) - len(body), body))
    return out


class _Reader:
    def __init__(self, lines: list[tuple[int, str]]) -> None:
        self.lines = lines
        self.i = 0
        self.depth = 0  # collections open: each costs this reader three Python frames

    def node(self, indent: int) -> Any:
        return self.sequence(indent) if self.lines[self.i][1].startswith("- ") else self.mapping(indent)

    def _deeper(self) -> None:
        """One more collection open; past MAX_YAML_DEPTH the text is left to the full loader, whose event
        pass refuses it at its line (350 nested keys were a RecursionError here, exit 3)."""
        self.depth += 1
        if self.depth > MAX_YAML_DEPTH:
            raise NotBlock(f"nested deeper than {MAX_YAML_DEPTH} levels")

    def value(self, text: str) -> Any:
        """A scalar; ``{}`` and ``[]`` are collections to YAML, counted as the full loader counts them."""
        if text in ("{}", "[]") and self.depth >= MAX_YAML_DEPTH:
            raise NotBlock(f"nested deeper than {MAX_YAML_DEPTH} levels")
        return scalar(text)

    def mapping(self, indent: int) -> dict[Any, Any]:
        self._deeper()
        out: dict[Any, Any] = {}
        while self.i < len(self.lines) and self.lines[self.i][0] == indent:
            body = self.lines[self.i][1]
            m = _KEY.match(body)
            if m is None or body.startswith("- "):
                break
            key = scalar(m.group(1))
            if not isinstance(key, str | int) or key in out:
                raise NotBlock(f"key {m.group(1)!r}")
            self.i += 1
            out[key] = self.value(m.group(2)) if m.group(2) is not None else self.child(indent)
        self.depth -= 1
        return out

    def child(self, indent: int) -> Any:
        """The block under ``key:`` (deeper, or a sequence at the key's own indent), else null."""
        if self.i < len(self.lines):
            at, body = self.lines[self.i]
            if at > indent:
                return self.node(at)
            if at == indent and body.startswith("- "):
                return self.sequence(indent)
        return None

    def sequence(self, indent: int) -> list[Any]:
        self._deeper()
        out: list[Any] = []
        while self.i < len(self.lines) and self.lines[self.i][0] == indent:
            body = self.lines[self.i][1]
            if not body.startswith("- "):
                break
            rest = body[2:]
            if (_KEY.match(rest) and not rest.startswith("'")) or rest.endswith(":"):
                self.lines[self.i] = (indent + 2, rest)  # a mapping whose first key follows the dash
                out.append(self.mapping(indent + 2))
            else:
                self.i += 1
                out.append(self.value(rest))
        self.depth -= 1
        return out


def load(text: str) -> Any:
    """The document, or ``NotBlock`` when the text is not in the writer's subset."""
    lines = _lines(text)
    if not lines:
        return None
    if lines[0][0] != 0:
        raise NotBlock("the document does not start at column 0")
    reader = _Reader(lines)
    doc = reader.node(0)
    if reader.i != len(lines):
        raise NotBlock(f"line {reader.i + 1} of the content is not where a block may continue")
    return doc
