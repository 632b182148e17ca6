"""A result row cut before its sixth column: nccl-tests writes a row's size, count, type, redop and root first
(src/util.cu ``writeBenchmarkLinePreamble``), then measures the size and writes its bodies, so a log that
stops there (the job killed while the collective ran) or is cut mid-line ends in such a fragment. It was
skipped as no row, and the run was compared on the sizes before it with no word; it is refused as a truncated
result row at its line wherever it stands, as a row cut after its root column already is
(test_nccl_truncated_row.py). A number on a line of its own outside a table (a script's ``echo $?``) is still
no row."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli
from nccl_text import nccl_text

from generator.foreign import ForeignInputError
from generator.perf.nccl_results import read_runs

ROWS = [(1 << 30, 150.0), (2 << 30, 150.0)]
FRAGMENT = "   1048576        262144     float     sum"  # the form the finding reported


def _lines() -> list[str]:
    return nccl_text(["dgx001"], 8, ROWS).split("\n")


def _row_at(lines: list[str], size: int) -> int:
    return next(i for i, line in enumerate(lines) if line.split()[:1] == [str(size)])


@pytest.mark.parametrize("kept", [1, 2, 3, 4, 5])
def test_a_last_row_cut_before_its_sixth_column_is_refused_at_its_line(tmp_path: Path, kept: int) -> None:
    lines = _lines()
    last = _row_at(lines, 2 << 30)
    lines[last] = " ".join(lines[last].split()[:kept])  # the log stops inside the preamble
    path = tmp_path / "all_reduce_perf.txt"
    path.write_text("\n".join(lines[: last + 1]))  # no newline after it: cut mid-line
    with pytest.raises(ForeignInputError, match=rf"^{path}:{last + 1}: truncated result row: {kept} columns"):
        read_runs(path)


def test_a_row_cut_in_the_middle_of_a_table_is_refused_at_its_line(tmp_path: Path) -> None:
    lines = _lines()
    first = _row_at(lines, 1 << 30)
    lines.insert(first + 1, FRAGMENT)  # whole rows before and after it
    path = tmp_path / "all_reduce_perf.txt"
    path.write_text("\n".join(lines))
    with pytest.raises(ForeignInputError, match=rf"^{path}:{first + 2}: truncated result row: 4 columns"):
        read_runs(path)


def test_a_cut_row_without_a_column_header_is_refused_once_rows_were_read(tmp_path: Path) -> None:
    lines = [line for line in _lines() if "size" not in line or "count" not in line]
    last = _row_at(lines, 2 << 30)
    path = tmp_path / "all_reduce_perf.txt"
    path.write_text("\n".join([*lines[: last + 1], FRAGMENT]))
    with pytest.raises(ForeignInputError, match=rf"^{path}:{last + 2}: truncated result row: 4 columns"):
        read_runs(path)


def test_numbers_outside_a_table_are_no_rows(tmp_path: Path) -> None:
    lines = _lines()
    # before the column header, after the footer, and a launcher's line that starts with a count
    lines.insert(0, "0")
    lines.insert(_row_at(lines, 1 << 30), "1 more process has sent help message help-mpi-btl-openib.txt")
    lines += ["0", "1048576 262144"]
    path = tmp_path / "all_reduce_perf.txt"
    path.write_text("\n".join(lines))
    (run,) = read_runs(path)
    assert [r.size_bytes for r in run.rows] == [1 << 30, 2 << 30]


def test_acceptance_report_names_the_line_and_exits_2(tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    path = results / "all_reduce_perf.txt"
    lines = _lines()
    last = _row_at(lines, 2 << 30)
    path.write_text("\n".join([*lines[: last + 1], FRAGMENT]))  # the job killed while measuring 1 MiB
    line = last + 2
    code, _, err = run_cli(
        "acceptance-report", str(EXAMPLES / "hdr-fat-tree-a100.yaml"), "--results", str(results)
    )
    assert code == 2 and "Traceback" not in err
    # Rich shortens a line wider than the terminal in its middle: the place and the end are what it keeps
    assert err.startswith(f"{path}:{line}: ") and err.rstrip().endswith("(a run stopped writing it?)")
