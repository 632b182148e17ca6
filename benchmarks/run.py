"""Benchmarks: validate, plan and full generate at 1k, 16k and 100k GPUs, with peak memory.

Run: python benchmarks/run.py [--sizes 1024,16384,102400] [--skip-generate]
Each stage runs in a fresh subprocess so peak RSS (ru_maxrss of the child) belongs to that stage alone.
The floor is the time Python's csv module alone takes to write the same number of cable rows.

Targets (issue 18), checked on every `generate` row at 102,400 GPUs: at most TARGET_SECONDS, at most
TARGET_PEAK_MB, and within TARGET_FLOOR_RATIO of the csv floor. The load average is printed before and
after: on a shared machine the times are only comparable under similar load.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGET_GPUS = 102_400
TARGET_SECONDS = 8.0
TARGET_PEAK_MB = 1024.0
TARGET_FLOOR_RATIO = 8.0
sys.path.insert(0, str(HERE))

from synthetic import dragonfly_blueprint, fat_tree_blueprint  # noqa: E402

STAGE = r"""
import json, resource, sys, time, tempfile
from pathlib import Path
stage, path, out = sys.argv[1], sys.argv[2], sys.argv[3]
t0 = time.perf_counter()
from generator.pipeline import check, load_and_resolve
from generator.plan.build import build_plan
extra = {}
if stage == "validate":
    c = check(path)
    extra["findings"] = len(c.findings)
elif stage == "plan":
    loaded, cluster = load_and_resolve(path)
    plan = build_plan(cluster)
    extra["cables"] = len(plan.links)
else:
    from generator.build import generate
    c = check(path)
    if c.errors:  # measure only designs `blueprint generate` would accept
        raise SystemExit(f"invalid blueprint: {c.errors[0].rule} {c.errors[0].message}")
    r = generate(c, Path(out))
    extra["files"] = len(r.files)
    extra["outputs"] = r.outputs
secs = time.perf_counter() - t0
peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
# generate forks helpers on large plans (generator/forked.py): the largest one's peak, reported beside
child_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps({"seconds": secs, "peak_mb": peak_mb, "child_peak_mb": child_mb, **extra}))
"""


def run_stage(stage: str, blueprint: Path, out: Path) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", STAGE, stage, str(blueprint), str(out)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if proc.returncode != 0:
        return {"error": (proc.stderr or proc.stdout).strip().splitlines()[-1:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def csv_floor(rows: int) -> float:
    t0 = time.perf_counter()
    buf = io.StringIO()
    w = csv.writer(buf)
    for i in range(rows):
        w.writerow(
            [
                f"C-NL-{i:06d}",
                "dc1-R01-05-U12-dgx00001-mlx5_0/1",
                "dc1-R01-09-U3-c-leaf-su1-r0-P01/1",
                "r01-05",
                12,
                "dgx00001",
                "mlx5_0/1",
                "r01-09",
                3,
                "c-leaf-su1-r0",
                "1",
                "compute",
                "mmf",
                7.0,
                "MFP7E10-N0xx",
            ]
        )
    return time.perf_counter() - t0


def _verdict(seconds: float, peak_mb: float, floor: float) -> str:
    checks = (
        (seconds <= TARGET_SECONDS, f"<= {TARGET_SECONDS:g} s"),
        (peak_mb <= TARGET_PEAK_MB, f"<= {TARGET_PEAK_MB:g} MB (largest process)"),
        (seconds <= TARGET_FLOOR_RATIO * floor, f"<= {TARGET_FLOOR_RATIO:g}x floor"),
    )
    return "targets " + ", ".join(f"{what} {'ok' if ok else 'MISSED'}" for ok, what in checks)


def _load() -> str:
    one, five, _fifteen = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min)"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1024,16384,102400")
    ap.add_argument("--kinds", default="fat-tree,dragonfly")
    ap.add_argument("--skip-generate", action="store_true")
    args = ap.parse_args()
    print(
        f"machine: {platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}; {_load()}"
    )
    print(f"{'topology':10} {'GPUs':>7} {'stage':9} {'seconds':>8} {'peak MB':>8}  notes")
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.kinds.split(","):
            for gpus in [int(s) for s in args.sizes.split(",")]:
                text = fat_tree_blueprint(gpus) if kind == "fat-tree" else dragonfly_blueprint(gpus)
                path = Path(tmp) / f"{kind}-{gpus}.yaml"
                path.write_text(text)
                cables = None
                for stage in ("validate", "plan", "generate"):
                    if stage == "generate" and args.skip_generate:
                        continue
                    r = run_stage(stage, path, Path(tmp) / f"build-{kind}-{gpus}")
                    if "error" in r:
                        print(f"{kind:10} {gpus:>7} {stage:9} {'-':>8} {'-':>8}  error: {r['error']}")
                        continue
                    note = ""
                    if stage == "plan":
                        cables = r["cables"]
                        note = f"{cables} cables"
                    if stage == "generate" and cables:
                        floor = csv_floor(cables)
                        note = f"{r['files']} files; csv floor {floor:.2f} s ({r['seconds'] / floor:.1f}x)"
                        if r["child_peak_mb"]:
                            note += f"; forked helper peak {r['child_peak_mb']:.0f} MB"
                        if gpus == TARGET_GPUS:
                            note += "; " + _verdict(
                                r["seconds"], max(r["peak_mb"], r["child_peak_mb"]), floor
                            )
                    print(
                        f"{kind:10} {gpus:>7} {stage:9} {r['seconds']:8.2f} {r['peak_mb']:8.0f}  {note}",
                        flush=True,
                    )
    print(f"done; {_load()}")
    _ = resource  # imported for parity with the stage script


if __name__ == "__main__":
    main()
