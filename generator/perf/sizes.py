"""Message sizes as nccl-tests spells them: binary units (1K = 1024 B), ranges stepped by a factor."""

from __future__ import annotations

import re

UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
# ASCII digits only, and few of them (float() and int() take other scripts' digits, and a value of hundreds of
# digits is infinite as a float): 16T is 14 digits
SIZE_RE = re.compile(r"^\s*([0-9]{1,20}(?:\.[0-9]{1,20})?)\s*([KMGT]?)(?:I?B)?\s*$", re.IGNORECASE | re.ASCII)
FACTOR_RE = re.compile(r"\s*([0-9]{1,9})\s*", re.ASCII)
MAX_SIZES = 4096
MAX_BYTES = 1 << 44


class SizeError(ValueError):
    pass


def parse_size(text: str) -> int:
    m = SIZE_RE.match(text)
    if not m:
        raise SizeError(f"`{text}` is not a size like 8, 64K, 1M or 8G")
    value = float(m.group(1)) * UNITS[m.group(2).upper()]
    if value < 1 or value != int(value):
        raise SizeError(f"`{text}` is not a whole number of bytes")
    if value > MAX_BYTES:
        raise SizeError(f"`{text}` is larger than 16T")
    return int(value)


def parse_sizes(text: str) -> list[int]:
    """``1M..8G`` (doubling), ``8..8G:8`` (factor 8), or a comma list ``1M,64M,1G``; sorted, unique."""
    out: set[int] = set()
    for part in (p for p in text.split(",") if p.strip()):
        if ".." in part:
            lo_text, _, rest = part.partition("..")
            hi_text, _, factor_text = rest.partition(":")
            lo, hi = parse_size(lo_text), parse_size(hi_text)
            step = FACTOR_RE.fullmatch(factor_text)
            factor = int(step.group(1)) if step else (2 if not factor_text.strip() else 0)
            if factor < 2:
                raise SizeError(f"`{part}`: the step after `:` is a whole factor of at least 2")
            if lo > hi:
                raise SizeError(f"`{part}`: the range runs from the smaller size to the larger")
            s = lo
            while s <= hi:
                out.add(s)
                s *= factor
                if len(out) > MAX_SIZES:
                    break
        else:
            out.add(parse_size(part))
        if len(out) > MAX_SIZES:
            raise SizeError(f"more than {MAX_SIZES} sizes")
    if not out:
        raise SizeError("no size given")
    return sorted(out)


def format_size(n: int) -> str:
    for unit in ("T", "G", "M", "K"):
        if n >= UNITS[unit] and n % UNITS[unit] == 0:
            return f"{n // UNITS[unit]}{unit}"
    return str(n)
