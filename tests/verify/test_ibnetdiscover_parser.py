"""The ibnetdiscover parser on hand-written real-shaped dumps and on captured simulator output."""

from __future__ import annotations

import re

import pytest
from vfy_plans import FIXTURES

from generator.verify.ibnetdiscover import parse_ibnetdiscover, read_ibnetdiscover
from generator.verify.model import DiscoveryError

LEAF, SPINE, ODD_SW = "0xfc6a1c0300e7a1b0", "0xfc6a1c0300e7b2c0", "0xfc6a1c0300e7c3d0"


def _links(disc) -> set[tuple[str, int, str, int, str | None]]:
    out = set()
    for ln in disc.links:
        a, b = sorted([(ln.a_node, ln.a_port), (ln.b_node, ln.b_port)])
        out.add((*a, *b, ln.rate))
    return out


def test_quirky_dump_nodes_and_descriptions() -> None:
    disc = read_ibnetdiscover(FIXTURES / "quirks.topo")
    assert disc.format == "ibnetdiscover"
    nodes = disc.nodes
    assert nodes[LEAF].desc == "MF0;c-leaf-su1-r0:MQM9700/U1" and nodes[LEAF].kind == "switch"
    assert nodes[LEAF].nports == 65 and nodes[LEAF].guid == 0xFC6A1C0300E7A1B0
    # GUIDs with and without leading zeros are one node
    assert nodes["0x0946dae0300b1c3e"].desc == "MT4129 ConnectX7   Mellanox Technologies"
    assert nodes["0x946dae0300b1c4f0"].desc == "dgx003.cluster.local mlx5_0"
    # quotes and '#' inside descriptions (unescaped in real output)
    assert nodes["0x946dae0300b1c511"].desc == 'odd "quoted" #7 host mlx5_1'
    assert nodes["0x946dae0300b1c512"].desc == 'peer " #x mlx5_0'
    # a node seen only from its peer's port line keeps the description printed there
    assert nodes["0x946dae0300b1c500"].desc == "dgx004 mlx5_0" and nodes["0x946dae0300b1c500"].kind == "ca"


def test_quirky_dump_links_rates_and_sharp_node() -> None:
    disc = read_ibnetdiscover(FIXTURES / "quirks.topo")
    assert disc.excluded == ["0xfc6a1c0300e7a1b8"]  # the SHARP aggregation node on port 65
    assert "0xfc6a1c0300e7a1b8" not in disc.nodes
    assert _links(disc) == {
        ("0x946dae0300b1c2d0", 1, LEAF, 1, "4xNDR"),
        ("0x0946dae0300b1c3e", 1, LEAF, 2, "4xNDR"),
        ("0x946dae0300b1c4f0", 1, LEAF, 3, "4xHDR"),
        ("0x946dae0300b1c500", 1, LEAF, 4, "2xNDR"),
        (LEAF, 5, SPINE, 1, "4xNDR"),
        (LEAF, 6, SPINE, 2, "4xNDR"),
        (LEAF, 7, SPINE, 4, "4xNDR"),
        (LEAF, 8, SPINE, 3, "4xNDR"),  # rate missing on the leaf's line, taken from the spine's
        (SPINE, 9, ODD_SW, 1, "4xNDR"),
        ("0x946dae0300b1c511", 1, "0x946dae0300b1c512", 1, "4x???"),  # XDR on old rdma-core prints ???
    }
    assert disc.warnings == []


def test_stderr_noise_blank_lines_and_separators_do_not_matter() -> None:
    text = (FIXTURES / "tiny-ndr-compute-sim-hdr.ibnetdiscover").read_text()
    base = parse_ibnetdiscover(text)
    assert len(base.links) == 64 and len(base.nodes) == 9 + 32
    squashed = "ibwarn: [99] mad_rpc: _do_madrpc failed; dport (DR path slid 0; dlid 0; 0,1)\n" + "\n".join(
        re.sub(r"[ \t]+", " ", ln) for ln in text.splitlines() if ln.strip()
    )
    no_zeros = re.sub(r'"([SH])-0+([0-9a-f]+)"', r'"\1-\2"', squashed)
    for variant in (squashed, no_zeros):
        assert _links(parse_ibnetdiscover(variant)) == _links(base)
        assert {k: n.desc for k, n in parse_ibnetdiscover(variant).nodes.items()} == {
            k: n.desc for k, n in base.nodes.items()
        }


@pytest.mark.parametrize("name", ["tiny-ndr-compute-sim-hdr.ibnetdiscover", "tiny-ndr-compute-sim-hdr.ports"])
def test_long_runs_of_empty_lines_are_skipped_with_their_line_numbers(name: str) -> None:
    """Each empty line of a run made the record-head pattern take the rest of the run before failing (40,000
    empty lines: 45 s; a 64 MiB dump may hold 64 million). A run is now one step; the lines after it keep
    their numbers, in both formats."""
    text = (FIXTURES / name).read_text()
    base = parse_ibnetdiscover(text)
    padded = "\n" * 30_000 + text.replace("\n\n", "\n" * 3_000) + "\n" * 30_000
    assert _links(parse_ibnetdiscover(padded)) == _links(base)
    # blank lines of spaces and CRLF line ends are skipped the same way, numbered the same
    crlf = text.replace("\n", "\r\n").replace("\r\n\r\n", "\r\n" + " \t\r\n" * 2_000)
    assert _links(parse_ibnetdiscover(crlf)) == _links(base)
    with pytest.raises(DiscoveryError, match=rf"<ibnetdiscover>:{crlf.count(chr(10)) + 2}: line of 5,000"):
        parse_ibnetdiscover(crlf + " \r\n" + " " * 5000 + "\n")  # a blank line past MAX_LINE is still refused
    damaged_at = padded.count("\n") + 1
    with pytest.raises(DiscoveryError, match=rf"<ibnetdiscover>:{damaged_at}: a number longer than any"):
        parse_ibnetdiscover(padded + "Switch 64 " + "9" * 40 + "\n")
    long_at = padded.count("\n") + 1
    with pytest.raises(DiscoveryError, match=rf"<ibnetdiscover>:{long_at}: line of 5,000 characters"):
        parse_ibnetdiscover(padded + "x" * 5000 + "\n")


def test_ports_format_matches_default_format() -> None:
    default = read_ibnetdiscover(FIXTURES / "tiny-ndr-compute-sim-hdr.ibnetdiscover")
    ports = read_ibnetdiscover(FIXTURES / "tiny-ndr-compute-sim-hdr.ports")
    assert ports.format == "ibnetdiscover -p"

    def by_desc(disc):
        # -p names CA ports by port GUID, the default format by node GUID: compare by description
        d = disc.nodes
        return {
            (*tuple(sorted([(d[ln.a_node].desc, ln.a_port), (d[ln.b_node].desc, ln.b_port)])), ln.rate)
            for ln in disc.links
        }

    assert by_desc(ports) == by_desc(default)
    assert len(ports.links) == 64


def test_ports_format_line_shapes() -> None:
    text = "\n".join(
        [
            "CA   268  1 0x00000000001001ff 4x HDR - SW    15 32 0x0000000000200007 ( 'gpu0031 mlx5_7' - 'MF0;leaf08:MQM8700/U1' )",
            "SW    15 33 0x0000000000200007 4x SDR                                    'MF0;leaf08:MQM8700/U1'",
            "SW    15 32 0x0000000000200007 4x HDR - CA   268  1 0x00000000001001ff ( 'MF0;leaf08:MQM8700/U1' - 'gpu0031 mlx5_7' )",
            "SW    15 41 0x0000000000200007 4x HDR - CA   300  1 0x00000000001002aa ( 'MF0;leaf08:MQM8700/U1' - "
            "'Mellanox Technologies Aggregation Node' )",
            "SW    17  1 0x0000000000200009 2x NDR - SW    16  3 0x0000000000200008 ( ' padded desc ' - 'spine 01' )",
        ]
    )
    disc = parse_ibnetdiscover(text)
    assert _links(disc) == {
        ("0x00000000001001ff", 1, "0x0000000000200007", 32, "4xHDR"),
        ("0x0000000000200008", 3, "0x0000000000200009", 1, "2xNDR"),
    }
    assert disc.nodes["0x0000000000200007"].desc == "MF0;leaf08:MQM8700/U1"
    assert disc.nodes["0x0000000000200008"].desc == "spine 01"
    assert disc.nodes["0x0000000000200009"].desc == " padded desc "
    assert disc.excluded == ["0x00000000001002aa"]


def test_ibsim_shorthand_without_descriptions() -> None:
    text = "\n".join(
        [
            'Switch 8 "S-leaf1"',
            '[1] "H-h1"[1]',
            '[2] "H-h2"',  # remote port omitted = port 1
            "",
            'Ca 1 "H-h1"',
            '[1] "S-leaf1"[1]',
        ]
    )
    disc = parse_ibnetdiscover(text)
    assert _links(disc) == {("id:h1", 1, "id:leaf1", 1, None), ("id:h2", 1, "id:leaf1", 2, None)}
    assert all(n.desc == "" for n in disc.nodes.values())


@pytest.mark.parametrize("text", ["", "hello\nworld\n", '{"lldp": {}}'])
def test_not_ibnetdiscover_is_an_error(text: str) -> None:
    with pytest.raises(DiscoveryError, match="no ibnetdiscover records"):
        parse_ibnetdiscover(text, "x.out")


def test_binary_cache_file_is_an_error(tmp_path) -> None:
    f = tmp_path / "fabric.cache"
    f.write_bytes(b"\x00\x01IBND\x00" * 10)
    with pytest.raises(DiscoveryError, match="binary file"):
        read_ibnetdiscover(f)
    with pytest.raises(DiscoveryError, match="cannot read"):
        read_ibnetdiscover(tmp_path / "absent")


def test_conflicting_port_reports_are_warned() -> None:
    text = "\n".join(
        [
            'Switch 8 "S-01" # "a" enhanced port 0 lid 1 lmc 0',
            '[1] "S-02"[1] # "b" lid 2 4xHDR',
            'Switch 8 "S-02" # "b" enhanced port 0 lid 2 lmc 0',
            '[1] "S-03"[5] # "c" lid 3 4xHDR',
        ]
    )
    disc = parse_ibnetdiscover(text, "f")
    assert any("port 1 of 0x0000000000000002" in w for w in disc.warnings)
