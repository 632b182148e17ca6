"""`blueprint acceptance-report FILE --results DIR`: the acceptance run's nccl-tests results vs the model.

Reads every nccl-tests output under DIR (standard text output or the ``-J`` JSON file), predicts each run's
shape on the planned cluster (nodes, ranks per node, one rail or all), and reports per run, node, rail and
collective the measured and predicted bus bandwidth. Runs below the threshold name the suspects — a
(node, rail) link, a node, a rail or a leaf switch whose every run was low — with their cabling-plan rows
(cable ids and both ends). A multi-node run whose NCCL_DEBUG=INFO output shows NCCL used TCP sockets on an
RDMA fabric, or connections without GPUDirect RDMA, is marked TRANSPORT at the line that shows it and names
no suspect; one whose NCCL listed a host's ports without a planned compute port (down, or left out by
NCCL_IB_HCA), or with one in the other link layer, is marked PORTS with that port's cable. A run whose
nccl-tests data check failed (`#wrong` above 0, `Out of bounds values : N FAILED`) or that stopped on an NCCL
or CUDA failure is marked FAILED at that line and names no suspect either. A run whose shape the model
does not predict (some of the rails by NCCL_IB_HCA, a rail or more hosts than the plan has) is an ERROR row.
Exit 0 = every run reaches the threshold, 1 = some runs are low or marked, 2 = unusable input.

The results are foreign input: all files together are read against one byte budget, every value is
checked (generator.perf.results_model), and every string taken from them (file names, host names) is shown
without control characters, so a file cannot forge a line of the report or drive the terminal.
"""

from __future__ import annotations

import argparse
from collections import defaultdict

from generator.commands._common import (
    add_blueprint,
    add_common,
    blueprint_inputs,
    check_outputs,
    command,
    err_console,
    file_name,
    note,
    write_text,
)
from generator.report import dumps, safe
from generator.safetext import one_line, terminal

TYPE_CHECKING = (
    False  # start-up: heavy modules are imported in run() (generator/cli.py); mypy reads this as True
)
if TYPE_CHECKING:
    from generator.perf.acceptance import AcceptanceReport, RunResult
    from generator.perf.system import System
    from generator.resolve.model import ResolvedCluster

ORDER = 22


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "acceptance-report",
        "measured (nccl-tests) vs predicted bus bandwidth per node, rail and collective; names "
        "suspect cables",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
    )
    add_blueprint(p, help="blueprint YAML file the cluster was built from (- reads it from standard input)")
    p.add_argument(
        "--results",
        required=True,
        metavar="DIR",
        help="directory of nccl-tests outputs (*.txt, *.log, *.out text; *.json from `-J`); a file name with "
        "rail<N> or mlx5_<N> marks a one-rail run",
    )
    p.add_argument("--pool", help="GPU pool the runs used (default: the one with the most GPUs)")
    p.add_argument(
        "--threshold",
        type=float,
        help="flag runs below this share of the prediction (default: perf.yaml policy.acceptance_ratio)",
    )
    p.add_argument(
        "--plot",
        type=file_name,
        help="write measured vs predicted busbw by message size to this .svg or .png",
    )
    p.add_argument(
        "--calibrate",
        nargs="?",
        const=True,  # no FILE: the default path (a str const would be parsed by `type`)
        type=file_name,
        metavar="FILE",
        help="write a site calibration (measured/predicted at 1 GiB and up, per collective, regime and node "
        "band) to FILE (default: <blueprint stem>.calibration.yaml beside the blueprint)",
    )
    p.add_argument(
        "--calibration",
        type=file_name,
        metavar="FILE",
        help="compare against predictions carrying this site calibration (from --calibrate)",
    )
    add_common(
        p,
        output_help="write the report to this file instead of standard output",
        force_help="replace the -o, --plot or --calibrate file if it exists",
    )
    p.set_defaults(func=run)


def _fail(message: str) -> int:
    err_console.print(f"[bold red]acceptance-report[/]: {safe(message)}", highlight=False, markup=True)
    return 2


def _plot_labels(results: list[RunResult]) -> list[RunResult]:
    """The runs with file names shown as written, control characters dropped (generator.perf.plots
    escapes the `$` Matplotlib would read as mathtext)."""
    from dataclasses import replace

    return [replace(res, run=replace(res.run, path=_shown(res.run.path))) for res in results]


def _calibration_target(args: argparse.Namespace) -> str | None:
    """Where --calibrate writes (None: not asked); CalibrationError when it cannot be asked so."""
    from generator.perf.calibration import CalibrationError, default_path

    if args.calibrate is None:
        return None
    if args.calibration:
        raise CalibrationError("--calibrate compares with the uncalibrated model: drop --calibration")
    if args.calibrate == "-":  # -o - is standard output; a calibration is a file estimates read back
        raise CalibrationError("--calibrate -: give a file name (the calibration is read back by estimate)")
    if args.calibrate is not True:
        return str(args.calibrate)
    if str(args.blueprint) == "-":
        raise CalibrationError(
            "--calibrate with a blueprint on standard input: name the file (--calibrate FILE)"
        )
    return str(default_path(args.blueprint))


def _compare(args: argparse.Namespace, target: str | None) -> AcceptanceReport:
    """Read, predict and compare; with --calibrate also write the calibration file (whole or not at all)."""
    from generator.foreign import ByteBudget
    from generator.perf.acceptance import compare
    from generator.perf.calibration import calibrate, read_calibration, write_calibration
    from generator.perf.nccl_results import read_results
    from generator.perf.system import system_for
    from generator.pipeline import load_and_resolve
    from generator.plan.build import plan_or_raise

    budget = ByteBudget()  # one budget for every foreign file of this run
    runs, ignored = read_results(args.results, budget)
    loaded, cluster = load_and_resolve(args.blueprint)
    # nor the catalogue file the blueprint names, known once read (`-o cat.yaml` replaced it)
    outputs = [("--calibrate", target), ("--plot", args.plot), ("-o", args.output)]
    check_outputs(outputs, blueprint_inputs("the blueprint", loaded), force=args.force)
    plan = plan_or_raise(cluster, loaded.locate)
    system = system_for(cluster, plan, args.pool)
    site = (
        read_calibration(args.calibration, system.name, budget, system.pool, system.gpu_id, system)
        if args.calibration
        else None
    )

    def system_of(nvlink: bool, nccl_version: str | None) -> System:
        # the system as a run saw it, as `blueprint estimate --no-nvlink --nccl-version` builds it
        return system_for(cluster, plan, args.pool, nvlink=nvlink, nccl_version=nccl_version)

    report = compare(
        str(args.blueprint),
        system,
        plan,
        runs,
        threshold=args.threshold,
        ignored=ignored,
        calibration=site,
        system_of=system_of,
        named_ports=_named_compute_ports(cluster),
    )
    if target is not None:
        cal, skipped = calibrate(report, system, args.results)
        write_calibration(target, cal, args.force)
        for line in skipped:
            note(args, f"not used for the calibration: {_shown(line)}")
        factors = ", ".join(f"{f.label()} x{f.factor:g}" for f in cal.factors)
        note(args, f"calibration written to {_shown(target)}: {_shown(factors)}")
    return report


def _named_compute_ports(cluster: ResolvedCluster) -> dict[str, frozenset[str]]:
    """Per pool, the compute ports (``mlx5_0/1``) whose RDMA device names are the hosts' own (published or
    declared), which acceptance-report holds NCCL's port lists to; placeholder names are left out."""
    return {
        pool.name: frozenset(p.plan_port for p in pool.ports if p.purpose == "compute" and p.rdma_known)
        for pool in cluster.pools
    }


def run(args: argparse.Namespace) -> int:
    from generator import __version__
    from generator.fsutil import OutputRefused
    from generator.perf.calibration import CalibrationError
    from generator.perf.nccl_results import ResultsError, result_files
    from generator.perf.plots import PlotError, check_plot_path, plot_measured_vs_predicted
    from generator.perf.system import PerfError

    if args.threshold is not None and not 0 < args.threshold <= 1:
        return _fail(f"--threshold {args.threshold}: give a share of the prediction in (0, 1]")
    try:
        target = _calibration_target(args)
        if args.plot:
            check_plot_path(args.plot)
        check_outputs(
            [("--calibrate", target), ("--plot", args.plot), ("-o", args.output)],
            [
                ("the blueprint", args.blueprint),
                ("--calibration", args.calibration),
                *(("a --results file", str(p)) for p in result_files(args.results)),
            ],
            force=args.force,  # an existing file: refused before reading; the catalogue file: _compare
        )
        report = _compare(args, target)
        if args.plot:
            plot_measured_vs_predicted(_plot_labels(report.results), args.plot, replace=args.force)
    except (ResultsError, PerfError, PlotError, CalibrationError) as exc:
        return _fail(str(exc))
    except OutputRefused as exc:
        return _fail(f"{exc} (nothing written)")
    if args.format == "json":
        write_text(dumps({"version": __version__, **report.as_dict()}), args.output, replace=args.force)
    else:
        write_text(to_text(report), args.output, replace=args.force)
    if args.output not in (None, "-"):
        note(args, f"report written to {args.output}")
    if args.plot:
        note(args, f"plot written to {args.plot}")
    return 0 if report.clean else 1


# ---- text ---------------------------------------------------------------------------------------


def _shown(text: object) -> str:
    """A string from a results file (or the command line) as one line of plain text: no escape sequence,
    no control character, no line break, no byte of a file name that is not UTF-8 (the report is plain text,
    so no Rich markup escaping)."""
    from generator.foreign import path_text

    return one_line(terminal(path_text(str(text))))


def _run_lines(report: AcceptanceReport) -> list[str]:
    head = (
        f"{'run':<44} {'collective':<14} {'nodes':>5} {'ranks':>5} {'rail':>4} "
        f"{'measured':>9} {'predicted':>9} {'ratio':>6}  status"
    )
    lines = [head, "-" * len(head)]
    for res in sorted(
        report.results, key=lambda r: (not (r.low or r.unusable), r.run.collective, r.run.path)
    ):
        r = res.run
        rail = "all" if r.rail is None else str(r.rail)
        if res.error:
            status = "ERROR " + _shown(res.error)
        elif res.failed:
            status = "FAILED " + _shown(res.failed)
        elif res.transport:
            status = "TRANSPORT " + _shown(res.transport)
            if res.ports:
                status += "; PORTS " + _shown(res.ports)
        elif res.ports:
            status = "PORTS " + _shown(res.ports)
        else:
            status = "LOW" if res.low else "ok"
        env = r.settings.text()
        if env and not res.error:  # the run's own settings, which the prediction follows
            status += f" ({_shown(env)})"
        lines.append(
            f"{_shown(r.name)[:44]:<44} {r.collective:<14} {r.nodes:>5} {r.ranks:>5} {rail:>4} "
            f"{res.measured:>9.1f} {res.predicted:>9.1f} {res.ratio:>6.0%}  {status}"
        )
    return lines


def _group_lines(report: AcceptanceReport) -> list[str]:
    """Per collective, per node and per rail: how many runs were low, and the worst ratio."""
    groups: dict[str, list[float]] = defaultdict(list)
    lows: dict[str, int] = defaultdict(int)
    for res in report.results:
        if res.unusable:
            continue
        keys = [f"collective {res.run.collective}", *(f"node {h}" for h in res.run.hosts)]
        keys.append(f"rail {res.run.rail}" if res.run.rail is not None else "rail all")
        for key in keys:
            groups[key].append(res.ratio)
            lows[key] += int(res.low)
    lines = ["", "per collective, node and rail (runs, low runs, worst measured/predicted):"]
    for key in sorted(groups):
        worst = min(groups[key])
        lines.append(f"  {_shown(key):<30} {len(groups[key]):>3} runs, {lows[key]:>3} low, worst {worst:.0%}")
    return lines


def _suspect_lines(report: AcceptanceReport) -> list[str]:
    if report.cluster_wide:
        return [
            "",
            "every run is below the threshold: a cluster-wide cause (NCCL settings, firmware, PCIe/ACS, "
            "GPUDirect "
            "RDMA), not one cable — check `nccl.env`, `nvidia-peermem` and the NIC firmware first.",
        ]
    if not report.suspects:
        return []
    lines = ["", "suspects (every run that touched them was low), with their cabling-plan rows:"]
    for s in report.suspects:
        what = {
            "link": "cable/port",
            "node": "node (all its runs low; single-node runs point inside it: GPUs, NVLink)",
            "rail": "rail (every node on it low)",
            "switch": "leaf switch (every link through it low)",
        }[s.kind]
        lines.append(f"  {s.kind} {_shown(s.name)}: {what}, {s.low_runs} low run(s)")
        for c in s.cables[:16]:
            lines.append(f"      {c.id}: {c.node} {c.node_port} <-> {c.switch} port {c.switch_port}")
        if len(s.cables) > 16:
            lines.append(f"      ... {len(s.cables) - 16} more cables")
    return lines


def _port_lines(report: AcceptanceReport) -> list[str]:
    """Each planned compute port a run's NCCL did not list (or listed in the other link layer), once."""
    ports = report.port_reports
    if not ports:
        return []
    lines = ["", "ports NCCL did not find (or found in the other link layer), with their cabling-plan rows:"]
    for entry in ports:
        p, c = entry.problem, entry.problem.cable
        state = "not listed" if p.listed_as is None else f"listed as {p.listed_as}"
        lines.append(
            f"  {_shown(p.host)} rail {p.rail} port {_shown(p.device)}:{p.port}: {state} in "
            f"{len(entry.runs)} run(s), first at {_shown(p.at)}"
        )
        lines.append(f"      {c.id}: {c.node} {c.node_port} <-> {c.switch} port {c.switch_port}")
    return lines


def _size_lines(report: AcceptanceReport) -> list[str]:
    from generator.perf.sizes import format_size

    lines = []
    for res in report.results:
        if not res.low:
            continue
        lines += ["", f"{_shown(res.run.name)} ({res.run.collective}) by message size:"]
        for s in res.sizes:
            lines.append(
                f"  {format_size(s.size_bytes):>8}  measured {s.measured:>8.2f}  predicted "
                f"{s.predicted:>8.2f} "
                f"({s.algorithm})  {s.ratio:>5.0%}"
            )
    return lines


def _calibration_release_lines(report: AcceptanceReport) -> list[str]:
    """The calibration's factors applied to runs of another NCCL release, said as `estimate` says it."""
    if not report.calibration_other_releases:
        return []
    others = ", ".join(_shown(v) for v in report.calibration_other_releases[:4])
    return [
        f"warning: its factors were measured with NCCL {_shown(str(report.calibration_nccl))}, and runs of "
        f"NCCL {others} took them (another release's tuner differs): recalibrate with runs of that release"
    ]


def to_text(report: AcceptanceReport) -> str:
    low = sum(1 for r in report.results if r.low)
    lines = [
        f"acceptance report for {_shown(report.blueprint)}: {len(report.results)} runs, {low} below "
        f"{report.threshold:.0%} of the predicted bus bandwidth (GB/s, bandwidth-bound sizes)",
        *(
            [f"site calibration applied to the predictions: {_shown(report.calibration)}"]
            if report.calibration
            else []
        ),
        *_calibration_release_lines(report),
        "",
        *_run_lines(report),
        *_group_lines(report),
        *_suspect_lines(report),
        *_port_lines(report),
        *_size_lines(report),
    ]
    if report.unknown_hosts:
        away = sum(1 for r in report.results if r.unplanned)
        lines += [
            "",
            f"{away} of {len(report.results)} run(s) ran on hosts not in the plan: they say nothing of its "
            "cables and calibrate nothing",
        ]
        hosts = ", ".join(_shown(h) for h in report.unknown_hosts) + (
            f" and {report.unknown_hosts_more:,} more" if report.unknown_hosts_more else ""
        )
        lines += ["", "hosts not in the plan (no cables to point to): " + hosts]
    if report.ignored:
        not_compared = ", ".join(_shown(f) for f in report.ignored)
        lines += ["", "not compared (no result of a collective the model predicts): " + not_compared]
    return "\n".join(lines) + "\n"
