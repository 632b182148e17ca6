"""Link lines no cable can be: a switch port connected to itself and a link at port 0 (a switch's
management port; CA ports are numbered from 1). Both formats of a captured ibsim + ibnetdiscover dump with one
such line added are read alike: the line is warned about, at its line, and no link is made of it."""

from __future__ import annotations

import pytest
from vfy_plans import FIXTURES

from generator.verify.ibnetdiscover import parse_ibnetdiscover

DEFAULT = FIXTURES / "tiny-ndr-compute-sim-hdr.ibnetdiscover"
PORTS = FIXTURES / "tiny-ndr-compute-sim-hdr.ports"
LEAF, SPINE = "0x0000000000200007", "0x0000000000200008"  # c-leaf-su1-r7, c-spine-001
LEAF_HEAD = 'Switch\t64 "S-0000000000200007"\t\t# "c-leaf-su1-r7" enhanced port 0 lid 12 lmc 0\n'


def _with_line(path, line: str, after: str | None = None):
    """The dump with ``line`` added (after the line ``after``, else at the end), and its line number."""
    text = path.read_text()
    at = text.index(after) + len(after) if after else len(text)
    no = text.count("\n", 0, at) + 1
    return parse_ibnetdiscover(text[:at] + line + "\n" + text[at:], str(path)), no


def _ends(disc) -> set[tuple[str, int]]:
    return {e for ln in disc.links for e in ((ln.a_node, ln.a_port), (ln.b_node, ln.b_port))}


def test_a_ports_format_switch_port_connected_to_itself_is_warned_and_left_out() -> None:
    clean = parse_ibnetdiscover(PORTS.read_text(), str(PORTS))
    line = f"SW    12 64 {LEAF} 4x HDR - SW    12 64 {LEAF} ( 'c-leaf-su1-r7' - 'c-leaf-su1-r7' )"
    disc, no = _with_line(PORTS, line)
    assert (LEAF, 64) not in _ends(disc)
    assert len(disc.links) == len(clean.links)
    assert f"{PORTS}:{no}: port 64 of {LEAF} is connected to itself" in disc.warnings


@pytest.mark.parametrize(
    ("path", "line", "after"),
    [
        (DEFAULT, '[0]\t"S-0000000000200008"[64]\t\t# "c-spine-001" lid 13 4xHDR', LEAF_HEAD),
        (PORTS, f"SW    12  0 {LEAF} 4x HDR - SW    13 64 {SPINE} ( 'c-leaf-su1-r7' - 'c-spine-001' )", None),
        (PORTS, f"SW    13 64 {SPINE} 4x HDR - SW    12  0 {LEAF} ( 'c-spine-001' - 'c-leaf-su1-r7' )", None),
    ],
    ids=["default", "ports-local", "ports-remote"],
)
def test_a_link_at_port_0_is_warned_and_left_out(path, line: str, after: str | None) -> None:
    clean = parse_ibnetdiscover(path.read_text(), str(path))
    disc, no = _with_line(path, line, after)
    assert (LEAF, 0) not in _ends(disc) and (SPINE, 64) not in _ends(disc)
    assert len(disc.links) == len(clean.links)
    assert any(w.startswith(f"{path}:{no}: a link at port 0") for w in disc.warnings), disc.warnings
