"""Site calibration: the ratio measured/predicted from a site's own acceptance runs, applied to predictions.

``acceptance-report --calibrate`` groups the runs by (collective, regime, node band) and keeps, per group,
the median over runs of measured/predicted bus bandwidth at the *plateau* sizes: ``plateau_min_bytes()``
(1 GiB, the size the advisor compares topologies at because it is bandwidth-bound) and up. There the
latency term is a few tens of microseconds against milliseconds of transfer (1 GiB at 400 GB/s is 2.7 ms),
so the ratio is the site's bandwidth efficiency against the model, not a latency error; a run without such
a size is skipped (smaller sizes mix in the latency model). The median, not the mean, so one run over a
degraded cable moves the factor little; ``spread`` (largest minus smallest run ratio) says how much the
runs agreed.

* regime: ``in-node`` (the run stays in one NVLink domain: NVLink, NVLS, PCIe), ``network-all-rails``
  (every compute rail) or ``network-one-rail`` (the acceptance role's one-rail runs);
* node band: 1, 2, 3-4, 5-8, 9-16 ... (powers of two: NCCL's rings and trees change shape with the node
  count, so a factor from 2 nodes is not used for 64).

Applying a factor scales the bandwidth term of the predicted time, not the latency term:
``time' = latency + (time - latency) / factor``, so plateau sizes get ``factor x busbw`` and latency-bound
sizes stay as the model has them. A prediction whose (collective, regime, band) has no factor is left as
it is, and the output says so.

The calibration file is the site's, so it is foreign input to every later command: read bounded
(``MAX_FILE_BYTES``) with the blueprint loader's hardened YAML reader (no alias expansion past its limit, no
duplicate keys), checked against :class:`CalibrationFile` (factors in ``factor_range()``), and refused at
``file:line`` when it does not fit or names another blueprint. benchmarks/evaluate.py (the published-
measurement evaluation) never reads one: a site's factors would hide the model's error there.
"""

from __future__ import annotations

import hashlib
import math
import os
import statistics
import tempfile
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from generator.findings import BlueprintError
from generator.foreign import ByteBudget, ForeignInputError, json_path, path_text, read_foreign_text
from generator.limits import MAX_NODES
from generator.perf.sizes import MAX_BYTES

if TYPE_CHECKING:
    from generator.perf.acceptance import AcceptanceReport, RunResult
    from generator.perf.predict import Prediction, RunSettings
    from generator.perf.system import System

VERSION = 1
# A calibration file: ~150 bytes per factor and per source; 1 MiB holds thousands of both.
MAX_FILE_BYTES = 1 << 20
MAX_FACTORS = 4096
MAX_SOURCES = 1 << 17  # generator.perf.nccl_results.MAX_FILES
# Result files listed by name and sha256: a 100k-GPU acceptance run's one-rail files (~100k) would make the
# file ~11 MB, past what read_calibration reads (MAX_FILE_BYTES); beyond this many the list keeps the first
# (by name) and `sources_sha256` stands for all of them.
MAX_LISTED_SOURCES = 1000
# What `--calibrate` writes holds at most ~36k values (MAX_FACTORS entries of 8, MAX_LISTED_SOURCES of 3); a
# file of an earlier release, listing every source (3 values in >= 86 bytes) beside MAX_FACTORS entries,
# holds under 55k within MAX_FILE_BYTES. The YAML reader stops past this many: a megabyte of `[0,0,…]`
# took a minute to refuse when it was counted once parsed whole.
MAX_VALUES = 1 << 16
# validation context: the caller checks overlapping bands itself (CalibrationFile.overlap), where it can
# locate the factor
OVERLAP_CHECKED = "overlap_checked"
COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast")
REGIMES = ("in-node", "network-all-rails", "network-one-rail")


def plateau_min_bytes() -> int:
    """The plateau's smallest size: the advisor's bandwidth-bound probe size (perf.yaml
    advisor.probe_size_bytes, 1 GiB)."""
    from blueprints.catalog.perf import perf_data

    return int(perf_data().advisor.probe_size_bytes.value)


def factor_range() -> tuple[float, float]:
    """The factors a calibration may hold (perf.yaml policy.calibration_factor_min / _max): outside them a
    ratio is a broken run or a model gap, not a site's efficiency."""
    from blueprints.catalog.perf import perf_data

    policy = perf_data().policy
    return policy.calibration_factor_min.value, policy.calibration_factor_max.value


class CalibrationError(ValueError):
    """The runs cannot give a calibration (no plateau size, a ratio outside factor_range(), a file exists)."""


# ---- the file's model -----------------------------------------------------------------------------

Factor = Annotated[float, Field(gt=0, allow_inf_nan=False)]
Nodes = Annotated[StrictInt, Field(ge=1, le=MAX_NODES)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class FactorEntry(_Strict):
    collective: Literal["all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast"]
    regime: Literal["in-node", "network-all-rails", "network-one-rail"]
    nodes_min: Nodes
    nodes_max: Nodes
    factor: Factor
    runs: Annotated[StrictInt, Field(ge=1, le=MAX_SOURCES)]
    spread: Annotated[float, Field(ge=0, allow_inf_nan=False)]  # what the runs' ratios span (informative)
    # what the runs changed (settings_key: NCCL_ALGO, NCCL_PROTO, channels, NVLink or PXN off ...); "" for
    # NCCL's own choices. A factor holds for the settings it was measured with: NVLink off, a forced LL
    # protocol or two ranks a node run other paths and limits than the default runs
    settings: Annotated[StrictStr, Field(max_length=1000)] = ""

    @field_validator("factor")
    @classmethod
    def _factor_in_range(cls, value: float) -> float:
        lo, hi = factor_range()
        if not lo <= value <= hi:
            raise ValueError(
                f"factor {value:g} is outside {lo:g}-{hi:g} (perf.yaml policy.calibration_factor_min / _max)"
            )
        return value

    @model_validator(mode="after")
    def _band(self) -> FactorEntry:
        if self.nodes_min > self.nodes_max:
            raise ValueError(f"nodes_min {self.nodes_min} is above nodes_max {self.nodes_max}")
        return self

    def label(self) -> str:
        """One line, safe to print: ``settings`` is the file's text (a newline or an escape sequence in it
        would print a line of its own or drive the terminal)."""
        from generator.safetext import one_line, terminal

        band = (
            str(self.nodes_min) if self.nodes_min == self.nodes_max else f"{self.nodes_min}-{self.nodes_max}"
        )
        shown = one_line(terminal(self.settings))[:200]
        return f"{self.collective} {self.regime} {band} node(s)" + (f" ({shown})" if self.settings else "")


class Source(_Strict):
    file: Annotated[StrictStr, Field(min_length=1, max_length=4096)]
    sha256: Annotated[StrictStr, Field(pattern=r"^[0-9a-f]{64}\z")]


# a release as the blueprint's software.nccl takes it (blueprints/models/base.py VersionStr)
_RELEASE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,39}\z"


class CalibrationFile(_Strict):
    version: Annotated[StrictInt, Field(ge=VERSION, le=VERSION)]  # StrictInt: `true` is no version 1
    blueprint: Annotated[StrictStr, Field(min_length=1, max_length=253)]
    # the pool and GPU the runs ran on (files written before they were recorded have neither)
    pool: Annotated[StrictStr, Field(min_length=1, max_length=253)] | None = None
    gpu: Annotated[StrictStr, Field(min_length=1, max_length=253)] | None = None
    nccl_version: Annotated[StrictStr, Field(pattern=_RELEASE_PATTERN)]
    # the modelled system the runs were compared with (system_fingerprint; files written before it was
    # recorded have none): a blueprint of that name whose fabric, NICs or GPUs changed is another system
    system_sha256: Annotated[StrictStr, Field(pattern=r"^[0-9a-f]{64}\z")] | None = None
    plateau_min_bytes: Annotated[StrictInt, Field(ge=1, le=MAX_BYTES)]
    # written: at most MAX_LISTED_SOURCES; read: as many as files an earlier release listed whole
    sources: list[Source] = Field(max_length=MAX_SOURCES)
    # every result file (files written before these were recorded list them all in `sources`): how many, and
    # the sha256 of their `sha256sum` listing ("<sha256>  <file>" lines in code-point order of the names),
    # which `sha256sum <the files in that order> | sha256sum` in the results folder gives again
    sources_total: Annotated[StrictInt, Field(ge=0, le=MAX_SOURCES)] | None = None
    sources_sha256: Annotated[StrictStr, Field(pattern=r"^[0-9a-f]{64}\z")] | None = None
    factors: list[FactorEntry] = Field(min_length=1, max_length=MAX_FACTORS)

    @model_validator(mode="after")
    def _listed(self) -> CalibrationFile:
        if self.sources_total is not None and self.sources_total < len(self.sources):
            listed = len(self.sources)
            raise ValueError(f"sources_total {self.sources_total} is below the {listed} sources listed")
        return self

    @model_validator(mode="after")
    def _no_overlap(self, info: ValidationInfo) -> CalibrationFile:
        # read_calibration checks it itself (``overlap``), to locate the error at the factor's line
        if info.context and info.context.get(OVERLAP_CHECKED):
            return self
        found = self.overlap()
        if found is not None:
            raise ValueError(f"factors[{found[0]}]: {found[1]}")
        return self

    def overlap(self) -> tuple[int, str] | None:
        """The first factor whose band overlaps an earlier one's of the same collective, regime and settings
        (its index and why); None when none does."""
        seen: dict[tuple[str, str, str], list[FactorEntry]] = defaultdict(list)
        for i, f in enumerate(self.factors):
            for other in seen[(f.collective, f.regime, f.settings)]:
                if f.nodes_min <= other.nodes_max and other.nodes_min <= f.nodes_max:
                    return i, f"two factors for {f.label()} (overlaps {other.label()})"
            seen[(f.collective, f.regime, f.settings)].append(f)
        return None

    def factor_for(self, collective: str, regime: str, nodes: int, settings: str = "") -> FactorEntry | None:
        for f in self.factors:
            if (
                f.collective == collective
                and f.regime == regime
                and f.settings == settings
                and f.nodes_min <= nodes <= f.nodes_max
            ):
                return f
        return None


@dataclass(frozen=True)
class Calibration:
    """A validated calibration file and where it was read from (shown beside every calibrated output)."""

    file: str
    data: CalibrationFile

    def factor_for(self, collective: str, regime: str, nodes: int, settings: str = "") -> FactorEntry | None:
        return self.data.factor_for(collective, regime, nodes, settings)


# ---- keys -----------------------------------------------------------------------------------------


def band(nodes: int) -> tuple[int, int]:
    """The power-of-two node band of ``nodes``: 1, 2, 3-4, 5-8, 9-16 ..."""
    if nodes <= 2:
        return max(1, nodes), max(1, nodes)
    hi = 1 << math.ceil(math.log2(nodes))
    return hi // 2 + 1, hi


def settings_key(settings: RunSettings, collective: str, system: System) -> str:
    """What a run changed, for ``collective`` on ``system``, in one canonical spelling
    (predict.RunSettings.describe, without the NCCL release, which the file records once): "" for a run of
    NCCL's own choices. Algorithms and protocols as sorted sets (NCCL takes a list as the set it names:
    ``Tree,Ring`` is ``--algo ring,tree``); channel counts cut to the run's release's MAXCHANNELS, as
    `estimate` cuts them (estimate.channels_within_release); ranks a node count when fewer than the node's
    GPUs; CollNet off only where the fabric has IB SHARP; RCCL's MSCCL switches only on AMD GPUs (acceptance
    turns a small channel cap into RCCL_MSCCL_ENABLE=0 whatever the GPU)."""
    from generator.perf.estimate import channels_within_release
    from generator.perf.processes import DEFAULT_PROCESSES
    from generator.perf.system import nccl_release

    resolved = settings.for_collective(collective)
    resolved = channels_within_release(resolved, nccl_release(resolved.nccl_version or system.nccl_version))
    rpn = resolved.ranks_per_node
    process = resolved.process
    if system.gpu.vendor != "amd":
        process = replace(
            process,
            msccl=DEFAULT_PROCESSES.msccl,
            msccl_single_process=DEFAULT_PROCESSES.msccl_single_process,
        )
    return replace(
        resolved,
        algorithms=_as_set(resolved.algorithms),
        protocols=_as_set(resolved.protocols),
        nccl_version=None,
        algorithm_lists=None,
        protocol_lists=None,
        ranks_per_node=rpn if rpn is not None and rpn < system.gpus_per_node else None,
        process=process,
        collnet=resolved.collnet or not system.sharp,  # CollNet off changes nothing without IB SHARP
    ).describe()


def _as_set(names: tuple[str, ...] | None) -> tuple[str, ...] | None:
    return tuple(sorted(set(names))) if names is not None else None


def system_fingerprint(system: System) -> str:
    """sha256 of the hardware a factor was measured on, as the model knows it: the GPU and how many a node
    holds, the compute ports and their line rate, the fabric's technology and topology, and what of the
    fabric changes the predicted algorithm or bandwidth: IB SHARP (CollNet, NVLS across nodes) and the share
    of the rails it aggregates, the leaves' oversubscription and the rails a node's traffic spreads over
    (rail-optimised leaves). Run settings (NVLink off, a forced protocol) change the modelled paths, not
    these: they key the factors. A file fingerprinted with fewer parts (an earlier release) is refused as
    another system's, which asks for a calibration again rather than applying factors of an unknown one."""
    shape = system.spread_shape
    parts = (
        system.gpu_id,
        system.gpus_per_node,
        system.net_line_gbps,
        system.net_ports,
        system.technology,
        system.topology,
        system.sharp,
        round(system.sharp_share, 6),
        round(shape.oversubscription, 6) if shape is not None else None,
        shape.rails if shape is not None else None,
    )
    return hashlib.sha256(repr(parts).encode("utf-8")).hexdigest()


def regime(system: System, nodes: int, one_rail: bool) -> str:
    if nodes <= max(1, system.unit_nodes):
        return "in-node"
    return "network-one-rail" if one_rail else "network-all-rails"


def calibrated_time(time_s: float, latency_us: float, factor: float) -> float:
    """The predicted time with its bandwidth term divided by ``factor`` (latency kept)."""
    latency = min(max(0.0, latency_us * 1e-6), time_s)
    return latency + (time_s - latency) / factor


def calibrated_busbw(busbw: float, time_s: float, latency_us: float, factor: float) -> float:
    if time_s <= 0:
        return busbw * factor
    return busbw * time_s / calibrated_time(time_s, latency_us, factor)


def apply_to_series(
    calibration: Calibration,
    system: System,
    collective: str,
    rows: list[Prediction],
    nodes: int,
    settings: RunSettings | None = None,
) -> tuple[list[Prediction], FactorEntry | None]:
    """``rows`` (one collective over all rails of ``nodes`` nodes, run with ``settings``) with the site factor
    applied, and the factor (None: the calibration has none for this collective, regime, band and settings;
    rows unchanged)."""
    from generator.perf.predict import RunSettings

    key = settings_key(settings or RunSettings(), collective, system)
    entry = calibration.factor_for(collective, regime(system, nodes, False), nodes, key)
    if entry is None:
        return rows, None
    out = []
    for r in rows:
        t = calibrated_time(r.time_s, r.latency_us, entry.factor)
        scale = r.time_s / t if t > 0 else entry.factor
        out.append(
            replace(r, time_s=t, busbw_gbytes=r.busbw_gbytes * scale, algbw_gbytes=r.algbw_gbytes * scale)
        )
    return out, entry


# ---- calibrate ------------------------------------------------------------------------------------


def _run_ratio(res: RunResult, plateau: int) -> float | None:
    ratios = [s.measured / s.predicted for s in res.sizes if s.size_bytes >= plateau and s.predicted > 0]
    return statistics.fmean(ratios) if ratios else None


Group = tuple[str, str, int, int, str]  # collective, regime, node band, settings_key


def _groups(
    report: AcceptanceReport, system: System, plateau: int
) -> tuple[dict[Group, list[float]], list[str], list[str]]:
    """The measured/predicted ratios by (collective, regime, node band, run settings), every run skipped with
    why, and of those the runs that cannot calibrate at any size (an error row, or a run over another
    transport)."""
    from generator.perf.acceptance import run_settings

    groups: dict[Group, list[float]] = defaultdict(list)
    skipped: list[str] = []
    unusable: list[str] = []
    for res in report.results:
        if res.unusable:  # a run over another transport or fewer ports would scale the fabric's prediction
            unusable.append(f"{res.run.name}: {res.unusable}")
            skipped.append(unusable[-1])
            continue
        if res.unplanned:  # measured on other machines: it says nothing of this cluster's factor
            shown = ", ".join(res.unplanned[:4]) + (" ..." if len(res.unplanned) > 4 else "")
            unusable.append(f"{res.run.name}: ran on host(s) not in the plan ({shown})")
            skipped.append(unusable[-1])
            continue
        ratio = _run_ratio(res, plateau)
        if ratio is None:
            skipped.append(f"{res.run.name}: no message size of {plateau:,} bytes or more")
            continue
        run = res.run
        # res.error would be unusable: its settings parse
        key = settings_key(
            replace(run_settings(run), ranks_per_node=run.ranks_per_node), run.collective, system
        )
        groups[
            (run.collective, regime(system, run.nodes, run.rail is not None), *band(run.nodes), key)
        ].append(ratio)
    return groups, skipped, unusable


def _entries(groups: dict[Group, list[float]]) -> list[dict[str, object]]:
    entries = []
    lo, hi = factor_range()
    for (collective, reg, nmin, nmax, key), ratios in sorted(groups.items()):
        factor = statistics.median(ratios)
        if not lo <= factor <= hi:
            raise CalibrationError(
                f"{collective} {reg} {nmin}-{nmax} node(s): measured/predicted {factor:.3f} over "
                f"{len(ratios)} run(s) is outside {lo:g}-{hi:g} (perf.yaml policy.calibration_factor_min / "
                "_max): a broken run or a model gap to report, not a calibration (nothing written)"
            )
        entries.append(
            {
                "collective": collective,
                "regime": reg,
                "nodes_min": nmin,
                "nodes_max": nmax,
                "factor": round(factor, 4),
                "runs": len(ratios),
                "spread": round(max(ratios) - min(ratios), 4),
                **({"settings": key} if key else {}),
            }
        )
    return entries


def _listing(sources: list[dict[str, str]]) -> dict[str, object]:
    """The sources as the file records them: the first MAX_LISTED_SOURCES by name, the count of all, and the
    sha256 of their `sha256sum` listing."""
    text = "".join(f"{s['sha256']}  {s['file']}\n" for s in sources)
    return {
        "sources": sources[:MAX_LISTED_SOURCES],
        "sources_total": len(sources),
        "sources_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
    }


def _sources(digests: dict[str, str], root: Path) -> list[dict[str, str]]:
    """Each result file's name (relative to the results folder) and the sha256 of the bytes its runs were read
    from (nccl_results.read_runs: the file is not read, nor charged to the byte budget, again)."""
    out = []
    for p in sorted(digests):
        try:
            name = Path(p).relative_to(root).as_posix()
        except ValueError:
            name = Path(p).name
        out.append({"file": path_text(name), "sha256": digests[p]})
    return out


def _release(report: AcceptanceReport, system: System, plateau: int) -> str:
    """The NCCL release the calibrating runs used, as their outputs record it (each run is predicted with its
    own: acceptance.compare's system_of), else the blueprint's; CalibrationError when they used releases whose
    tuners differ (major.minor), since one factor cannot stand for both."""
    from generator.perf.system import nccl_release

    used: dict[int | None, list[str]] = defaultdict(list)
    for res in report.results:
        if not res.unusable and _run_ratio(res, plateau) is not None:
            version = res.run.settings.nccl_version or system.nccl_version
            used[nccl_release(version)].append(version)
    if len(used) > 1:
        shown = " and ".join(sorted({v[0] for v in used.values()}))
        raise CalibrationError(
            f"the runs used NCCL {shown}: calibrate the runs of one release at a time (nothing written)"
        )
    versions = next(iter(used.values()), [system.nccl_version])
    return statistics.mode(versions)


def calibrate(
    report: AcceptanceReport, system: System, results: str | Path
) -> tuple[CalibrationFile, list[str]]:
    """The calibration of ``report``'s runs (predicted without calibration) and the runs it skipped."""
    plateau = plateau_min_bytes()
    groups, skipped, unusable = _groups(report, system, plateau)
    if not groups:
        if not unusable:
            raise CalibrationError(
                f"no run has a message size of {plateau:,} bytes or more (the bandwidth plateau): "
                "run nccl-tests up to at least 1G (-e 1G) to calibrate (nothing written)"
            )
        more = f"; {len(unusable) - 3} more" if len(unusable) > 3 else ""
        raise CalibrationError(
            f"no run can calibrate the model (nothing written): {'; '.join(unusable[:3])}{more}"
        )
    used = {r.run.path: r.run.sha256 for r in report.results}
    doc = {
        "version": VERSION,
        "blueprint": system.name,
        "pool": system.pool,
        "gpu": system.gpu_id,
        "nccl_version": _release(report, system, plateau),
        "system_sha256": system_fingerprint(system),
        "plateau_min_bytes": plateau,
        **_listing(_sources(used, Path(results))),
        "factors": _entries(groups),
    }
    try:
        return CalibrationFile.model_validate(doc), skipped
    except ValidationError as exc:  # what the runs recorded does not fit the file (nothing is written)
        err = exc.errors()[0]
        raise CalibrationError(
            f"the calibration cannot be written: {json_path(list(err['loc']))}: {err['msg']} "
            "(nothing written)"
        ) from None


# ---- files ----------------------------------------------------------------------------------------


def default_path(blueprint: str | Path) -> Path:
    """``<blueprint stem>.calibration.yaml`` beside the blueprint."""
    p = Path(blueprint)
    return p.with_name(f"{p.stem}.calibration.yaml")


def to_yaml(cal: CalibrationFile) -> str:
    from generator.yamltext import block_yaml

    head = (
        "# Site calibration written by `blueprint acceptance-report --calibrate`: measured/predicted bus\n"
        "# bandwidth at the plateau sizes, per collective, regime and node band. Applied by\n"
        "# `blueprint estimate --calibration FILE`; never read by benchmarks/evaluate.py.\n"
    )
    return head + block_yaml(cal.model_dump(mode="json"))


def write_calibration(path: str | Path, cal: CalibrationFile, force: bool) -> None:
    """Write the file whole or not at all; an existing file is replaced only with ``force``."""
    from generator.fsutil import OutputRefused, atomic_write_text, checked_output_file

    target = Path(path)
    try:
        checked_output_file(target)
    except OutputRefused as exc:
        raise CalibrationError(f"{exc} (nothing written)") from None
    text = to_yaml(cal)
    if force:
        atomic_write_text(target, text)
        return
    if target.exists():
        raise CalibrationError(f"{target} exists; add --force to replace it (nothing written)")
    try:  # the folder is made as with --force (atomic_write_text); a failure names the file asked for
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name[:200]}.", dir=target.parent)
    except OSError as exc:
        raise CalibrationError(f"cannot write {target}: {exc.strerror} (nothing written)") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.link(tmp, target)  # fails if the name appeared meanwhile: never replaces a file
    except FileExistsError:
        raise CalibrationError(f"{target} exists; add --force to replace it (nothing written)") from None
    except OSError as exc:
        raise CalibrationError(f"cannot write {target}: {exc.strerror} (nothing written)") from None
    finally:
        Path(tmp).unlink(missing_ok=True)


def _loaded(text: str, where: str):  # type: ignore[no-untyped-def]
    from generator.load import parse_yaml

    try:
        return parse_yaml(text, where, MAX_VALUES)
    except BlueprintError as exc:
        first = exc.findings[0]
        loc = first.location
        raise ForeignInputError(f"{where}:{loc.line}" if loc else where, first.message) from None


def read_calibration(
    path: str | Path,
    blueprint: str,
    budget: ByteBudget | None = None,
    pool: str | None = None,
    gpu: str | None = None,
    system: System | None = None,
) -> Calibration:
    """The calibration file at ``path`` for the blueprint named ``blueprint`` (and, where the file records
    them, its GPU pool ``pool``, that pool's GPU ``gpu`` and the modelled ``system``'s fingerprint);
    ForeignInputError located at ``file:line`` when it cannot be used."""
    where = str(path)
    source = _loaded(read_foreign_text(path, MAX_FILE_BYTES, budget), where)
    if not isinstance(source.data, dict):
        raise ForeignInputError(f"{where}:1", "not a calibration file (a YAML mapping is expected)")
    try:
        data = CalibrationFile.model_validate(source.data, context={OVERLAP_CHECKED: True})
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        at = source.locate(loc)
        raise ForeignInputError(f"{where}:{at.line}", f"{json_path(list(loc))}: {err['msg']}") from None
    found = data.overlap()
    if found is not None:
        at = source.locate(("factors", found[0]))
        raise ForeignInputError(f"{where}:{at.line}", f"{json_path(['factors', found[0]])}: {found[1]}")
    if data.blueprint != blueprint:
        at = source.locate(("blueprint",))
        from generator.safetext import one_line, terminal

        raise ForeignInputError(
            f"{where}:{at.line}",
            f"calibration of blueprint `{one_line(terminal(data.blueprint))[:80]}`, not of `{blueprint}`: "
            "a site's factors hold for the cluster they were measured on",
        )
    for key, recorded, asked in (("pool", data.pool, pool), ("gpu", data.gpu, gpu)):
        if asked is not None and recorded is not None and recorded != asked:
            at = source.locate((key,))
            from generator.safetext import one_line, terminal

            raise ForeignInputError(
                f"{where}:{at.line}",
                f"calibration of pool `{one_line(terminal(data.pool or '?'))[:80]}` "
                f"({one_line(terminal(data.gpu or 'its GPU'))[:80]}), not of `{pool}` ({gpu}): a factor "
                "holds for the servers and fabric it was measured on",
            )
    if (
        system is not None
        and data.system_sha256 is not None
        and data.system_sha256 != system_fingerprint(system)
    ):
        at = source.locate(("system_sha256",))
        raise ForeignInputError(
            f"{where}:{at.line}",
            f"calibration of another `{blueprint}`: its GPUs, compute ports, their line rate, the fabric's "
            "technology, topology, IB SHARP, oversubscription or rail optimisation have changed since the "
            "runs, or an earlier release wrote the file (system_sha256); a factor holds for the system it "
            "was measured on: calibrate again",
        )
    return Calibration(where, data)
