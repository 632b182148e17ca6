"""Cabling plan emitter: the sheets data-centre technicians pull cables from (docs/cabling.md).

Output tree (``emit`` writes all of it; ``blueprint cabling --format F`` one part):

    cables.csv  bom.csv  labels.csv          csv
    cabling.xlsx                             xlsx
    netbox/<IMPORT_ORDER>.csv                netbox
    ibnetdiscover/<fabric>.net               ibnetdiscover (InfiniBand fabrics)
    lldp/<fabric>.json                       lldp (Ethernet/RoCE fabrics; every switch in one file)
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

from generator.emit._registry import BuildContext, Emitter
from generator.emit.cabling.fabric_views import ibnetdiscover_files, lldp_files
from generator.emit.cabling.netbox import render_netbox
from generator.emit.cabling.rows import CableRow, CablingError, cable_rows
from generator.emit.cabling.tables import (
    BOM_COLUMNS,
    CABLE_COLUMNS,
    LABEL_COLUMNS,
    CsvStream,
    bom_rows,
    bom_table,
    cable_columns,
    label_columns,
    rows_csv,
    to_csv,
)
from generator.emit.cabling.xlsx import render_xlsx
from generator.forked import FORK_MIN_CABLES, Child, can_fork
from generator.fsutil import atomic_write_bytes, atomic_write_parts
from generator.gcpause import gc_paused
from generator.plan.model import Plan
from generator.resolve import ResolvedCluster

NAME = "cabling"
FORMATS: tuple[str, ...] = ("csv", "xlsx", "netbox", "ibnetdiscover", "lldp")
# Where each format goes when all are written into one directory ("" = the directory itself).
SUBDIR = {"csv": "", "xlsx": "", "netbox": "netbox", "ibnetdiscover": "ibnetdiscover", "lldp": "lldp"}
XLSX_NAME = "cabling.xlsx"
# A file's content: bytes, or a CSV written a slice at a time (the big tables of large plans).
FileData = bytes | CsvStream

__all__ = ["FORMATS", "NAME", "CableRow", "CablingError", "applies", "cable_rows", "emit", "render"]


def applies(cluster: ResolvedCluster) -> bool:
    """True when the plan will have cables: an on-premises cluster with nodes attached to some fabric."""
    return not cluster.is_cloud and any(cluster.pools_on(name) for name in cluster.fabrics)


def render_format(
    cluster: ResolvedCluster,
    plan: Plan,
    fmt: str,
    rows: list[CableRow] | None = None,
    fabric: str | None = None,
) -> dict[str, bytes]:
    """File path (relative to the format's own directory) → bytes, for one format."""
    return {name: _bytes(data) for name, data in _format_files(cluster, plan, fmt, rows, fabric).items()}


def _bytes(data: FileData) -> bytes:
    return data.text().encode("utf-8") if isinstance(data, CsvStream) else data


def _format_files(
    cluster: ResolvedCluster,
    plan: Plan,
    fmt: str,
    rows: list[CableRow] | None,
    fabric: str | None,
) -> dict[str, FileData]:
    if fmt not in FORMATS:
        raise CablingError(f"unknown cabling format `{fmt}` (choose from {', '.join(FORMATS)})")
    if fmt in ("ibnetdiscover", "lldp"):
        texts = (
            ibnetdiscover_files(cluster, plan, fabric)
            if fmt == "ibnetdiscover"
            else lldp_files(cluster, plan, fabric)
        )
        return {name: text.encode("utf-8") for name, text in texts.items()}
    rows = cable_rows(cluster, plan) if rows is None else rows
    if fmt == "csv":
        return {
            "cables.csv": rows_csv(CABLE_COLUMNS, rows, cable_columns),
            "bom.csv": to_csv(BOM_COLUMNS, bom_table(bom_rows(cluster, plan))).encode("utf-8"),
            "labels.csv": rows_csv(LABEL_COLUMNS, rows, label_columns),
        }
    if fmt == "xlsx":
        return {XLSX_NAME: render_xlsx(cluster, plan, rows, bom_rows(cluster, plan))}
    return {
        name: text if isinstance(text, CsvStream) else text.encode("utf-8")
        for name, text in render_netbox(cluster, plan, rows).items()
    }


def render(
    cluster: ResolvedCluster, plan: Plan, formats: tuple[str, ...] = FORMATS, fabric: str | None = None
) -> dict[str, bytes]:
    """Every file of ``formats`` laid out as in one output directory (path → bytes), rendered in memory so
    nothing is written unless all of it could be made."""
    with gc_paused():
        files = _render(cluster, plan, formats, cable_rows(cluster, plan), fabric, len(formats) > 1)
        return {rel: _bytes(data) for rel, data in files.items()}


def _render(
    cluster: ResolvedCluster,
    plan: Plan,
    formats: tuple[str, ...],
    rows: list[CableRow],
    fabric: str | None,
    subdirs: bool,
) -> dict[str, FileData]:
    out: dict[str, FileData] = {}
    for fmt in formats:
        sub = SUBDIR[fmt] if subdirs else ""
        for name, data in _format_files(cluster, plan, fmt, rows, fabric).items():
            out[f"{sub}/{name}" if sub else name] = data
    return dict(sorted(out.items()))


def file_bytes(data: FileData) -> bytes | Iterator[bytes]:
    """A file's bytes, or its parts in order for a CSV made a slice at a time."""
    return (part.encode("utf-8") for part in data.parts()) if isinstance(data, CsvStream) else data


def write_files(out: Path, files: Mapping[str, FileData]) -> None:
    for rel, data in files.items():
        if isinstance(data, CsvStream):
            atomic_write_parts(out / rel, (part.encode("utf-8") for part in data.parts()))
        else:
            atomic_write_bytes(out / rel, data)


def _write_formats(
    out: Path, cluster: ResolvedCluster, plan: Plan, formats: tuple[str, ...], rows: list[CableRow]
) -> None:
    """Render and write one format at a time into ``out``, a folder made whole or not at all by the caller
    (generate's staging folder): a 100k-GPU plan's formats are ~300 MB of text, never all held at once."""
    for fmt in formats:
        write_files(out, _render(cluster, plan, (fmt,), rows, None, True))


# How ``emit`` shares the work between two processes: ~4.3 s and ~3.7 s of a 100k-GPU plan's ~8 s.
CHILD_FORMATS: tuple[str, ...] = ("csv", "xlsx")


def emit(cluster: ResolvedCluster, plan: Plan, out: Path) -> None:
    """Write every cabling format under ``out`` (a fresh directory for this output).

    Nothing is written unless every format could be rendered: formats are written one at a time into a
    staging directory, moved into ``out`` once all are made. Large plans render on two cores: a forked
    child makes the CHILD_FORMATS (see generator/forked.py) while this process makes the rest.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=".cabling-part-", dir=out))
    try:
        with gc_paused():
            rows = cable_rows(cluster, plan)
            if len(rows) < FORK_MIN_CABLES or not can_fork():
                _write_formats(stage, cluster, plan, FORMATS, rows)
            else:
                _write_forked(stage, cluster, plan, rows)
        for path in sorted(p for p in stage.rglob("*") if p.is_file()):
            target = out / path.relative_to(stage)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, target)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _write_forked(stage: Path, cluster: ResolvedCluster, plan: Plan, rows: list[CableRow]) -> None:
    """The CHILD_FORMATS in a forked child, the others here; the child's part redone here if it fails."""
    theirs = tuple(f for f in FORMATS if f in CHILD_FORMATS)
    mine = tuple(f for f in FORMATS if f not in CHILD_FORMATS)
    child = Child(lambda: _write_formats(stage, cluster, plan, theirs, rows))
    try:
        _write_formats(stage, cluster, plan, mine, rows)
        done = child.wait()
    except BaseException:  # an error here, or Ctrl-C: the child's work is not wanted
        child.cancel()
        raise
    if not done:  # do the child's part here, raising its error if it has one
        _write_formats(stage, cluster, plan, theirs, rows)


class CablingEmitter(Emitter):
    name = NAME
    order = 10

    def applies(self, cluster: ResolvedCluster) -> bool:
        return applies(cluster)

    def emit(self, ctx: BuildContext) -> None:
        emit(ctx.cluster, ctx.plan, ctx.out)
