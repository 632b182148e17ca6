"""A run of empty lines in a dump is stepped over in bounded memory: the blank-run pattern repeated a group,
for which the regex engine keeps backtracking state per line, so 8 MiB of empty lines held ~1 GB (the
hostile benchmark's limit) while verify-cabling and sm-guids read them. tracemalloc sees that state (the
engine allocates it with PyMem): ~150 MB for the 1 Mi empty lines here on that code, a few KB now."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from generator.verify.ibnetdiscover import BLANK_RUN, parse_ibnetdiscover

SIM = Path(__file__).resolve().parent / "fixtures" / "tiny-ndr-compute-sim-hdr.ibnetdiscover"
LINES = 1 << 20


def _peak(call: object) -> int:
    assert callable(call)
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_run_of_empty_or_blank_lines_is_matched_in_bounded_memory() -> None:
    for line in ("\n", " \t\r\n"):
        text = line * LINES + "x\n"
        assert _peak(lambda text=text: BLANK_RUN.match(text)) < 1 << 20
        m = BLANK_RUN.match(text)
        assert m is not None and m.end() == len(text) - 2  # the same run as before: every blank line, no more


def test_a_dump_then_empty_lines_is_read_in_bounded_memory() -> None:
    text = SIM.read_text()
    plain = parse_ibnetdiscover(text, "d")
    padded = text + "\n" * LINES
    assert _peak(lambda: parse_ibnetdiscover(padded, "d")) < 16 << 20
    assert parse_ibnetdiscover(padded, "d").links == plain.links
