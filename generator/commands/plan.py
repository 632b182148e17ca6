"""`blueprint plan FILE`: switches, ports, cables, bisection, hops, SPOFs, BOM."""

from __future__ import annotations

import argparse

from generator.commands._common import (
    add_blueprint,
    add_common,
    check_outputs,
    command,
    print_table,
    text_output,
    write_text,
)
from generator.report import dumps

TYPE_CHECKING = (
    False  # start-up: heavy modules are imported in run() (generator/cli.py); mypy reads this as True
)
if TYPE_CHECKING:
    from rich.console import Console

ORDER = 15


def register(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "plan", "build the fabric and physical plan and summarise it")
    add_blueprint(p)
    add_common(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from generator.pipeline import load_and_resolve
    from generator.plan.build import plan_or_raise

    check_outputs([("-o", args.output)], [("BLUEPRINT", args.blueprint)])  # `plan bp -o bp` replaced it
    loaded, cluster = load_and_resolve(args.blueprint)
    plan = plan_or_raise(cluster, loaded.locate)
    summary = plan.summary()
    if args.format == "json":
        write_text(dumps(summary), args.output)
        return 0
    with text_output(args.output) as console:
        _render(summary, console)
    return 0


def _render(summary: dict, console: Console) -> None:  # type: ignore[type-arg]
    from rich.table import Table

    console.print(
        f"[bold]{summary['name']}[/]: {summary['nodes']} nodes ({summary['gpu_nodes']} with GPUs), "
        f"{summary['gpus']} GPUs, {summary['racks']} racks, {summary['power_kw']:g} kW"
    )
    for name, m in summary["fabrics"].items():
        t = Table(title=f"{name} fabric — {m['topology']}", show_header=True)
        t.add_column("tier / layer")
        t.add_column("switches", justify="right")
        t.add_column("ports used", justify="right")
        t.add_column("ports free", justify="right")
        for tier, n in m["switches"].items():
            t.add_row(tier, str(n), str(m["ports_used"].get(tier, 0)), str(m["ports_free"].get(tier, 0)))
        for layer, n in m["cables"].items():
            t.add_row(f"cables {layer}", str(n), "", "")
        print_table(t, console)
        over = ", ".join(f"{k} {v:g}:1" for k, v in m["oversubscription"].items()) or "n/a"
        console.print(
            f"  endpoints {m['endpoints']}, injection {m['injection_gbps']:g} Gb/s, bisection "
            f"{m['bisection_gbps']:g} Gb/s, "
            f"oversubscription {over}\n  diameter {m['diameter_hops']} hops, mean {m['mean_hops']:g} hops, "
            f"equal-cost paths {m['ecmp_paths']}, bandwidth after losing one spine "
            f"{m['bandwidth_after_spine_loss'] * 100:.1f}%\n  single points of failure: "
            f"{', '.join(m['spof'][:8]) + (' …' if len(m['spof']) > 8 else '') if m['spof'] else 'none'}"
        )
        if m.get("transceivers"):
            mods = ", ".join(f"{n} × {tid}" for tid, n in m["transceivers_by_model"].items())
            console.print(f"  transceivers {m['transceivers']}: {mods}", highlight=False)
        for note in m["notes"]:
            console.print(f"  note: {note}")
    bom = Table(title="bill of materials")
    for col in ("item", "model", "count", "detail", "part number"):
        bom.add_column(col)
    for line in summary["bom"]:
        bom.add_row(
            line["item"], line["model"], str(line["count"]), line["detail"], line["part_number"] or ""
        )
    print_table(bom, console, keys=(0, 1, 4))
