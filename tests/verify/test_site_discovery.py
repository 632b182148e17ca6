"""Discovery input from fabrics someone else set up: ``-p`` nodes seen only on unconnected ports,
descriptions printed without quotes, the other common name-map forms (and a warning for lines that
are none of them), one exit code for dumps without links, and HCAs nobody named reported as such."""

from __future__ import annotations

import json
from pathlib import Path

from vfy_plans import FIXTURES, TINY, run_cli

from generator.verify.ibnetdiscover import parse_ibnetdiscover

SIM = FIXTURES / "tiny-ndr-compute-sim-hdr.ibnetdiscover"
PORTS = FIXTURES / "tiny-ndr-compute-sim-hdr.ports"


def test_ports_report_keeps_nodes_seen_only_on_unconnected_ports() -> None:
    text = PORTS.read_text()
    # a switch of the fabric with only unconnected ports listed (as for a switch cut off but still swept)
    lonely = "SW    99 1 0x00000000002000ff 4x SDR                                    'a09-ibleaf-07'\n"
    disc = parse_ibnetdiscover(text + lonely, "x.ports")
    node = disc.nodes["0x00000000002000ff"]
    assert (node.kind, node.desc) == ("switch", "a09-ibleaf-07")


def test_unquoted_descriptions_are_read() -> None:
    text = "\n".join(
        [
            "switchguid=0x2000000000000001(2000000000000001)",
            'Switch 36 "S-2000000000000001" # MF0;a05-ibleaf-01:MQM8700/U1 enhanced port 0 lid 3 lmc 0',
            '[1] "H-1000000000000001"[1](1000000000000001) # a05-r01-dgx-01 mlx5_0 lid 5 4xHDR',
            "",
            "caguid=0x1000000000000001",
            'Ca 1 "H-1000000000000001" # a05-r01-dgx-01 mlx5_0',
            '[1](1000000000000001) "S-2000000000000001"[1] # MF0;a05-ibleaf-01:MQM8700/U1 lid 3 4xHDR',
        ]
    )
    disc = parse_ibnetdiscover(text, "bare.topo")
    assert disc.nodes["0x2000000000000001"].desc == "MF0;a05-ibleaf-01:MQM8700/U1"
    assert disc.nodes["0x1000000000000001"].desc == "a05-r01-dgx-01 mlx5_0"
    (link,) = disc.links
    assert link.rate == "4xHDR"


def test_dumps_without_links_exit_2_like_empty_ones(tmp_path: Path) -> None:
    lonely = tmp_path / "lonely.topo"
    lonely.write_text('caguid=0x1000000000000001\nCa 1 "H-1000000000000001" # "dgx001 mlx5_0"\n')
    empty = tmp_path / "empty.topo"
    empty.write_text("#\n# Topology file: generated on Mon Nov 30 03:34:00 2026\n#\n")
    for dump in (lonely, empty):
        code, out, err = run_cli("verify-cabling", str(TINY), "--discovered", str(dump))
        assert code == 2, (dump.name, out, err)
    _, _, err = run_cli("verify-cabling", str(TINY), "--discovered", str(lonely))
    assert "no links" in err


def test_name_map_forms_and_unrecognised_lines(tmp_path: Path) -> None:
    names = tmp_path / "names"
    names.write_text(
        "# site map\n"
        "H-0946dae0300b1c3e dgx002 mlx5_0\n"  # topology-file node id, unquoted name
        "this line is not a mapping\n"
    )
    code, out, _ = run_cli(
        "verify-cabling",
        str(TINY),
        "--discovered",
        str(FIXTURES / "quirks.topo"),
        "--node-name-map",
        str(names),
        "--format",
        "json",
    )
    report = json.loads(out)
    assert code == 1
    assert not any("0x0946dae0300b1c3e" in u for u in report["unidentified"])  # named by the map
    assert any(f"{names}:3: not a node-name map line" in w for w in report["warnings"])


def test_unnamed_hca_reported_as_such_with_its_switch_port() -> None:
    code, out, _ = run_cli(
        "verify-cabling", str(TINY), "--discovered", str(FIXTURES / "quirks.topo"), "--format", "json"
    )
    report = json.loads(out)
    assert code == 1
    # quirks.topo: leaf c-leaf-su1-r0 port 2 leads to an HCA with ConnectX-7's firmware-default description,
    # on the port the plan gives dgx002 mlx5_0: identified by position, with a finding, not a miswiring
    assert not any("0x0946dae0300b1c3e" in u for u in report["unidentified"])
    assert {r["cable"] for r in report["results"]}.isdisjoint({"C-NL-000009"})
    (note,) = [w for w in report["warnings"] if "identified by position only" in w]
    assert note.startswith("dgx002 (mlx5_0/1): HCA 0x0946dae0300b1c3e ")


def test_unnamed_hca_off_its_planned_port_stays_unidentified(tmp_path: Path) -> None:
    # the same HCA moved to a leaf port the plan gives nobody (port 40): nothing places it
    text = (FIXTURES / "quirks.topo").read_text()
    moved = text.replace('[2] "H-0946dae0300b1c3e"[1]', '[40] "H-0946dae0300b1c3e"[1]')
    moved = moved.replace('"S-fc6a1c0300e7a1b0"[2] # lid 32', '"S-fc6a1c0300e7a1b0"[40] # lid 32')
    assert moved != text
    dump = tmp_path / "moved.topo"
    dump.write_text(moved)
    code, out, _ = run_cli("verify-cabling", str(TINY), "--discovered", str(dump), "--format", "json")
    report = json.loads(out)
    assert code == 1
    # QM9700 at NDR: two ports per cage, so logical port 40 is cage 20, sub-port 2 on the cabling sheet
    assert (
        "unnamed HCA 0x0946dae0300b1c3e (firmware-default description "
        "'MT4129 ConnectX7   Mellanox Technologies') on c-leaf-su1-r0 port 40 [P20/2]"
    ) in report["unidentified"]


def test_name_map_reader_accepts_each_form(tmp_path: Path) -> None:
    from generator.verify.identify import read_node_name_map

    path = tmp_path / "map"
    path.write_text(
        '0x0002c903000a1b2c "dgx01 mlx5_0"\n'
        "0x0002c903000a1b2d dgx01 mlx5_1\n"
        '"S-0002c903000a1b30" "a05-ibleaf-01"\n'
        "H-2c903000a1b31 dgx02 mlx5_0\n"
        "\n# comment\n"
        "0xnothex name\n"
    )
    m = read_node_name_map(path)
    assert m.names == {
        0x0002C903000A1B2C: "dgx01 mlx5_0",
        0x0002C903000A1B2D: "dgx01 mlx5_1",
        0x0002C903000A1B30: "a05-ibleaf-01",
        0x2C903000A1B31: "dgx02 mlx5_0",
    }
    assert m.warnings == [f"{path}:7: not a node-name map line (0x<guid> name, H-<guid> name), ignored"]


def test_site_hca_names_are_matched_from_the_switch_side(tmp_path: Path) -> None:
    import re

    # the real ibsim dump with the HCAs renamed the way some sites do (HCA-<n+1> for mlx5_<n>)
    text = re.sub(
        r"(dgx00\d) mlx5_(\d+)", lambda m: f"{m.group(1)} HCA-{int(m.group(2)) + 1}", SIM.read_text()
    )
    assert "mlx5_" not in text
    dump = tmp_path / "site-hca.topo"
    dump.write_text(text)
    code, out, _ = run_cli(
        "verify-cabling", str(TINY), "--discovered", str(dump), "--sim-speed", "hdr", "--format", "json"
    )
    report = json.loads(out)
    assert code == 0, report["summary"]
    assert report["summary"]["ok"] == report["summary"]["planned"] == 64
    # every host follows one rule (HCA-<n+1> is mlx5_<n>): learned once, not a "not checked" per host
    assert not [w for w in report["warnings"] if "is not one of the plan's RDMA devices" in w]
    (rule,) = [w for w in report["warnings"] if w.startswith("HCA names read as the plan's RDMA devices")]
    assert "HCA-1=mlx5_0" in rule and "HCA-12=mlx5_11" in rule, rule


def test_name_map_lines_are_numbered_at_line_feeds_only(tmp_path: Path) -> None:
    """VT, FF, \\x1c-\\x1e, NEL and U+2028 inside a line do not end it (str.splitlines() would say they do),
    and a CRLF file reads as an LF one."""
    from generator.verify.identify import read_node_name_map

    path = tmp_path / "map"
    path.write_bytes(
        '0x0002c903000a1b2c "dgx01 mlx5_0"\r\n'
        "# a comment with \v \f \x1c \x1d \x1e \x85 \u2028 in it\r\n"
        "0xnothex name\r\n".encode()
    )
    m = read_node_name_map(path)
    assert m.names == {0x0002C903000A1B2C: "dgx01 mlx5_0"}
    assert m.warnings == [f"{path}:3: not a node-name map line (0x<guid> name, H-<guid> name), ignored"]


def test_two_switches_with_one_name_are_reported_and_placed_by_position(tmp_path: Path) -> None:
    # the real ibsim dump with c-leaf-su1-r1 described as c-leaf-su1-r0 (a copied switch config)
    text = SIM.read_text().replace('# "c-leaf-su1-r1"', '# "c-leaf-su1-r0"')
    dump = tmp_path / "twice.topo"
    dump.write_text(text)
    args = ("verify-cabling", str(TINY), "--discovered", str(dump), "--sim-speed", "hdr", "--format", "json")
    code, out, _ = run_cli(*args)
    report = json.loads(out)
    # neither is taken for c-leaf-su1-r0 by its name; each sits where the spines and hosts say it is
    assert code == 0 and report["summary"]["miswired"] == 0, report["results"]
    (note,) = [w for w in report["warnings"] if "claim this name" in w]
    assert note.startswith("c-leaf-su1-r0: 2 switches claim this name")
    assert "0x0000000000200000 is c-leaf-su1-r0" in note and "0x0000000000200001 is c-leaf-su1-r1" in note
    assert not [w for w in report["warnings"] if "identified by position only" in w]
    # sm-guids still refuses the dump: a root or partition GUID must never rest on a name claimed twice
    code, _, err = run_cli("sm-guids", str(TINY), "--discovered", str(dump), "-o", str(tmp_path / "guids"))
    assert code == 2 and "claims 'c-leaf-su1-r0', as do the switches at lines" in err


def test_a_leaf_without_a_name_is_placed_by_its_hosts_when_uplinks_are_crossed(tmp_path: Path) -> None:
    """c-leaf-su1-r0 with its factory description (MF0;switch-a1b2c3:...) and two of its four uplinks crossed
    (ports 5 and 6 to the spine's 2 and 1): its spine agrees on two ports only, not on most; the four hosts
    named below it agree on every port, so it is placed, and only the two crossed uplinks are MISWIRED (before,
    its four host cables were reported going to an unidentified switch: 8 miswired)."""
    code, _, err = run_cli("cabling", str(TINY), "-o", str(tmp_path / "c"))
    assert code == 0, err
    text = (tmp_path / "c" / "ibnetdiscover" / "compute.net").read_text()
    factory = '"MF0;switch-a1b2c3:MQM9700/U1"'
    edits = [
        ('Switch\t64 "S-c-leaf-su1-r0"\t\t# "c-leaf-su1-r0"', f'Switch\t64 "S-c-leaf-su1-r0"\t\t# {factory}'),
        ('[5]\t"S-c-spine-001"[1]', '[5]\t"S-c-spine-001"[X]'),
        ('[6]\t"S-c-spine-001"[2]', '[6]\t"S-c-spine-001"[1]'),
        ('[5]\t"S-c-spine-001"[X]', '[5]\t"S-c-spine-001"[2]'),
        ('[1]\t"S-c-leaf-su1-r0"[5]', '[1]\t"S-c-leaf-su1-r0"[X]'),
        ('[2]\t"S-c-leaf-su1-r0"[6]', '[2]\t"S-c-leaf-su1-r0"[5]'),
        ('[1]\t"S-c-leaf-su1-r0"[X]', '[1]\t"S-c-leaf-su1-r0"[6]'),
    ]
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    text = text.replace('# "c-leaf-su1-r0" lid', f"# {factory} lid")
    dump = tmp_path / "crossed.net"
    dump.write_text(text)
    code, out, _ = run_cli("verify-cabling", str(TINY), "--discovered", str(dump), "--format", "json")
    report = json.loads(out)
    assert code == 1 and report["summary"]["miswired"] == 2, report["results"]
    wrong = sorted(r["cable"] for r in report["results"] if r["status"] == "miswired")
    assert wrong == ["C-LS-000001", "C-LS-000002"]
    assert any(
        "c-leaf-su1-r0: switch" in w and "identified by position only" in w for w in report["warnings"]
    )
