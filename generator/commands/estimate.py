"""`blueprint estimate FILE...`: predicted nccl-tests busbw per message size, the bottleneck of each row,
and the training step's gradient sync; several blueprints are compared side by side."""

from __future__ import annotations

import argparse

from generator.commands._common import (
    add_blueprint,
    add_common,
    check_outputs,
    command,
    err_console,
    file_name,
    note,
    print_table,
    text_output,
    write_text,
)
from generator.commands._run_options import add_run_options, positive, run_settings
from generator.report import dumps

TYPE_CHECKING = (
    False  # start-up: heavy modules are imported in run() (generator/cli.py); mypy reads this as True
)
if TYPE_CHECKING:
    from generator.perf.estimate import EstimateReport

ORDER = 20
DEFAULT_SIZES = "8..8G:8"
# The option choices, written here so that registering the command (every `blueprint` start) does not
# import the performance model; tests/cli/test_startup_imports.py checks that they equal
# generator.perf.collectives' COLLECTIVES and generator.perf.predict's PLACEMENTS (ALGORITHMS: _run_options).
COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast")
PLACEMENTS = ("packed", "scattered")


def escape(text: str) -> str:
    """Rich's markup escape, imported on use: Rich costs more start-up than the rest of the CLI."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def register(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "estimate", "predicted collective bandwidth (nccl-tests busbw) and training sync time")
    add_blueprint(
        p, many=True, help="blueprint YAML files; several are compared (- reads one from standard input)"
    )
    p.add_argument(
        "--collective",
        default="all_reduce",
        help=f"comma list of {', '.join(COLLECTIVES)}, or `all` (default all_reduce)",
    )
    p.add_argument(
        "--sizes",
        default=DEFAULT_SIZES,
        help="message sizes: 1M..8G (doubling), 8..8G:8 (factor 8) or 1M,64M,1G (default %(default)s)",
    )
    p.add_argument("--nodes", type=positive, help="nodes taking part (default: every node of the GPU pool)")
    p.add_argument("--pool", help="GPU pool to run on (default: the one with the most GPUs)")
    p.add_argument(
        "--placement",
        choices=PLACEMENTS,
        default="packed",
        help="packed: ranks in leaf order (topology-aware scheduler); scattered: spread over the fabric",
    )
    add_run_options(p)
    p.add_argument(
        "--plot", metavar="FILE", type=file_name, help="write busbw vs message size to this .svg or .png"
    )
    p.add_argument(
        "--calibration",
        metavar="FILE",
        type=file_name,
        help="apply a site calibration (from `acceptance-report --calibrate`) to the predictions; one "
        "blueprint only",
    )
    add_common(p, output_help="write the table or JSON to this file")
    p.set_defaults(func=run)


def _collectives(text: str) -> list[str]:
    from generator.perf.system import PerfError

    out = [c.strip() for c in text.split(",") if c.strip()]
    for c in out:
        if c not in COLLECTIVES and c != "all":
            import difflib

            close = difflib.get_close_matches(c, COLLECTIVES, n=1)
            raise PerfError(
                f"unknown collective `{c}`"
                + (f"; did you mean `{close[0]}`?" if close else "")
                + f" (known: {', '.join(COLLECTIVES)}, all)"
            )
    if not out:
        raise PerfError("no collective given")
    if "all" in out:  # `all` stands for every collective, named with others or not (each name checked)
        return list(COLLECTIVES)
    return list(dict.fromkeys(out))


def _reports(args: argparse.Namespace, inputs: list[tuple[str, str | None]]) -> list[EstimateReport]:
    """Each blueprint's estimate; the files each was read from (its catalogue too) are added to ``inputs``."""
    from dataclasses import replace

    from generator.commands._common import blueprint_inputs
    from generator.perf.estimate import build_report
    from generator.perf.sizes import parse_sizes
    from generator.pipeline import check
    from generator.plan.build import plan_or_raise

    collectives = _collectives(args.collective)
    sizes = parse_sizes(args.sizes)
    settings = run_settings(args)
    reports: list[EstimateReport] = []
    for file in args.blueprint:
        # the rules too, so that an estimate never passes over what `validate` refuses (a GPU's NVLink
        # contradicted, a NIC speed the adapter cannot run): said with the numbers, which take the file as
        # written (deployment rules such as a missing subnet manager do not change them)
        checked = check(file)
        inputs += blueprint_inputs("a blueprint", checked.loaded)
        plan = checked.context.plan or plan_or_raise(checked.cluster, checked.loaded.locate)
        report = build_report(
            file,
            checked.cluster,
            plan,
            collectives,
            sizes,
            nodes=args.nodes,
            pool=args.pool,
            placement=args.placement,
            settings=settings,
        )
        reports.append(replace(report, validation_errors=tuple(checked.errors)))
    return reports


def _calibrated(report: EstimateReport, file: str) -> tuple[EstimateReport, dict[str, object]]:
    """The report with the site factors applied to its collectives' series, and what was applied (a
    collective without a factor for its regime and node band keeps the model's numbers: None)."""
    from dataclasses import replace

    from generator.perf.calibration import apply_to_series, read_calibration
    from generator.perf.system import nccl_release

    cal = read_calibration(
        file, report.system.name, pool=report.system.pool, gpu=report.system.gpu_id, system=report.system
    )
    series = {}
    factors: dict[str, float | None] = {}
    for coll, rows in report.series.items():
        series[coll], entry = apply_to_series(cal, report.system, coll, rows, report.nodes, report.settings)
        factors[coll] = entry.factor if entry else None
    measured_with = cal.data.nccl_version
    # a factor is measured / predicted for the NCCL the runs used; another release (major.minor: patch
    # releases keep the tuner) runs, and is modelled, differently: said, not refused (the site may know)
    other = nccl_release(measured_with) != report.system.nccl_release
    site = {"file": cal.file, "factors": factors, "nccl_version": measured_with, "other_nccl_release": other}
    return replace(report, series=series), site


def run(args: argparse.Namespace) -> int:
    from generator import __version__
    from generator.fsutil import OutputRefused
    from generator.perf.plots import PlotError, check_plot_path, plot_collectives, plot_comparison
    from generator.perf.sizes import SizeError
    from generator.perf.system import PerfError

    site: dict[str, object] | None = None
    try:
        if args.calibration and len(args.blueprint) > 1:
            raise PerfError("--calibration belongs to one blueprint's site: give one blueprint")
        if args.calibration == "-" and "-" in args.blueprint:
            raise PerfError("standard input is given twice (the blueprint and --calibration): name one file")
        if args.plot:
            check_plot_path(args.plot)
        outputs = [("--plot", args.plot), ("-o", args.output)]
        inputs = [("a blueprint", b) for b in args.blueprint] + [("--calibration", args.calibration)]
        check_outputs(outputs, inputs, force=args.force)  # an existing file: refused before any reading
        reports = _reports(args, inputs)
        # the catalogue files the blueprints name are known once read: `-o cat.yaml` replaced one
        check_outputs(outputs, inputs, force=args.force)
        if args.calibration:
            reports[0], site = _calibrated(reports[0], args.calibration)
        if args.plot:
            if len(reports) == 1:
                r = reports[0]
                title = f"{r.system.name}: {r.ranks} GPUs on {r.nodes} nodes ({r.placement})"
                plot_collectives(r.series, title, args.plot, replace=args.force)
            else:
                plot_comparison(
                    {f"{r.system.name}": r.series for r in reports}, args.plot, replace=args.force
                )
    except (PerfError, SizeError, PlotError) as exc:
        err_console.print(f"[bold red]error[/]: {escape(str(exc))}")
        return 2
    except OutputRefused as exc:
        err_console.print(f"[bold red]error[/]: {escape(str(exc))} (nothing written)")
        return 2
    if args.format == "json":
        docs = [r.as_dict() for r in reports]
        if site is not None:
            docs[0]["site_calibration"] = site
        write_text(dumps({"version": __version__, "blueprints": docs}), args.output, replace=args.force)
    else:
        with text_output(args.output, replace=args.force) as out:
            if site is not None:
                _render_site(site, out)
            _render(reports, out)
    if args.plot:
        note(args, f"plot written to {args.plot}")
    return 0


def _render_site(site: dict[str, object], out) -> None:  # type: ignore[no-untyped-def]
    from generator.safetext import one_line, terminal

    factors = site["factors"]
    assert isinstance(factors, dict)
    applied = ", ".join(
        f"{c} ×{f:g}" if f is not None else f"{c} none (model as is)" for c, f in factors.items()
    )
    out.print(
        f"site calibration applied from {escape(one_line(terminal(str(site['file']))))}: {escape(applied)} "
        "(bandwidth term only; the training step is not calibrated)"
    )
    if site.get("other_nccl_release"):
        measured = escape(one_line(terminal(str(site["nccl_version"])))[:64])
        out.print(
            f"[yellow]warning[/]: the factors were measured with NCCL {measured}, this estimate is for "
            "another release (its tuner differs): recalibrate with runs of this release"
        )


def _render(reports: list[EstimateReport], out) -> None:  # type: ignore[no-untyped-def]
    for r in reports:
        _render_one(r, out)
    if len(reports) > 1:
        _render_comparison(reports, out)


def _render_one(r: EstimateReport, out) -> None:  # type: ignore[no-untyped-def]
    from rich.table import Table

    from generator.perf.sizes import format_size

    s = r.system
    out.print(
        f"[bold]{escape(s.name)}[/] ({escape(r.file)}): pool `{s.pool}`, {s.pool_nodes} × {s.gpus_per_node} "
        f"{escape(s.gpu.name)}; collectives over {r.nodes} nodes = {r.ranks} GPUs, placement {r.placement}"
    )
    if r.settings.describe():
        out.print(f"  run settings  : {escape(r.settings.describe())}")
    if s.intra:
        out.print(
            f"  inside a node : {s.intra.gbytes:.1f} GB/s per GPU — {escape(s.intra.describe())}"
            + ("; NVLS" if s.nvls else "")
        )
    if s.net:
        fabric = f"{s.technology}" + (f" {s.topology}" if s.topology else "")
        out.print(
            f"  network       : {s.net.gbytes:.1f} GB/s per node — {escape(s.net.describe())} on "
            f"{escape(fabric)}; "
            f"{s.net_latency_us:.2f} µs per traversal" + ("; IB SHARP" if s.sharp else "")
        )
    if r.bisection_gbps is not None:
        out.print(_fabric_line(r))
    for remark in s.notes:
        out.print(f"  note: {escape(remark)}")
    if r.validation_errors:
        out.print(
            f"  [bold yellow]warning[/]: `blueprint validate` finds {len(r.validation_errors)} error(s); the "
            "estimate takes the blueprint as written"
        )
        for f in r.validation_errors:
            out.print(f"    {escape(str(f.location or f.rule))}: {f.rule} {escape(f.message)}")
    for coll, rows in r.series.items():
        t = Table(title=f"{coll} — {r.ranks} GPUs", title_justify="left")
        for col in ("size", "time (µs)", "algbw (GB/s)", "busbw (GB/s)", "algorithm", "bottleneck"):
            t.add_column(
                col, justify="right" if col not in ("algorithm", "bottleneck") else "left", no_wrap=True
            )
        for row in rows:
            t.add_row(
                format_size(row.size_bytes),
                f"{row.time_s * 1e6:.1f}",
                f"{row.algbw_gbytes:.2f}",
                f"{row.busbw_gbytes:.2f}",
                f"{row.algorithm}/{row.protocol}",
                escape(row.bottleneck),
            )
        print_table(t, out)
    if r.training_error:
        out.print(f"  training step: {escape(r.training_error)}")
    elif r.training:
        _render_training(r, out)
    out.print("")


def _fabric_line(r: EstimateReport) -> str:
    """The fabric's bisection and oversubscription, and what it allows a node's spread traffic (alltoall):
    with PXN and, on a rail-optimised fabric, without it (each GPU through its own NIC: --no-pxn, or no
    NVLink)."""
    s = r.system
    over = ", ".join(f"{k} {v:g}:1" for k, v in r.oversubscription.items()) or "n/a"
    spread = (
        (
            f"; traffic spread over the fabric: {s.fabric.limit.gbytes:.1f} GB/s per node "
            f"({escape(s.fabric.limit.describe())})"
        )
        if s.fabric
        else ""
    )
    if s.rail_crossing is not None:
        spread += f"; without PXN: {s.rail_crossing.gbytes:.1f} GB/s per node"
    return f"  fabric        : bisection {r.bisection_gbps:g} Gb/s, oversubscription {over}{spread}"


def _render_training(r: EstimateReport, out) -> None:  # type: ignore[no-untyped-def]
    st = r.training
    assert st is not None
    wl_line = f"workload ({st.mode})"
    lay = st.layout
    fit = "fits" if lay.fits else "[red]does not fit[/]"
    src = "given" if lay.given else "chosen"
    chunks = f", {lay.virtual_stages} virtual stages" if lay.virtual_stages > 1 else ""
    out.print(
        f"[bold]{wl_line}[/]: TP {lay.tp} × PP {lay.pp} × DP {lay.dp}{chunks} ({src}); "
        f"{lay.memory_per_gpu_gb:.1f} of {lay.gpu_memory_gb:g} GB per GPU — {fit}"
    )
    if st.mode == "inference":
        return
    out.print(
        f"  compute {st.compute_s:.3f} s per step of {st.tokens_per_step:,.0f} tokens "
        f"({st.micro_batches} micro-batches per DP rank)" + "".join(f"; {n}" for n in st.notes)
    )
    if st.sync is None:
        out.print("  one data-parallel rank: no gradient all_reduce")
    else:
        sy = st.sync
        out.print(
            f"  gradient all_reduce of {st.grad_bytes / 1e9:.2f} GB per rank over {lay.dp} ranks: "
            f"{sy.time_s:.3f} s ({sy.algorithm}, busbw {sy.busbw_gbytes:.1f} GB/s; {escape(sy.bottleneck)})"
        )
        out.print(
            f"  {st.overlapped_fraction:.0%} hidden behind the last micro-batch's backward "
            f"({st.window_s:.3f} s); {st.exposed_s:.3f} s exposed = {st.exposed_share:.1%} of the "
            f"{st.step_s:.3f} s step"
        )
    if st.tp_s or st.pp_s or st.bubble_s:
        out.print(
            f"  model parallel: tensor-parallel all-reduces {st.tp_s:.3f} s, pipeline sends {st.pp_s:.3f} s, "
            f"pipeline bubble {st.bubble_s:.3f} s"
            + (f"; {lay.sharding} sharding" if lay.sharding != "none" else "")
        )
    out.print(f"  step {st.step_s:.3f} s: {st.model_flops_utilization:.0%} model FLOPs utilisation")
    if st.train_days is not None:
        target = f" (target {st.target_days:g})" if st.target_days else ""
        out.print(f"  whole run: {st.train_days:.1f} days{target}")


def _render_comparison(reports: list[EstimateReport], out) -> None:  # type: ignore[no-untyped-def]
    from rich.table import Table

    colls = list(reports[0].series)
    t = Table(title="fabric comparison (largest message size)", title_justify="left")
    t.add_column("blueprint")
    t.add_column("GPUs", justify="right")
    for c in colls:
        t.add_column(f"{c} busbw", justify="right")
    t.add_column("bottleneck (first collective)")
    for r in reports:
        last = {c: rows[-1] for c, rows in r.series.items()}
        t.add_row(
            escape(r.system.name),
            str(r.ranks),
            *(f"{last[c].busbw_gbytes:.1f}" for c in colls),
            escape(last[colls[0]].bottleneck),
        )
    print_table(t, out)
