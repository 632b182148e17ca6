"""benchmarks/hostile.py's foreign cases expect the exit the tool should give. A valid nccl-tests run followed
by blank lines is a valid log (blank lines are skipped, generator.perf.nccl_results._lines): the benchmark
wanted a refusal (1 or 2) and called the tool's exit 0 a miss. Every other case is still a refusal that must
name the file."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from conftest import EXAMPLES, run_cli

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _hostile() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hostile_benchmark", BENCHMARKS / "hostile.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _result(code: int, said: str = "") -> dict[str, float | int | str]:
    return {"code": code, "seconds": 1.0, "peak_mb": 100.0, "said": said}


def test_a_run_then_blank_lines_is_read_as_the_benchmark_expects(tmp_path: Path) -> None:
    hostile = _hostile()
    results = tmp_path / "r7"
    results.mkdir()
    # the benchmark's file with 64 Ki blank lines instead of 60 MiB (its time is what the benchmark measures)
    (results / "all_reduce.txt").write_text(hostile._results_text("1.0") + "\n" * (1 << 16))
    code, _, err = run_cli("acceptance-report", str(EXAMPLES / hostile.IB_EXAMPLE), "--results", str(results))
    assert "Traceback" not in err
    assert code in hostile.expected_exits(hostile.BLANK_TAIL) == (0,)
    assert not hostile.missed(hostile.BLANK_TAIL, _result(code, err), tmp_path.name, 30.0, 1024.0)


def test_every_other_case_is_still_a_located_refusal() -> None:
    hostile = _hostile()
    name = "nccl-tests text: busbw nan"
    assert hostile.expected_exits(name) == (1, 2)
    assert hostile.missed(name, _result(0), "tmpabc", 30.0, 1024.0)
    assert hostile.missed(name, _result(2, "somewhere else: refused"), "tmpabc", 30.0, 1024.0)
    assert not hostile.missed(
        name, _result(2, "/tmp/tmpabc/r1/all_reduce.txt:4: refused"), "tmpabc", 30.0, 1024.0
    )
    # the valid case misses on any other exit, and on time
    assert hostile.missed(hostile.BLANK_TAIL, _result(2, "/tmp/tmpabc: x"), "tmpabc", 30.0, 1024.0)
    slow = {**_result(0), "seconds": 31.0}
    assert hostile.missed(hostile.BLANK_TAIL, slow, "tmpabc", 30.0, 1024.0)
