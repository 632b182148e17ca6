"""How fast `generate` could be on this machine: CPU per phase and per output, and the best schedule's time.

Run: python benchmarks/bound.py [--kind fat-tree|dragonfly] [--gpus 102400] [--cores 2]

benchmarks/run.py measures wall time; this explains it. `check` and `generate` run in one process pinned
to one CPU, so every output is made here and its CPU time is its own (generator/forked.py forks helpers
only when two CPUs are usable). The cabling plan is then split into its cable rows and each of its
formats, rendered again in memory with the garbage collector paused as generate pauses it.

From those figures it prints a lower bound for ``--cores`` cores, assuming perfect scheduling and free
forks: everything needs the plan, so import, load, resolve and the plan build come first, one after the
other; the rules, the outputs and the cabling formats share the cores (CSV, workbook and NetBox after the
cable rows they are written from); the manifest (a hash of every file) and the atomic rename come last.
A wall time below the bound needs less CPU, not better scheduling. The bound is printed again without
each output (and its share of the manifest), to show what leaving one out could buy; and the whole run's
CPU divided by the cores, which not even a plan build split over the cores could beat. Not measured:
Python's own start-up and the command line's imports, which would only raise the bound.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import TARGET_FLOOR_RATIO, TARGET_SECONDS, csv_floor  # noqa: E402
from synthetic import dragonfly_blueprint, fat_tree_blueprint  # noqa: E402

if TYPE_CHECKING:
    from generator.emit.cabling import CableRow
    from generator.pipeline import Checked
    from generator.plan.model import Plan
    from generator.resolve import ResolvedCluster

CABLING = "cabling"
ROWLESS_FORMATS = ("ibnetdiscover", "lldp")  # made from the plan's links, not from the cable rows


class Piece(NamedTuple):
    """A unit of work that runs on one core: its name, CPU seconds and the output it belongs to."""

    name: str
    cpu: float
    output: str = ""  # "" for the phases every output needs


@dataclass
class Profile:
    """CPU seconds of one `generate` run, by phase and by output; cabling split into rows and formats."""

    serial: list[Piece] = field(default_factory=list)  # before anything can share the cores
    outputs: list[Piece] = field(default_factory=list)  # the rules and every output but the cabling plan
    cable_rows: Piece = field(default_factory=lambda: Piece("cable rows", 0.0, CABLING))
    row_formats: list[Piece] = field(default_factory=list)  # cabling formats written from the rows
    rowless_formats: list[Piece] = field(default_factory=list)
    tail: list[Piece] = field(default_factory=list)  # after every file exists
    cables: int = 0

    def shared(self) -> list[Piece]:
        return [*self.outputs, self.cable_rows, *self.row_formats, *self.rowless_formats]

    def all_pieces(self) -> list[Piece]:
        return [*self.serial, *self.shared(), *self.tail]


@contextmanager
def cpu_of(pieces: list[Piece], name: str, output: str = "") -> Iterator[None]:
    t0 = time.process_time()
    yield
    pieces.append(Piece(name, time.process_time() - t0, output))


def pin_to_one_cpu() -> None:
    first = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {first})
    from generator.forked import can_fork

    if can_fork():  # a forked helper's CPU would be missing from every figure below
        raise SystemExit("still more than one usable CPU; cannot measure")


def profile_generate(blueprint: Path, out: Path) -> Profile:
    """`check` then `generate` phase by phase, the same calls generator.pipeline.check makes."""
    prof = Profile()
    with cpu_of(prof.serial, "import"):
        import generator.build  # noqa: F401  (what generate needs, imported here to be measured)
        from generator.pipeline import Checked, load_and_resolve
        from generator.rules.base import RuleContext
        from generator.rules.registry import run_rules
    with cpu_of(prof.serial, "load + resolve"):
        loaded, cluster = load_and_resolve(blueprint)
    ctx = RuleContext(cluster)
    with cpu_of(prof.serial, "plan"):
        plan = ctx.plan
    assert plan is not None, "the plan did not build"
    prof.cables = len(plan.links)
    with cpu_of(prof.outputs, "rules", "rules"):
        findings = run_rules(ctx)
    checked = Checked(loaded, cluster, [loaded.locate(f) for f in findings], ctx)
    marks = _generate_marked(checked, out)
    prof.serial.append(Piece("generate: set-up", marks.first - marks.start))
    spans = _spans(marks.outputs, marks.outputs_done)
    prof.outputs.extend(p for p in spans if p.name != CABLING)
    _split_cabling(prof, next(p.cpu for p in spans if p.name == CABLING), cluster, plan)
    _split_tail(prof, marks.end - marks.outputs_done, out)
    return prof


class _Marks(NamedTuple):
    start: float
    outputs: list[tuple[str, float]]  # (output, CPU clock at its start)
    outputs_done: float
    end: float

    @property
    def first(self) -> float:
        return self.outputs[0][1]


def _generate_marked(checked: Checked, out: Path) -> _Marks:
    """generate() with the CPU clock read at each output's start (its progress callback) and when the
    last output is written: _Build.write_outputs is wrapped for that one reading, since what follows it
    (manifest, merge of stack files, atomic rename) is not an output."""
    from generator.build import _Build, generate

    original = _Build.write_outputs
    marks: list[tuple[str, float]] = []
    done: list[float] = []

    def write_outputs(self: _Build, tmp: Path) -> None:
        original(self, tmp)
        done.append(time.process_time())

    _Build.write_outputs = write_outputs  # type: ignore[method-assign]
    try:
        start = time.process_time()
        generate(checked, out, progress=lambda name: marks.append((name, time.process_time())))
        end = time.process_time()
    finally:
        _Build.write_outputs = original  # type: ignore[method-assign]
    if not marks or not done:
        raise SystemExit("generate reported no outputs")
    return _Marks(start, marks, done[0], end)


def _spans(marks: list[tuple[str, float]], end: float) -> list[Piece]:
    """Progress marks (output name, CPU clock at its start) as the CPU each output took."""
    stops = [t for _, t in marks[1:]] + [end]
    return [Piece(name, stop - start, name) for (name, start), stop in zip(marks, stops, strict=True)]


def _split_cabling(prof: Profile, measured: float, cluster: ResolvedCluster, plan: Plan) -> None:
    """The cabling plan's CPU in generate, split in the proportions of its cable rows and each format
    rendered again in memory (writing files and rendering in memory cost nearly the same)."""
    from generator.emit.cabling import FORMATS, cable_rows, render_format
    from generator.gcpause import gc_paused

    with gc_paused():
        t0 = time.process_time()
        rows: list[CableRow] = cable_rows(cluster, plan)
        rows_cpu = time.process_time() - t0
        parts: list[Piece] = []
        for fmt in FORMATS:
            with cpu_of(parts, f"cabling {fmt}", CABLING):
                render_format(cluster, plan, fmt, rows)
    scale = measured / (rows_cpu + sum(p.cpu for p in parts))
    prof.cable_rows = Piece("cable rows", rows_cpu * scale, CABLING)
    for fmt, p in zip(FORMATS, parts, strict=True):
        scaled = Piece(p.name, p.cpu * scale, CABLING)
        (prof.rowless_formats if fmt in ROWLESS_FORMATS else prof.row_formats).append(scaled)


def _split_tail(prof: Profile, measured: float, out: Path) -> None:
    """What follows the outputs: each output's share of the manifest's hashes (hashed again here, folder
    by folder) and the rest (manifest file, atomic rename)."""
    from generator.build import sha256_file

    shares: list[Piece] = []
    for folder in sorted(p for p in out.iterdir() if p.is_dir()):
        with cpu_of(shares, f"manifest: {folder.name}", folder.name):
            for path in sorted(folder.rglob("*")):
                if path.is_file():
                    sha256_file(path)
    rest = max(0.0, measured - sum(p.cpu for p in shares))
    prof.tail.extend([*shares, Piece("generate: finish", rest)])


def lower_bound(prof: Profile, cores: int, drop: Callable[[Piece], bool] = lambda p: False) -> float:
    """Seconds no schedule on ``cores`` cores can beat: the serial prefix; then the larger of the shared
    work spread evenly and the longest chain (cable rows then the largest format written from them, or
    any one piece); then the tail."""
    serial = sum(p.cpu for p in (*prof.serial, *prof.tail) if not drop(p))
    row_formats = [p.cpu for p in prof.row_formats if not drop(p)]
    rows = prof.cable_rows.cpu if row_formats and not drop(prof.cable_rows) else 0.0
    others = [p.cpu for p in (*prof.outputs, *prof.rowless_formats) if not drop(p)]
    chain = max([rows + max(row_formats, default=0.0), *others])
    return serial + max((rows + sum(row_formats) + sum(others)) / cores, chain)


def _print_pieces(title: str, pieces: list[Piece]) -> None:
    print(f"  {title}:")
    for p in pieces:
        print(f"    {p.name:30} {p.cpu:6.2f} s")


def _of_output(output: str) -> Callable[[Piece], bool]:
    return lambda q: q.output == output


def _named(name: str) -> Callable[[Piece], bool]:
    return lambda q: q.name == name


def report(prof: Profile, cores: int) -> None:
    floor = csv_floor(prof.cables)
    total = sum(p.cpu for p in prof.all_pieces())
    print(f"{prof.cables} cables; CPU of the whole run {total:.2f} s (one process, one CPU)")
    _print_pieces("first, one after the other", prof.serial)
    _print_pieces("then sharing the cores (CSV, xlsx, NetBox after the cable rows)", prof.shared())
    _print_pieces("last", prof.tail)
    best = lower_bound(prof, cores)
    print(f"lower bound on {cores} cores: {best:.2f} s; target {TARGET_SECONDS:g} s; ", end="")
    print(f"csv floor {floor:.2f} s, so {TARGET_FLOOR_RATIO:g}x floor = {TARGET_FLOOR_RATIO * floor:.2f} s")
    print(f"every part split perfectly over {cores} cores, the plan included: {total / cores:.2f} s")
    print("the bound without one piece (what leaving it out of `generate` could buy):")
    for p in prof.outputs:
        if p.cpu >= 0.01:
            print(f"    without {p.name:30} {lower_bound(prof, cores, _of_output(p.output)):6.2f} s")
    for p in (*prof.row_formats, *prof.rowless_formats):
        if p.cpu >= 0.01:
            print(f"    without {p.name:30} {lower_bound(prof, cores, _named(p.name)):6.2f} s")
    print(
        f"    without the whole cabling plan         {lower_bound(prof, cores, _of_output(CABLING)):6.2f} s"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kind", choices=("fat-tree", "dragonfly"), default="fat-tree")
    ap.add_argument("--gpus", type=int, default=102_400)
    ap.add_argument("--cores", type=int, default=2)
    args = ap.parse_args()
    pin_to_one_cpu()
    text = fat_tree_blueprint(args.gpus) if args.kind == "fat-tree" else dragonfly_blueprint(args.gpus)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{args.kind}-{args.gpus}.yaml"
        path.write_text(text)
        prof = profile_generate(path, Path(tmp) / "build")
    print(f"{args.kind}, {args.gpus} GPUs")
    report(prof, args.cores)


if __name__ == "__main__":
    main()
