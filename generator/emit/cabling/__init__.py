"""Cabling plan emitter: the sheets data-centre technicians pull cables from (docs/cabling.md).

Output tree (``emit`` writes all of it; ``blueprint cabling --format F`` one part):

    cables.csv  bom.csv  labels.csv          csv
    cabling.xlsx                             xlsx
    netbox/<IMPORT_ORDER>.csv                netbox
    ibnetdiscover/<fabric>.net               ibnetdiscover (InfiniBand fabrics)
    lldp/<fabric>/<switch files>             lldp (Ethernet/RoCE fabrics)
"""

from __future__ import annotations

from pathlib import Path

from generator.emit.cabling.fabric_views import ibnetdiscover_files, lldp_files
from generator.emit.cabling.netbox import render_netbox
from generator.emit.cabling.rows import CableRow, CablingError, cable_rows
from generator.emit.cabling.tables import (
    BOM_COLUMNS,
    CABLE_COLUMNS,
    LABEL_COLUMNS,
    bom_rows,
    bom_table,
    cable_table,
    label_table,
    to_csv,
)
from generator.emit.cabling.xlsx import render_xlsx
from generator.fsutil import atomic_write_bytes
from generator.plan.model import Plan
from generator.resolve import ResolvedCluster

NAME = "cabling"
FORMATS: tuple[str, ...] = ("csv", "xlsx", "netbox", "ibnetdiscover", "lldp")
# Where each format goes when all are written into one directory ("" = the directory itself).
SUBDIR = {"csv": "", "xlsx": "", "netbox": "netbox", "ibnetdiscover": "ibnetdiscover", "lldp": "lldp"}
XLSX_NAME = "cabling.xlsx"

__all__ = ["FORMATS", "NAME", "CableRow", "CablingError", "applies", "cable_rows", "emit", "render"]


def applies(cluster: ResolvedCluster) -> bool:
    """True when the plan will have cables: an on-premises cluster with nodes attached to some fabric."""
    return not cluster.is_cloud and any(cluster.pools_on(name) for name in cluster.fabrics)


def render_format(cluster: ResolvedCluster, plan: Plan, fmt: str, rows: list[CableRow] | None = None,
                  fabric: str | None = None) -> dict[str, bytes]:
    """File path (relative to the format's own directory) → bytes, for one format."""
    if fmt not in FORMATS:
        raise CablingError(f"unknown cabling format `{fmt}` (choose from {', '.join(FORMATS)})")
    if fmt in ("ibnetdiscover", "lldp"):
        texts = ibnetdiscover_files(cluster, plan, fabric) if fmt == "ibnetdiscover" else lldp_files(cluster, plan, fabric)
        return {name: text.encode("utf-8") for name, text in texts.items()}
    rows = cable_rows(cluster, plan) if rows is None else rows
    if fmt == "csv":
        return {
            "cables.csv": to_csv(CABLE_COLUMNS, cable_table(rows)).encode("utf-8"),
            "bom.csv": to_csv(BOM_COLUMNS, bom_table(bom_rows(cluster, plan))).encode("utf-8"),
            "labels.csv": to_csv(LABEL_COLUMNS, label_table(rows)).encode("utf-8"),
        }
    if fmt == "xlsx":
        return {XLSX_NAME: render_xlsx(cluster, plan, rows, bom_rows(cluster, plan))}
    return {name: text.encode("utf-8") for name, text in render_netbox(cluster, plan, rows).items()}


def render(cluster: ResolvedCluster, plan: Plan, formats: tuple[str, ...] = FORMATS,
           fabric: str | None = None) -> dict[str, bytes]:
    """Every file of ``formats`` laid out as in one output directory (path → bytes), rendered in memory so
    nothing is written unless all of it could be made."""
    rows = cable_rows(cluster, plan)
    out: dict[str, bytes] = {}
    for fmt in formats:
        sub = SUBDIR[fmt] if len(formats) > 1 else ""
        for name, data in render_format(cluster, plan, fmt, rows, fabric).items():
            out[f"{sub}/{name}" if sub else name] = data
    return dict(sorted(out.items()))


def write_files(out: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        atomic_write_bytes(out / rel, data)


def emit(cluster: ResolvedCluster, plan: Plan, out: Path) -> None:
    """Write every cabling format under ``out`` (a fresh directory for this output)."""
    write_files(Path(out), render(cluster, plan))
