"""How fast `generate` could be on this machine: CPU per phase and per output, and the best schedule's time.

Run: python benchmarks/bound.py [--kind fat-tree|dragonfly] [--gpus 102400] [--cores 2]

benchmarks/run.py measures wall time; this explains it. The whole of `blueprint generate` (check, then
generate) runs in one process pinned to one CPU, so every output is made here and its CPU time is its own
(generator/forked.py forks helpers only when two CPUs are usable). The cabling plan is then split into
its cable rows and each of its formats, rendered again in memory.

From those figures it prints a lower bound for ``--cores`` cores, assuming perfect scheduling and free
forks: everything needs the plan, so import, load, resolve and the plan build come first, one after the
other; the rules, the outputs and the cabling formats (after the cable rows) can share the cores; the
manifest hashes the finished files last. A wall time below the bound needs less CPU, not better
scheduling. The bound is printed again without each output, to show what leaving one out could buy;
and the whole run's CPU divided by the cores, which not even a plan build split over the cores could beat.
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

CABLING = "cabling"


class Piece(NamedTuple):
    """A unit of work that runs on one core: its name and CPU seconds."""

    name: str
    cpu: float


@dataclass
class Profile:
    """CPU seconds of one `generate` run, by phase and by output; cabling split into rows and formats."""

    serial: list[Piece] = field(default_factory=list)  # before anything can share the cores
    outputs: list[Piece] = field(default_factory=list)  # the rules and every output but the cabling plan
    cable_rows: float = 0.0
    formats: list[Piece] = field(default_factory=list)
    tail: list[Piece] = field(default_factory=list)  # after every file exists
    cables: int = 0

    def all_pieces(self) -> list[Piece]:
        return [*self.serial, *self.outputs, Piece("cable rows", self.cable_rows), *self.formats, *self.tail]


@contextmanager
def cpu_of(pieces: list[Piece], name: str) -> Iterator[None]:
    t0 = time.process_time()
    yield
    pieces.append(Piece(name, time.process_time() - t0))


def pin_to_one_cpu() -> None:
    first = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {first})


def profile_generate(blueprint: Path, out: Path) -> Profile:
    """`check` then `generate` phase by phase, the same calls generator.pipeline.check makes."""
    prof = Profile()
    with cpu_of(prof.serial, "import"):
        from generator.build import generate, sha256_file
        from generator.emit.cabling import FORMATS, cable_rows, render_format
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
    with cpu_of(prof.outputs, "rules"):
        findings = run_rules(ctx)
    checked = Checked(loaded, cluster, [loaded.locate(f) for f in findings], ctx)
    marks: list[tuple[str, float]] = []
    t0 = time.process_time()
    generate(checked, out, progress=lambda name: marks.append((name, time.process_time())))
    spans = _spans(marks, time.process_time())
    prof.serial.append(Piece("generate: set-up", marks[0][1] - t0))
    # The manifest (a hash of every file) is made after the last output, inside its span: hashed again here
    # to take it out of that span.
    with cpu_of(prof.tail, "manifest hashes"):
        for path in sorted(out.rglob("*")):
            if path.is_file():
                sha256_file(path)
    spans[-1] = Piece(spans[-1].name, spans[-1].cpu - prof.tail[-1].cpu)
    prof.outputs.extend(p for p in spans if p.name != CABLING)
    _split_cabling(
        prof,
        next(p.cpu for p in spans if p.name == CABLING),
        lambda: cable_rows(cluster, plan),
        lambda fmt, rows: render_format(cluster, plan, fmt, rows),
        FORMATS,
    )
    return prof


def _spans(marks: list[tuple[str, float]], end: float) -> list[Piece]:
    """Progress marks (output name, CPU clock at its start) as the CPU each output took."""
    if not marks:
        raise SystemExit("generate reported no outputs")
    stops = [t for _, t in marks[1:]] + [end]
    return [Piece(name, stop - start) for (name, start), stop in zip(marks, stops, strict=True)]


def _split_cabling(
    prof: Profile,
    measured: float,
    rows_of: Callable[[], list[CableRow]],
    render: Callable[[str, list[CableRow]], object],
    formats: tuple[str, ...],
) -> None:
    """The cabling plan's CPU in generate, split in the proportions of its cable rows and each format
    rendered again in memory (writing files and rendering in memory cost nearly the same)."""
    t0 = time.process_time()
    rows = rows_of()
    rows_cpu = time.process_time() - t0
    parts: list[Piece] = []
    for fmt in formats:
        with cpu_of(parts, f"cabling {fmt}"):
            render(fmt, rows)
    scale = measured / (rows_cpu + sum(p.cpu for p in parts))
    prof.cable_rows = rows_cpu * scale
    prof.formats = [Piece(p.name, p.cpu * scale) for p in parts]


def lower_bound(prof: Profile, cores: int, drop: Callable[[Piece], bool] = lambda p: False) -> float:
    """Seconds no schedule on ``cores`` cores can beat: the serial prefix; then the larger of the shared
    work spread evenly and the longest chain (cable rows, then the largest format; or one output); then the
    manifest."""
    serial = sum(p.cpu for p in (*prof.serial, *prof.tail) if not drop(p))
    formats = [p.cpu for p in prof.formats if not drop(p)]
    rows = prof.cable_rows if formats and not drop(Piece("cable rows", prof.cable_rows)) else 0.0
    shared = [p.cpu for p in prof.outputs if not drop(p)]
    chain = max([rows + max(formats, default=0.0), *shared])
    return serial + max((rows + sum(formats) + sum(shared)) / cores, chain)


def _print_pieces(title: str, pieces: list[Piece]) -> None:
    print(f"  {title}:")
    for p in pieces:
        print(f"    {p.name:30} {p.cpu:6.2f} s")


def _named(name: str) -> Callable[[Piece], bool]:
    return lambda q: q.name == name


def report(prof: Profile, cores: int) -> None:
    floor = csv_floor(prof.cables)
    total = sum(p.cpu for p in prof.all_pieces())
    print(f"{prof.cables} cables; CPU of the whole run {total:.2f} s (one process, one CPU)")
    _print_pieces("first, one after the other", prof.serial)
    shared = [*prof.outputs, Piece("cable rows", prof.cable_rows), *prof.formats]
    _print_pieces("then sharing the cores (cabling formats after the cable rows)", shared)
    _print_pieces("last", prof.tail)
    best = lower_bound(prof, cores)
    print(f"lower bound on {cores} cores: {best:.2f} s; target {TARGET_SECONDS:g} s; ", end="")
    print(f"csv floor {floor:.2f} s, so {TARGET_FLOOR_RATIO:g}x floor = {TARGET_FLOOR_RATIO * floor:.2f} s")
    print(f"every part split perfectly over {cores} cores, the plan included: {total / cores:.2f} s")
    print("the bound without one piece (what leaving it out of `generate` could buy):")
    for p in (*prof.outputs, *prof.formats):
        if p.cpu < 0.01:
            continue
        print(f"    without {p.name:30} {lower_bound(prof, cores, _named(p.name)):6.2f} s")
    cabling = lower_bound(prof, cores, lambda q: q.name.startswith("cabling") or q.name == "cable rows")
    print(f"    without the whole cabling plan         {cabling:6.2f} s")


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
