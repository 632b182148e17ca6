"""`blueprint catalog SECTION`: what the hardware catalogue knows."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.table import Table

from blueprints.catalog import default_catalog
from generator.commands._common import console

ORDER = 40

COLUMNS: dict[str, list[str]] = {
    "gpus": ["name", "memory_gb", "tdp_w", "bf16_tflops", "nvlink", "pcie_gen"],
    "switches": [
        "name",
        "technology",
        "speed_gbps",
        "ports",
        "cages",
        "ports_per_cage",
        "rack_units",
        "power_w",
    ],
    "nics": ["name", "speeds_gbps", "protocols", "pcie", "ports"],
    "cables": ["name", "kind", "reach_by_speed_m", "lengths_m", "netbox_type"],
    "transceivers": [
        "name",
        "part_number",
        "medium",
        "speed_gbps",
        "form_factor",
        "ports",
        "reach_m",
        "power_w",
    ],
    "fabrics": ["kind", "speed_gbps", "latency_us", "article_row"],
    "servers": ["name", "gpu", "gpus", "gpu_interconnect", "power_kw", "rack_units"],
    "interconnects": [],
    "cloud": [],
}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("catalog", help="list catalogue entries")
    p.add_argument("section", choices=sorted(COLUMNS))
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.set_defaults(func=run)


def _cell(v: Any) -> str:
    if hasattr(v, "model_dump"):
        v = v.model_dump()
    if isinstance(v, dict):
        return ", ".join(f"{k}={x}" for k, x in v.items())
    if isinstance(v, list | tuple):
        return ", ".join(str(x) for x in v)
    return "" if v is None else str(v)


def _rows(section: str) -> dict[str, Any]:
    cat = default_catalog()
    if section == "cables":
        return dict(cat.media)
    if section == "interconnects":
        return {f"nvlink{k}": v for k, v in cat.interconnects.nvlink.items()} | {
            f"pcie{k}": v for k, v in cat.interconnects.pcie.items()
        }
    if section == "cloud":
        return {f"{p}/{k}": v for p, t in cat.cloud.items() for k, v in t.items()}
    return dict(getattr(cat, section))


def run(args: argparse.Namespace) -> int:
    rows = _rows(args.section)
    if args.format == "json":
        print(json.dumps({k: v.model_dump(mode="json") for k, v in rows.items()}, indent=2))
        return 0
    first = next(iter(rows.values()))
    cols = COLUMNS[args.section] or list(type(first).model_fields)
    table = Table("id", *cols, title=f"catalogue: {args.section}")
    for key, entry in rows.items():
        table.add_row(key, *(_cell(getattr(entry, c, None)) for c in cols))
    console.print(table)
    return 0
