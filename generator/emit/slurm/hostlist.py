"""Slurm hostlist expressions: ``dgx[001-032,040]`` ⇄ the names they stand for.

Slurm (``src/common/hostlist.c``) splits a name into a prefix and a trailing number; numbers written with
leading zeros keep their width (``dgx[098-100]`` is dgx098, dgx099, dgx100) while unpadded numbers do not
(``n[8-10]`` is n8, n9, n10). :func:`compress` groups names by prefix and width class, sorts them and
folds consecutive numbers into ranges; :func:`expand` is its inverse and accepts every form compress
writes (plus several bracket groups and a suffix after the bracket, which Slurm also parses).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

_TRAILING = re.compile(r"^(.*?)(\d+)$")
_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


class HostlistError(ValueError):
    """A hostlist expression that cannot be parsed."""


def _split(name: str) -> tuple[str, str] | None:
    """(prefix, digits) for a name ending in digits with a non-empty prefix, else None."""
    m = _TRAILING.match(name)
    if not m or not m.group(1):
        return None
    return m.group(1), m.group(2)


def _runs(values: list[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for v in values:
        if runs and v == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], v)
        elif not runs or v != runs[-1][1]:
            runs.append((v, v))
    return runs


def compress(names: Iterable[str]) -> str:
    """The shortest sorted hostlist for ``names`` (duplicates dropped); ``""`` for no names."""
    plain: set[str] = set()
    digits: dict[str, set[str]] = defaultdict(set)
    for name in names:
        if not name or any(ch in name for ch in "[],"):
            raise HostlistError(f"`{name}` cannot appear in a Slurm hostlist")
        parts = _split(name)
        if parts is None:
            plain.add(name)
        else:
            digits[parts[0]].add(parts[1])
    pieces: list[tuple[str, str]] = [(n, n) for n in plain]
    for prefix, nums in digits.items():
        # width class: a zero-padded number fixes its width; an unpadded one joins the padded class of
        # its own length if there is one (098-100), otherwise it is printed bare (8-10).
        padded = {len(s) for s in nums if len(s) > 1 and s[0] == "0"}
        classes: dict[int, list[int]] = defaultdict(list)
        for s in nums:
            width = len(s) if (len(s) > 1 and s[0] == "0") or len(s) in padded else 0
            classes[width].append(int(s))
        ranges: list[tuple[int, int, int]] = []  # (first, last, width)
        for width, values in classes.items():
            ranges.extend((lo, hi, width) for lo, hi in _runs(sorted(values)))
        ranges.sort()
        text = [f"{lo:0{w}d}" if lo == hi else f"{lo:0{w}d}-{hi:0{w}d}" for lo, hi, w in ranges]
        if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
            pieces.append((prefix, prefix + text[0]))
        else:
            pieces.append((prefix, f"{prefix}[{','.join(text)}]"))
    return ",".join(text for _, text in sorted(pieces, key=lambda p: (natural_key(p[0]), p[1])))


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """Orders ``su2`` before ``su10`` (numbers compare as numbers)."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"(\d+)", text) if p)


def _top_level_items(expr: str) -> list[str]:
    items: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in expr:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise HostlistError(f"unbalanced `]` in hostlist `{expr}`")
        if ch == "," and depth == 0:
            items.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if depth:
        raise HostlistError(f"unbalanced `[` in hostlist `{expr}`")
    items.append("".join(cur))
    return [i.strip() for i in items if i.strip()]


def _expand_item(item: str) -> list[str]:
    start = item.find("[")
    if start < 0:
        return [item]
    end = item.index("]", start)
    prefix, body, rest = item[:start], item[start + 1 : end], item[end + 1 :]
    out: list[str] = []
    tails = _expand_item(rest) if rest else [""]
    for part in body.split(","):
        m = _RANGE.match(part.strip())
        if not m:
            raise HostlistError(f"`{part}` in `{item}` is not a number or a range")
        lo_s, hi_s = m.group(1), m.group(2) or m.group(1)
        width = len(lo_s) if len(lo_s) > 1 and lo_s[0] == "0" else 0
        lo, hi = int(lo_s), int(hi_s)
        if hi < lo:
            raise HostlistError(f"range `{part}` in `{item}` runs backwards")
        for v in range(lo, hi + 1):
            out.extend(f"{prefix}{v:0{width}d}{t}" for t in tails)
    return out


def expand(expr: str) -> list[str]:
    """Every name a hostlist expression stands for, in the order written."""
    names: list[str] = []
    for item in _top_level_items(expr):
        names.extend(_expand_item(item))
    return names
