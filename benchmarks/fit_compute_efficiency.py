"""Fit the training model's compute efficiency to Llama 3's measured steps
(tests/perf/data/llama3_table4.yaml).

    python benchmarks/fit_compute_efficiency.py

Llama 3's 38-43 % MFU is end to end: its step already holds the TP all-reduces, pipeline sends, bubble and
exposed DP sync that the training model adds to its compute term. So the compute term runs at its own rate,
the one at which the model's whole step equals the measured one. For each virtual-stage count (Table 4 gives
none) this prints, per modelled row, the efficiency that reproduces its TFLOPS per GPU; the rows agree at
one count only, and that count and their mean are what perf.yaml's compute_efficiency records.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ruamel.yaml import YAML  # noqa: E402

from blueprints.catalog.perf import perf_data  # noqa: E402
from blueprints.models import Blueprint  # noqa: E402
from generator.perf.system import System, system_for  # noqa: E402
from generator.perf.training import StepEstimate, training_step  # noqa: E402
from generator.plan.build import build_plan  # noqa: E402
from generator.resolve import resolve  # noqa: E402

DATA = ROOT / "tests" / "perf" / "data" / "llama3_table4.yaml"
MAX_CHUNKS = 8  # 126 layers (+ embedding and loss) over 16 ranks: 8 a rank, at most 8 chunks of one layer


def reference() -> dict[str, Any]:
    data: dict[str, Any] = YAML(typ="safe", pure=True).load(DATA.read_text(encoding="utf-8"))
    return data


def modelled_rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows the model can run: no context parallelism."""
    return [r for r in data["rows"] if r["context"] == 1]


Row = dict[str, Any]


def row_step(data: Row, row: Row, chunks: int, systems: dict[int, System]) -> StepEstimate:
    """The model's step for one Table 4 row on the reference cluster of its size, ``chunks`` per rank."""
    nodes = row["gpus"] // 8
    if nodes not in systems:
        bp = dict(data["blueprint"])
        bp["pools"] = [{**bp["pools"][0], "count": nodes}]
        cluster = resolve(Blueprint.model_validate(bp))
        systems[nodes] = system_for(cluster, build_plan(cluster))
    system = systems[nodes]
    assert system.gpus == row["gpus"]
    wl = Blueprint.model_validate(data["blueprint"]).workload
    assert wl is not None
    par = wl.parallelism.model_copy(
        update={
            "tensor": row["tensor"],
            "pipeline": row["pipeline"],
            "data": row["data"],
            "virtual_stages": chunks,
        }
    )
    return training_step(wl.model_copy(update={"parallelism": par}), system)


def measured_step_s(data: dict[str, Any], row: dict[str, Any]) -> float:
    return 6 * data["params"] * row["batch_tokens"] / (row["gpus"] * row["tflops_per_gpu"] * 1e12)


def _set_efficiency(value: float) -> None:
    training = perf_data().training
    object.__setattr__(
        training, "compute_efficiency", training.compute_efficiency.model_copy(update={"value": value})
    )


def efficiency_for(data: Row, row: Row, chunks: int, systems: dict[int, System]) -> float:
    """The compute efficiency at which the model's step equals the measured one (bisection: the step falls as
    the efficiency rises)."""
    target = measured_step_s(data, row)
    lo, hi = 0.05, 1.0
    for _ in range(40):
        mid = (lo + hi) / 2
        _set_efficiency(mid)
        if row_step(data, row, chunks, systems).step_s > target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def main() -> int:
    data = reference()
    rows = modelled_rows(data)
    systems: dict[int, System] = {}
    shipped = perf_data().training.compute_efficiency.value
    best: tuple[float, int, list[float]] | None = None
    for chunks in range(1, MAX_CHUNKS + 1):
        fits = [efficiency_for(data, row, chunks, systems) for row in rows]
        spread = max(fits) - min(fits)
        print(f"virtual stages {chunks}: " + ", ".join(f"{f:.4f}" for f in fits) + f"  (spread {spread:.4f})")
        if best is None or spread < best[0]:
            best = (spread, chunks, fits)
    _set_efficiency(shipped)
    assert best is not None
    _, chunks, fits = best
    print(f"rows agree best at {chunks} virtual stages: compute_efficiency {sum(fits) / len(fits):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
