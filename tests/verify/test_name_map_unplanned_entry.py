"""verify-cabling: a --node-name-map entry whose GUID is a node of the dump but whose name is no plan device
(of the node's kind) is warned about at the map's line, naming the entry and what became of the node: it
was passed over without a word, so a typo in the map was invisible."""

from __future__ import annotations

from pathlib import Path

from conftest import run_cli

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TINY = str(FIXTURES / "tiny-ndr.yaml")
SIM = FIXTURES / "tiny-ndr-compute-sim-hdr.ibnetdiscover"
MAP = """# the site's record
0x200007 "c-leaf-su1-r7"
0x200006 "c-leaf-su1-rr6"
0x10000c "dgx01 mlx5_10"
0x99999999 "not-in-this-dump"
0x10001c "c-spine-001"
"""


def _verify(tmp_path: Path, dump: Path) -> tuple[int, str]:
    names = tmp_path / "node-name-map"
    names.write_text(MAP)
    code, out, err = run_cli(
        "verify-cabling", TINY, "--discovered", str(dump), "--sim-speed", "HDR", "--node-name-map", str(names)
    )
    return code, out + err


def test_entries_naming_no_plan_device_are_warned_at_their_line(tmp_path: Path) -> None:
    code, said = _verify(tmp_path, SIM)
    assert code == 0, said  # the descriptions still identify every node: the cabling matches
    assert (
        "node-name-map:3: node-name map entry 0x0000000000200006 'c-leaf-su1-rr6' names no device of the plan: "
        "not used; the switch is identified by its node description, as c-leaf-su1-r6" in said
    ), said
    assert "node-name-map:4: node-name map entry 0x000000000010000c 'dgx01 mlx5_10' names no device" in said
    assert (
        "node-name-map:6: node-name map entry 0x000000000010001c 'c-spine-001' names c-spine-001, which is no "
        "HCA in the plan: not used; the HCA is identified by its node description, as dgx002" in said
    ), said
    assert "not-in-this-dump" not in said and "node-name-map:2" not in said  # no node of it / a plan name


def test_the_warning_says_the_node_was_placed_by_position(tmp_path: Path) -> None:
    firmware = "MT4123 ConnectX6   Mellanox Technologies"
    dump = tmp_path / "dump.ibnetdiscover"
    dump.write_text(SIM.read_text().replace('"dgx001 mlx5_10"', f'"{firmware}"'))
    code, said = _verify(tmp_path, dump)
    assert code == 0, said
    assert (
        "node-name-map:4: node-name map entry 0x000000000010000c 'dgx01 mlx5_10' names no device of the plan: "
        "not used; the HCA is placed by position, as dgx001" in said
    ), said
