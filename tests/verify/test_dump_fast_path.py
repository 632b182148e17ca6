"""The dump readers' fast path (whole-text matches of the lines as ibnetdiscover prints them) reads every
dump exactly as their per-line path does: nodes, links, line numbers, warnings and refusals.

The per-line reading is forced by indenting every line: each reader strips a line before reading it, and
no fast pattern matches a line that starts with whitespace.
"""

from __future__ import annotations

import re

import pytest
from vfy_plans import FIXTURES

import generator.verify.ibnetdiscover as ibd
import generator.verify.sm_guids as smg
from generator.verify.ibnetdiscover import parse_ibnetdiscover
from generator.verify.model import DiscoveryError
from generator.verify.sm_guids import GuidError, parse_nodes

DUMPS = [
    FIXTURES / "tiny-ndr-compute-sim-hdr.ibnetdiscover",
    FIXTURES / "tiny-ndr-storage-sim-hdr.ibnetdiscover",
    FIXTURES / "quirks.topo",
    FIXTURES / "real" / "ibtopotool-2.topo",
    FIXTURES / "real" / "ibtopotool-3.topo",
]
TINY = DUMPS[0]


def _per_line(text: str) -> str:
    return "\n".join(f" {line}" for line in text.split("\n"))


def _refusal(exc: Exception) -> tuple[str, str, str]:
    # the indent that forces the per-line path makes a line one character longer
    return (
        "refused",
        type(exc).__name__,
        re.sub(r"line of [\d,]+ characters", "line of N characters", str(exc)),
    )


def _read(text: str) -> tuple[object, ...]:
    try:
        d = parse_ibnetdiscover(text, "dump")
    except DiscoveryError as exc:
        return _refusal(exc)
    return (d.format, d.nodes, d.links, d.warnings, d.excluded)


def _nodes(text: str) -> object:
    try:
        return parse_nodes(text, "dump")
    except (GuidError, DiscoveryError) as exc:
        return _refusal(exc)


def _edited(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def _variants() -> list[tuple[str, str]]:
    tiny = TINY.read_text(encoding="utf-8")
    out = [(p.name, p.read_text(encoding="utf-8")) for p in DUMPS]
    out += [
        ("crlf", tiny.replace("\n", "\r\n")),
        ("no blank lines", tiny.replace("\n\n", "\n")),
        ("port 300", _edited(tiny, "[8]\t", "[300]\t")),
        ("remote port 256", _edited(tiny, '"[32]\t', '"[256]\t')),
        ("guid of 17 digits", _edited(tiny, "[1](10000f)", "[1](110000000000000f)")),
        ("node guid of 17 digits", _edited(tiny, "switchguid=0x200007(", "switchguid=0x10000000000200007(")),
        (
            "devid of 9 digits",
            _edited(tiny, "devid=0x0\nsysimgguid=0x200007", "devid=0x123456789\nsysimgguid=0x200007"),
        ),
        ("line too long", _edited(tiny, '# "c-spine-001" lid 13 4xHDR', "# " + "x" * 5000)),
        ("no width or speed", _edited(tiny, " lid 13 4xHDR", " lid 13")),
        ("stderr noise", _edited(tiny, "\nvendid=0x0\n", "\nibwarn: mad_rpc failed\nvendid=0x0\n")),
        (
            "port line outside a record",
            _edited(
                tiny, "\nvendid=0x0\n", '\n[3]\t"S-0000000000200008"[3]\t\t# "x" lid 1 4xHDR\nvendid=0x0\n'
            ),
        ),
        (
            "a -p port line",
            _edited(
                tiny,
                "\nvendid=0x0\n",
                "\nSW 1 2 0x0000000000200007 4x HDR - CA 3 1 0x10000f ( 'a' - 'b' )\nvendid=0x0\n",
            ),
        ),
        ("no records", "# nothing here\n"),
    ]
    return out


@pytest.mark.parametrize("name,text", _variants(), ids=[n for n, _ in _variants()])
def test_fast_and_per_line_readings_agree(name: str, text: str) -> None:
    slow = _per_line(text)
    assert _read(text) == _read(slow)
    assert _nodes(text) == _nodes(slow)


def test_the_fast_path_reads_what_ibnetdiscover_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    """On simulator output the per-line readers see only the comment lines (else the test above compares
    the per-line path with itself)."""
    text = TINY.read_text(encoding="utf-8")
    comments = len(re.findall(r"^#", text, re.M))
    seen: list[str] = []
    real_read, real_node = ibd._read_line, smg._node_line
    monkeypatch.setattr(
        ibd, "_read_line", lambda b, r, line, *a: (seen.append(line), real_read(b, r, line, *a))
    )
    parse_ibnetdiscover(text, "dump")
    assert len(seen) == comments and all(s.startswith("#") for s in seen)
    seen.clear()
    monkeypatch.setattr(smg, "_node_line", lambda r, line, no: (seen.append(line), real_node(r, line, no)))
    parse_nodes(text, "dump")
    # parse_nodes also reads a CA's port lines one by one (it keeps their GUIDs)
    assert all(s.startswith(("#", "[")) for s in seen) and sum(s.startswith("#") for s in seen) == comments
    assert len(parse_ibnetdiscover(text, "dump").links) > 0
