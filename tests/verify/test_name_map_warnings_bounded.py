"""A node-name map of millions of unreadable lines keeps a bounded list of warnings: each line was one
warning string (a 64 MiB map of one-character lines: ~33 million strings, several GB), where the dump
reader already keeps its first warnings and counts the rest."""

from __future__ import annotations

from pathlib import Path

from generator.verify.identify import read_node_name_map
from generator.verify.model import MAX_KEPT_WARNINGS


def test_unreadable_map_lines_are_counted_past_the_kept_warnings(tmp_path: Path) -> None:
    bad = MAX_KEPT_WARNINGS + 5_000
    path = tmp_path / "map.txt"
    path.write_text('0x0002c90300000001 "c-leaf-001"\n' + "x\n" * bad)
    read = read_node_name_map(path)
    assert len(read.warnings) == MAX_KEPT_WARNINGS + 1
    assert read.warnings[0].startswith(f"{path}:2: not a node-name map line")
    assert read.warnings[-1] == f"{path}: 5,000 more lines that are no node-name map line, ignored"
    assert read.names == {0x0002C90300000001: "c-leaf-001"}  # the readable line is still read


def test_a_few_unreadable_lines_are_each_named(tmp_path: Path) -> None:
    path = tmp_path / "map.txt"
    path.write_text("x\ny\n")
    assert [w.split(": ", 1)[0] for w in read_node_name_map(path).warnings] == [f"{path}:1", f"{path}:2"]
