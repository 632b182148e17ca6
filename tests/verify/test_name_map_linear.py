"""A --node-name-map line is read in one pass: the pattern for unquoted and node-id-keyed names ended in a
lazy name before `"?\\s*$`, which retried the blanks to the line's end at each character of the name, so 300
lines of `0x1111 a<4,080 blanks>b` took 56 s in verify-cabling and sm-guids (a 64 MiB map ~55 min; 600
lines here: minutes on that code, well under a second now). The lines taken and the names read are the
same as that pattern's, compared on ordinary lines and on generated ones."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from generator.verify.identify import _map_entry, read_node_name_map

# the two patterns the reader used, as they were: the reference the new reading is compared with
_LINE = re.compile(r'^\s*(0x[0-9a-fA-F]{1,16})\s+"(.*)"')
_ANY = re.compile(r'^\s*"?(?:0x|[SHR]-)([0-9a-fA-F]{1,16})"?\s+"?([^"]*?)"?\s*$')
WARNING = "not a node-name map line (0x<guid> name, H-<guid> name), ignored"


def _before(lines: list[str]) -> tuple[dict[int, str], list[int]]:
    """(names, numbers of the lines warned about) as the reader gave them before."""
    names: dict[int, str] = {}
    warned = []
    for no, line in enumerate(lines, 1):
        if not line.strip() or line.strip().startswith("#"):
            continue
        m = _LINE.match(line) or _ANY.match(line)
        name = (m.group(2) if m else "").strip()
        if m is None or not name:
            warned.append(no)
            continue
        names[int(m.group(1), 16)] = name
    return names, warned


def _now(tmp_path: Path, lines: list[str]) -> tuple[dict[int, str], list[int]]:
    path = tmp_path / "map"
    path.write_text("\n".join(lines) + "\n")
    m = read_node_name_map(path)
    warned = [int(w.split(":")[-2]) for w in m.warnings if w.endswith(WARNING)]
    assert len(warned) == len(m.warnings)
    return m.names, warned


ORDINARY = [
    '0x0002c903000a1b2c "dgx01 mlx5_0"',
    "0x0002c903000a1b2d dgx01 mlx5_1",
    '"S-0002c903000a1b30" "a05-ibleaf-01"',
    "H-2c903000a1b31 dgx02 mlx5_0",
    "R-2c903000a1b32\tgw-01",
    '  0x0002c903000a1b33   "spaced name"   ',
    '0x0002c903000a1b34 "quoted" trailing text',
    '0x0002c903000a1b35 "a "nested" quote"',
    '0x0002c903000a1b36 unquoted"',
    '0x0002c903000a1b37 "open only',
    "0x0002c903000a1b38 a\u00a0b\u2028c",
    '0x0002c903000a1b39" name after a quoted key',
    '"0x0002c903000a1b3a name',
    '0x0002c903000a1b3b "  "',
    '0x0002c903000a1b3c ""',
    '0x0002c903000a1b3d "',
    "0x0002c903000a1b3e",
    "0x0002c903000a1b3f\t",
    '0x0002c903000a1b40 mid"quote',
    "0x00002c903000a1b41 seventeen digits",
    "0X0002c903000a1b42 capital X",
    "S-12 S-13 two keys",
    "X-12 other letter",
    "0xnothex name",
    "0x12name no blank",
    "0x12\rcr inside\r",
    "# a comment",
    "   ",
    "0x13 a" + " " * 4000 + "b",
    "0x14 a" + " " * 4000,
    '0x15 "a' + " " * 4000 + '"' + " " * 40,
]

TOKENS = st.sampled_from(
    ["0x", "0X", "S-", "H-", "R-", "X-", '"', '"', " ", "  ", "\t", "\r", "\x0b", "\x1c", "\x85", "\u00a0",
     "\u2028", "a", "F", "0", "9", "1" * 16, "g", "#", "mlx5_0", "dgx01", "-"]
)  # fmt: skip


def test_ordinary_lines_are_read_as_before(tmp_path: Path) -> None:
    assert _now(tmp_path, ORDINARY) == _before(ORDINARY)
    names, warned = _now(tmp_path, ORDINARY)
    assert names[0x0002C903000A1B35] == 'a "nested" quote' and names[0x13] == "a" + " " * 4000 + "b"
    assert warned  # the refused ones are refused still


def _entry_before(line: str) -> tuple[int, str] | None:
    m = _LINE.match(line) or _ANY.match(line)
    name = (m.group(2) if m else "").strip()
    return None if m is None or not name else (int(m.group(1), 16), name)


@settings(max_examples=1000, deadline=None)
@given(st.lists(TOKENS, max_size=14).map("".join))
def test_generated_lines_are_read_as_before(line: str) -> None:
    assert _map_entry(line) == _entry_before(line)


def test_long_blank_runs_in_names_are_read_in_one_pass(tmp_path: Path) -> None:
    lines = ["0x1111 a" + " " * 4080 + "b"] * 600
    names, warned = _now(tmp_path, lines)
    assert names == {0x1111: "a" + " " * 4080 + "b"} and not warned
