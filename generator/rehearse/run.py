"""One rehearsal of a build: every selected fabric in turn, kernel limits raised and restored, every
namespace and process removed whatever happens (``cleanup``)."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from generator.foreign import ForeignInputError, read_foreign_text
from generator.rehearse import limits, sample
from generator.rehearse.build_input import MAX_FILE, Build
from generator.rehearse.cleanup import Reaper, signals_raise, sweep_stale
from generator.rehearse.ethernet import rehearse_ethernet, wiring
from generator.rehearse.ibsim import netfile_size
from generator.rehearse.infiniband import fabric_switches, rehearse_infiniband
from generator.rehearse.verdict import FabricVerdict, Rehearsal

DEFAULT_TIMEOUT_S = 180.0


def fabric_devices(build: Build, fabric: str) -> set[str]:
    if fabric in build.switches:
        return set(build.switches[fabric])
    return fabric_switches(read_foreign_text(build.infiniband[fabric].netfile, MAX_FILE))


def _ethernet(
    build: Build, fabric: str, mode: str, reaper: Reaper, fail: list[str], timeout_s: float
) -> FabricVerdict:
    configs = build.switches[fabric]
    wires, _ = wiring(build.cables_of(fabric), configs)
    verdict = FabricVerdict(
        fabric, "ethernet", f"{len(configs)} switches, {len(wires)} switch-to-switch cables"
    )
    keep = None
    if mode == "always" or (mode == "auto" and not sample.fits_ethernet(len(configs))):
        edges = [(w.a, w.b) for w in wires]
        found = sample.scalable_unit(configs, edges) or sample.group_set(configs, edges)
        if found is None:
            verdict.add("size", [f"{len(configs)} switches do not fit this machine and the fabric has no "
                                 "scalable units or dragonfly groups to sample"],
                        "the fabric fits this machine")  # fmt: skip
            return verdict
        keep, what = found
        verdict.notes.append(what)
    rehearse_ethernet(
        build, fabric, reaper, [d for d in fail if keep is None or d in keep], timeout_s, verdict, keep
    )
    return verdict


def _infiniband(
    build: Build, fabric: str, mode: str, reaper: Reaper, fail: list[str], timeout_s: float
) -> FabricVerdict:
    text = read_foreign_text(build.infiniband[fabric].netfile, MAX_FILE)
    nodes, switches, _ = netfile_size(text)
    verdict = FabricVerdict(fabric, "infiniband", f"{switches} switches, {nodes - switches} HCAs")
    outside: set[str] = set()
    if mode == "always" or (mode == "auto" and not sample.fits_infiniband(nodes)):
        names = fabric_devices(build, fabric)
        edges = [(c.a, c.b) for c in build.cables_of(fabric) if c.a in names and c.b in names]
        found = sample.scalable_unit(names, edges)
        if found is not None:
            outside = names - found[0]
            verdict.notes.append(found[1])
    rehearse_infiniband(build, fabric, reaper, fail, timeout_s, verdict, text, outside)
    return verdict


def rehearse(
    build: Build,
    fabrics: list[str],
    fail: list[str],
    *,
    mode: str = "auto",
    timeout_s: float = DEFAULT_TIMEOUT_S,
    progress: Callable[[str], None] = lambda _: None,
) -> Rehearsal:
    """Raises ``cleanup.Interrupted`` on SIGINT/SIGTERM/SIGHUP, after removing everything it made."""
    t0 = time.monotonic()
    result = Rehearsal(str(build.root))
    tmp = Path(tempfile.gettempdir())
    state = limits.state_dir()
    for stale in sweep_stale(tmp, state):
        progress(f"removed {stale} left by a rehearsal that was killed")
    with signals_raise():
        ends = max((2 * len(wiring(build.cables_of(f), build.switches[f])[0]) for f in fabrics
                    if f in build.switches), default=0)  # fmt: skip
        # refused (a held lock): nothing was raised, so there is nothing to put back
        result.limits = limits.raise_limits(ends, state)
        try:
            for fabric in fabrics:
                mine = [d for d in fail if d in fabric_devices(build, fabric)]
                progress(f"rehearsing {fabric}" + (f", then failing {', '.join(mine)}" if mine else ""))
                reaper = Reaper()
                try:
                    run = _ethernet if fabric in build.switches else _infiniband
                    result.fabrics.append(run(build, fabric, mode, reaper, mine, timeout_s))
                finally:
                    reaper.release()
        finally:
            try:
                limits.release(state)
            except (OSError, ForeignInputError):  # the verdict is kept; the limits are reported NOT restored
                result.limits_restored = False
    result.seconds = time.monotonic() - t0
    return result
