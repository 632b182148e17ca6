"""`blueprint catalog SECTION`: what the hardware catalogue knows."""

from __future__ import annotations

import argparse

from generator.commands._common import (
    add_common,
    check_outputs,
    command,
    print_table,
    text_output,
    write_text,
)

TYPE_CHECKING = False  # start-up: the catalogue, Rich and typing are imported in run() (cli.py)
if TYPE_CHECKING:
    from typing import Any

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
    p = command(
        sub,
        "catalog",
        "list the hardware catalogue's entries (the ids blueprints refer to)",
        description="List the hardware catalogue's entries: the ids a blueprint's `gpu`, `server`, `nics`, "
        "`switch` and `technology` keys refer to, with the figures the rules use. Add your own hardware "
        "with `catalog: my-hardware.yaml` in the blueprint (same sections).",
    )
    p.add_argument("section", choices=sorted(COLUMNS), help="catalogue section to list")
    p.add_argument(
        "--catalog",
        metavar="FILE",
        help="also list the entries of this `catalog:` side file (as a blueprint would see them)",
    )
    add_common(p)
    p.set_defaults(func=run)


def _cell(v: Any) -> str:
    if hasattr(v, "model_dump"):
        v = v.model_dump()
    if isinstance(v, dict):
        return ", ".join(f"{k}={x}" for k, x in v.items())
    if isinstance(v, list | tuple):
        return ", ".join(str(x) for x in v)
    return "" if v is None else str(v)


def _rows(section: str, side_file: str | None = None) -> dict[str, Any]:
    from blueprints.catalog import default_catalog

    cat = default_catalog()
    if side_file:
        from pathlib import Path

        cat = cat.extended(Path(side_file))
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
    import json

    from rich.table import Table

    from blueprints.catalog import CatalogError
    from generator.commands._common import err_console
    from generator.report import safe

    check_outputs([("-o", args.output)], [("--catalog", args.catalog)], force=args.force)
    try:
        rows = _rows(args.section, args.catalog)
    except CatalogError as exc:
        err_console.print(f"[bold red]catalog[/]: {safe(exc.message)}")
        return 2
    if args.format == "json":
        write_text(
            json.dumps({k: v.model_dump(mode="json") for k, v in rows.items()}, indent=2) + "\n",
            args.output,
            replace=args.force,
        )
        return 0
    first = next(iter(rows.values()))
    cols = COLUMNS[args.section] or list(type(first).model_fields)
    table = Table("id", *cols, title=f"catalogue: {args.section}")
    for key, entry in rows.items():
        # a catalogue file's text is shown, never rendered: `[/]` in a name was a MarkupError (exit 3) and
        # `[link=…]` hid its text
        table.add_row(safe(key), *(safe(_cell(getattr(entry, c, None))) for c in cols))
    with text_output(args.output, replace=args.force) as out:
        print_table(table, out)
    return 0
