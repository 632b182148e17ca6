"""`blueprint topology FILE --format graphml|json|dot|svg`: the fabric as a graph for other tools."""

from __future__ import annotations

import argparse
import io
import json

from generator.commands._common import (
    add_blueprint,
    add_common,
    blueprint_inputs,
    check_outputs,
    command,
    err_console,
    write_text,
)
from generator.safetext import xml_text

TYPE_CHECKING = (
    False  # start-up: heavy modules are imported in run() (generator/cli.py); mypy reads this as True
)
if TYPE_CHECKING:  # networkx takes a quarter second to import; only this command's run needs it
    import networkx as nx

    from generator.plan.model import Plan

ORDER = 16
PORT_LEVEL_MAX_LINKS = 50_000  # above this, export the device-level graph (a port graph would be huge)


def register(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "topology", "export the fabric graph (graphml, json, dot, svg)")
    add_blueprint(p)
    p.add_argument(
        "--fabric",
        default="compute",
        choices=["compute", "storage", "management", "all"],
        help="fabric to export, or all of them (default: compute)",
    )
    p.add_argument(
        "--level",
        choices=["port", "device"],
        default=None,
        help="port: every NIC/switch port is a vertex (default for small fabrics); device: devices only "
        "(svg always draws devices)",
    )
    add_common(
        p,
        formats=("graphml", "json", "dot", "svg"),
        default_format="json",
        format_help="graphml/json/dot: the graph for other tools; svg: a drawing",
    )
    p.set_defaults(func=run)


def graph_for(plan: Plan, fabric: str | None, level: str | None) -> nx.Graph:
    import networkx as nx

    n_links = len(plan.links if fabric is None else plan.links_of(fabric))
    if level == "port" or (level is None and n_links <= PORT_LEVEL_MAX_LINKS):
        return plan.port_graph(fabric)
    g = nx.Graph()
    mg = plan.device_graph(fabric)
    g.add_nodes_from(mg.nodes(data=True))
    for u, v, data in mg.edges(data=True):
        if g.has_edge(u, v):
            g[u][v]["cables"] += 1
        else:
            g.add_edge(u, v, cables=1, layer=data["layer"], speed_gbps=data["speed_gbps"])
    return g


def _dot(g: nx.Graph) -> str:
    def q(s: object) -> str:
        return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'

    lines = ["graph fabric {", "  node [shape=box, fontsize=9];"]
    for n, d in sorted(g.nodes(data=True), key=lambda t: str(t[0])):
        attrs = ", ".join(f"{k}={q(v)}" for k, v in sorted(d.items()))
        lines.append(f"  {q(n)} [{attrs}];")
    for u, v, d in sorted(g.edges(data=True), key=lambda t: (str(t[0]), str(t[1]))):
        attrs = ", ".join(f"{k}={q(val)}" for k, val in sorted(d.items()))
        lines.append(f"  {q(u)} -- {q(v)} [{attrs}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _svg(args: argparse.Namespace, plan: Plan, fabric: str | None) -> int:
    """The drawing: device level (each switch a box, nodes grouped by the switches they share), one
    fabric or all of them stacked; summarised above a size threshold, as the rack diagrams are."""
    from generator.emit.diagrams import stacked_svg, topology_svg

    if args.level == "port":
        err_console.print(
            "[bold red]topology[/]: --format svg draws devices (a port per vertex is unreadable); "
            "use --level device, or --format graphml/json/dot for the port-level graph"
        )
        return 2
    if fabric is None:
        write_text(stacked_svg(plan, sorted(plan.metrics)), args.output, replace=args.force)
    else:
        write_text(topology_svg(plan, fabric), args.output, replace=args.force)
    return 0


def run(args: argparse.Namespace) -> int:
    from generator.pipeline import load_and_resolve
    from generator.plan.build import plan_or_raise

    loaded, cluster = load_and_resolve(args.blueprint)
    # `topology bp -o bp` replaced the blueprint, `-o cat.yaml` its catalogue
    check_outputs([("-o", args.output)], blueprint_inputs("BLUEPRINT", loaded), force=args.force)
    plan = plan_or_raise(cluster, loaded.locate)
    fabric = None if args.fabric == "all" else args.fabric
    if fabric is not None and fabric not in plan.metrics:
        err_console.print(
            f"this blueprint has no built `{fabric}` fabric (has: "
            f"{', '.join(sorted(plan.metrics)) or 'none'})"
        )
        return 2
    if args.format == "svg":
        return _svg(args, plan, fabric)
    import networkx as nx

    g = graph_for(plan, fabric, args.level)
    if args.format == "graphml":
        buf = io.BytesIO()
        nx.write_graphml(g, buf)
        # networkx keeps controls
        write_text(xml_text(buf.getvalue().decode("utf-8")), args.output, replace=args.force)
    elif args.format == "json":
        data = nx.node_link_data(g, edges="links")
        write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", args.output, replace=args.force)
    else:
        write_text(_dot(g), args.output, replace=args.force)
    return 0
