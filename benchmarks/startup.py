"""How fast the CLI answers: `--version`, `--help` and `validate` of every shipped example, in CPU time.

Run: python benchmarks/startup.py [--repeat 7] [--root DIR] [--cold-cache]

Each case runs `python -m generator.cli ...` in a fresh process; its CPU time (user + system, from the
children's rusage) is the median of --repeat runs. The floor, `python -c pass` with the same interpreter,
is measured in the same run, interleaved with the cases so that a busy machine slows both alike, and the
start-up cases are shown as a ratio to it. Targets (issue 32): `--version` and `--help` within 3x the
floor; `validate` of any shipped example within 0.35 s of CPU. Exit 1 when a target is missed. `explain` (from
its cached index, generator/rule_index.py) and `completion bash` are shown beside them, with no target.

--root measures another source tree (e.g. a checkout of an older commit) with this interpreter, for
before/after figures. The catalogue's parse cache and the snapshots of the validated catalogue and the
models' field docs ($XDG_CACHE_HOME/cluster-blueprint, blueprints/snapshot.py) are warm after the first
run, as they are for a user; --cold-cache gives every run an empty cache directory instead.

Compiled bytecode is warm too, as after `pip install` (which writes it): the runs share a private
PYTHONPYCACHEPREFIX filled by the unmeasured first run, whatever PYTHONDONTWRITEBYTECODE says
(set, every run would compile every module again: ~0.15 s of `validate`'s CPU on this machine).
"""

from __future__ import annotations

import argparse
import atexit
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
START_RATIO = 3.0  # --version, --help: at most 3x `python -c pass` (issue 32)
VALIDATE_CPU_S = 0.35  # validate of a shipped example: at most 0.35 s CPU (issue 32)
REPORTED_ONLY = ("explain NET017", "completion bash")


def child_cpu(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """CPU seconds (user + system) of one run of ``argv``; its output is discarded."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):  # 1: validate found errors, still a measured run
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr.decode()[-500:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def environment(root: Path, cold_cache: bool) -> Callable[[], dict[str, str]]:
    base = dict(os.environ, PYTHONPATH=str(root), NO_COLOR="1")
    base.pop("PYTHONDONTWRITEBYTECODE", None)
    base["PYTHONPYCACHEPREFIX"] = pycache = tempfile.mkdtemp(prefix="blueprint-pycache-")
    atexit.register(shutil.rmtree, pycache, ignore_errors=True)

    def make() -> dict[str, str]:
        if not cold_cache:
            return base
        return dict(base, XDG_CACHE_HOME=tempfile.mkdtemp(prefix="blueprint-cold-cache-"))

    return make


def measure(
    cases: dict[str, list[str]], repeat: int, root: Path, cold_cache: bool
) -> tuple[float, dict[str, float]]:
    """The floor's and each case's median CPU seconds, runs interleaved with the floor's."""
    env = environment(root, cold_cache)
    floor: list[float] = []
    samples: dict[str, list[float]] = {name: [] for name in cases}
    child_cpu([sys.executable, "-c", "pass"], env(), root)
    for argv in cases.values():  # one unmeasured run each: parse cache and bytecode as a user has them
        child_cpu([sys.executable, *argv], env(), root)
    for _ in range(repeat):
        for name, argv in cases.items():
            floor.append(child_cpu([sys.executable, "-c", "pass"], env(), root))
            samples[name].append(child_cpu([sys.executable, *argv], env(), root))
    return statistics.median(floor), {k: statistics.median(v) for k, v in samples.items()}


def build_cases(root: Path) -> dict[str, list[str]]:
    cases = {"--version": ["-m", "generator.cli", "--version"], "--help": ["-m", "generator.cli", "--help"]}
    # the other commands the issue keeps light (no model, catalogue or Rich): shown, no target of their own
    cases["explain NET017"] = ["-m", "generator.cli", "explain", "NET017"]
    cases["completion bash"] = ["-m", "generator.cli", "completion", "bash"]
    for example in sorted((root / "examples").glob("*.yaml")):
        cases[f"validate {example.name}"] = ["-m", "generator.cli", "validate", "-q", str(example)]
    return cases


def verdicts(floor: float, results: dict[str, float]) -> list[tuple[str, float, float, str, bool]]:
    """(case, CPU s, ratio to the floor, target, met) per case."""
    rows = []
    for name, cpu in results.items():
        ratio = cpu / floor if floor > 0 else float("inf")
        if name in REPORTED_ONLY:
            rows.append((name, cpu, ratio, "(shown)", True))
        elif name.startswith("validate"):
            rows.append((name, cpu, ratio, f"<= {VALIDATE_CPU_S:g} s", cpu <= VALIDATE_CPU_S))
        else:
            rows.append((name, cpu, ratio, f"<= {START_RATIO:g}x floor", ratio <= START_RATIO))
    return rows


def print_table(floor: float, rows: list[tuple[str, float, float, str, bool]]) -> None:
    width = max(len(r[0]) for r in rows)
    print(f"floor `python -c pass`: {floor * 1000:.1f} ms CPU")
    print(f"{'case':<{width}}  {'CPU ms':>8}  {'x floor':>7}  {'target':<14}  met")
    for name, cpu, ratio, target, met in rows:
        print(f"{name:<{width}}  {cpu * 1000:8.1f}  {ratio:7.1f}  {target:<14}  {'yes' if met else 'NO'}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7, help="runs per case; the median is reported")
    ap.add_argument("--root", type=Path, default=ROOT, help="source tree to measure (default: this one)")
    ap.add_argument("--cold-cache", action="store_true", help="an empty parse cache for every run")
    ap.add_argument("--only", help="run only the cases whose name contains this text")
    args = ap.parse_args()
    cases = build_cases(args.root.resolve())
    if args.only:
        cases = {k: v for k, v in cases.items() if args.only in k}
    floor, results = measure(cases, max(1, args.repeat), args.root.resolve(), args.cold_cache)
    rows = verdicts(floor, results)
    print_table(floor, rows)
    return 0 if all(r[4] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
