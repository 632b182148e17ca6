"""A result row cut short (a job killed while nccl-tests wrote it) after its root column: where the column
header gives the layout, the row ends before the out-of-place busbw and #wrong and is refused as a truncated
result row at its line, not with the root column's -1 read as a bandwidth (`busbw -1.0 is not a measurement`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from nccl_text import nccl_text

from generator.foreign import ForeignInputError
from generator.perf.nccl_results import read_runs

ROWS = [(1 << 30, 150.0), (2 << 30, 150.0)]


@pytest.mark.parametrize("kept", [6, 7, 8])
def test_a_row_cut_after_its_root_column_is_refused_as_truncated(tmp_path: Path, kept: int) -> None:
    lines = nccl_text(["gpu001"], 8, ROWS).split("\n")
    last = max(i for i, line in enumerate(lines) if line.strip().startswith(str(2 << 30)))
    lines[last] = " ".join(lines[last].split()[:kept])  # size count type redop root, then what was written
    path = tmp_path / "all_reduce_perf.txt"
    path.write_text("\n".join(lines[: last + 1]))
    with pytest.raises(ForeignInputError, match=rf"^{path}:{last + 1}: truncated result row: {kept} columns"):
        read_runs(path)


def test_a_whole_row_is_read(tmp_path: Path) -> None:
    path = tmp_path / "all_reduce_perf.txt"
    path.write_text(nccl_text(["gpu001"], 8, ROWS))
    (run,) = read_runs(path)
    assert [r.busbw_gbytes for r in run.rows] == [150.0, 150.0]
