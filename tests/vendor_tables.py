"""Vendor tables kept as test data (tests/data/vendor_tables/, each file names its public source)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import NamedTuple

TABLES = Path(__file__).parent / "data" / "vendor_tables"


class DgxPort(NamedTuple):
    port: str  # OSFP1P1
    gpu: int
    netdev: str
    rdma: str


def dgx_h100_compute_ports() -> list[DgxPort]:
    """Table 6 rows sorted by the GPU column (rail k = the port paired with GPU k)."""
    lines = [
        ln
        for ln in (TABLES / "dgx_h100_network_modules.csv").read_text().splitlines()
        if not ln.startswith("#")
    ]
    rows = [DgxPort(r["port"], int(r["gpu"]), r["netdev"], r["rdma"]) for r in csv.DictReader(lines)]
    return sorted(rows, key=lambda r: r.gpu)


def env_file(name: str) -> dict[str, str]:
    """``NAME=value`` lines of a vendor file (comments skipped)."""
    out: dict[str, str] = {}
    for line in (TABLES / name).read_text().splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            out[key] = value
    return out
