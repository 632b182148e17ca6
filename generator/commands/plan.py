"""`blueprint plan FILE`: switches, ports, cables, bisection, hops, SPOFs, BOM."""

from __future__ import annotations

import argparse

from generator.commands._common import (
    add_blueprint,
    add_common,
    blueprint_inputs,
    check_outputs,
    command,
    print_table,
    text_output,
    write_text,
)
from generator.report import dumps
from generator.safetext import terminal

TYPE_CHECKING = (
    False  # start-up: heavy modules are imported in run() (generator/cli.py); mypy reads this as True
)
if TYPE_CHECKING:
    from collections.abc import Callable

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

    loaded, cluster = load_and_resolve(args.blueprint)
    # `plan bp -o bp` replaced the blueprint, `-o cat.yaml` its catalogue
    check_outputs([("-o", args.output)], blueprint_inputs("BLUEPRINT", loaded), force=args.force)
    plan = plan_or_raise(cluster, loaded.locate)
    summary = plan.summary()
    if args.format == "json":
        write_text(dumps(summary), args.output, replace=args.force)
        return 0
    with text_output(args.output, replace=args.force) as console:
        _render(summary, console)
    return 0


def _render(summary: dict, console: Console) -> None:  # type: ignore[type-arg]
    """The summary as text. Names and catalogue text (a model `NVIDIA QM9700 [rev2]`, a part number) are data,
    never Rich markup or emoji codes: `[/]` in a catalogue name was a MarkupError (exit 3) and `[rev2]` was
    dropped as an unknown tag. Lines go through report.safe with emoji off; table cells are Text objects."""
    from rich.table import Table
    from rich.text import Text

    from generator.report import safe

    def cell(value: object) -> Text:
        return Text(terminal(str(value)))

    def line(markup: str) -> None:
        console.print(markup, highlight=False, emoji=False)

    line(
        f"[bold]{safe(summary['name'])}[/]: {summary['nodes']} nodes ({summary['gpu_nodes']} with GPUs), "
        f"{summary['gpus']} GPUs, {summary['racks']} racks, {summary['power_kw']:g} kW"
    )
    for name, m in summary["fabrics"].items():
        t = Table(title=cell(f"{name} fabric — {m['topology']}"), show_header=True)
        t.add_column("tier / layer")
        t.add_column("switches", justify="right")
        t.add_column("ports used", justify="right")
        t.add_column("ports free", justify="right")
        for tier, n in m["switches"].items():
            t.add_row(
                cell(tier), str(n), str(m["ports_used"].get(tier, 0)), str(m["ports_free"].get(tier, 0))
            )
        for layer, n in m["cables"].items():
            t.add_row(cell(f"cables {layer}"), str(n), "", "")
        print_table(t, console)
        _fabric_lines(m, line)
    bom = Table(title="bill of materials")
    for col in ("item", "model", "count", "detail", "part number"):
        bom.add_column(col)
    for b in summary["bom"]:
        bom.add_row(
            cell(b["item"]),
            cell(b["model"]),
            str(b["count"]),
            cell(b["detail"]),
            cell(b["part_number"] or ""),
        )
    print_table(bom, console, keys=(0, 1, 4))


def _fabric_lines(m: dict, line: Callable[[str], None]) -> None:  # type: ignore[type-arg]
    """A fabric's figures under its table; every name in them shown as text (report.safe)."""
    from generator.report import safe

    over = ", ".join(f"{safe(k)} {v:g}:1" for k, v in m["oversubscription"].items()) or "n/a"
    spof = m["spof"]
    shown = ", ".join(map(safe, spof[:8])) + (" …" if len(spof) > 8 else "") if spof else "none"
    line(
        f"  endpoints {m['endpoints']}, injection {m['injection_gbps']:g} Gb/s, bisection "
        f"{m['bisection_gbps']:g} Gb/s, "
        f"oversubscription {over}\n  diameter {m['diameter_hops']} hops, mean {m['mean_hops']:g} hops, "
        f"equal-cost paths {m['ecmp_paths']}, bandwidth after losing one spine "
        f"{m['bandwidth_after_spine_loss'] * 100:.1f}%\n  single points of failure: {shown}"
    )
    if m.get("transceivers"):
        mods = ", ".join(f"{n} × {safe(tid)}" for tid, n in m["transceivers_by_model"].items())
        line(f"  transceivers {m['transceivers']}: {mods}")
    for note in m["notes"]:
        line(f"  note: {safe(note)}")
