"""`# Avg bus bandwidth : -nan`: nccl-tests prints the average with "%g" (src/util.cu), and glibc's printf
writes a NaN with its sign bit as `-nan` (x86: 0.0/0.0 has it set). It says there is no average, as `nan` does
and as the -J reader takes jsonDouble's "nan"; a value that is a number and no bandwidth is still refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from nccl_text import nccl_text

from generator.foreign import ForeignInputError
from generator.perf.nccl_results import read_runs

ROWS = [(1 << 30, 150.0), (2 << 30, 150.0)]


def _with_average(tmp_path: Path, value: str) -> Path:
    text = nccl_text(["gpu001"], 8, ROWS)
    lines = [f"# Avg bus bandwidth    : {value}" if "Avg bus" in line else line for line in text.split("\n")]
    path = tmp_path / f"all_reduce_perf-{len(list(tmp_path.iterdir()))}.txt"
    path.write_text("\n".join(lines))
    return path


@pytest.mark.parametrize("value", ["nan", "-nan", "+nan", "-NAN"])
def test_a_nan_average_is_no_average(tmp_path: Path, value: str) -> None:
    (run,) = read_runs(_with_average(tmp_path, value))
    assert run.avg_busbw is None and len(run.rows) == 2


def test_a_number_that_is_no_bandwidth_is_still_refused(tmp_path: Path) -> None:
    (run,) = read_runs(_with_average(tmp_path, "150.0"))
    assert run.avg_busbw == 150.0
    with pytest.raises(ForeignInputError, match=r":\d+: average bus bandwidth `-1.0`"):
        read_runs(_with_average(tmp_path, "-1.0"))
    with pytest.raises(ForeignInputError, match=r":\d+: average bus bandwidth `-nanx`"):
        read_runs(_with_average(tmp_path, "-nanx"))
