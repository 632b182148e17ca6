"""`blueprint advise --params 70e9 --mode pretrain [--gpus 512]`: what to build, by the article's rules,
with the numbers behind each choice; `--write FILE` writes a starter blueprint that validates, and never
replaces an existing file unless --force is given."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from blueprints.starter import STARTER_GPU
from generator.commands._common import (
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
from generator.commands._run_options import whole_number
from generator.report import dumps, safe

TYPE_CHECKING = (
    False  # start-up: heavy modules are imported in run() (generator/cli.py); mypy reads this as True
)
if TYPE_CHECKING:
    from rich.console import Console

    from generator.perf.advice import Advice

ORDER = 25

# The option choices and bounds, written here so that registering the command (every `blueprint`
# start) does not import the advisor and its model; tests/cli/test_startup_imports.py checks that they
# equal generator.perf.advice's MODES, BUDGETS, PREFERENCES and advice_model's MAX_* bounds.
MODES = ("pretrain", "full-finetune", "lora", "qlora", "inference")
BUDGETS = ("high", "medium", "low", "minimal")
PREFERENCES = ("cost", "non-blocking")
MAX_PARAMS = 1e14  # Workload.params's bound: the starter blueprint must load
MAX_TOKENS = 1e16  # Workload.tokens's
MAX_TARGET_DAYS = 3650.0
# Workload.sequence_length's bounds (blueprints/models/workload.py): the starter blueprint --write makes
# must load, so a length its schema refuses is refused here, with exit 2, before any work.
MIN_SEQUENCE_LENGTH = 128
MAX_SEQUENCE_LENGTH = 10_000_000


def _bounded_float(limit: float) -> Callable[[str], float]:
    """A positive, finite number up to ``limit`` (advice_model's bounds, the same as --from-advice's)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"`{text}` is not a number (e.g. 70e9)") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"`{text}` must be positive")
        if not value <= limit:  # also refuses inf and nan
            raise argparse.ArgumentTypeError(f"`{text}` is larger than {limit:g}")
        return value

    return parse


# a model's parameters, as --params takes them here and in `blueprint init`
params_number = _bounded_float(MAX_PARAMS)


_sequence_length = whole_number(MIN_SEQUENCE_LENGTH, MAX_SEQUENCE_LENGTH, "tokens")  # the schema's bounds


def register(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "advise", "recommend GPUs, nodes, topology and fabric for a model (the article's rules)")
    p.add_argument("--params", type=params_number, required=True, help="model parameters, e.g. 70e9")
    p.add_argument("--mode", choices=MODES, default="pretrain", help="what the GPUs do (default: pretrain)")
    p.add_argument("--gpus", type=int, help="GPUs you plan to use (default: what memory and time need)")
    p.add_argument("--gpu", default=STARTER_GPU, help=f"GPU catalogue id (default {STARTER_GPU})")
    p.add_argument(
        "--budget", choices=BUDGETS, help="fabric budget (default: high for large scale, else medium)"
    )
    p.add_argument(
        "--prefer",
        choices=PREFERENCES,
        default="cost",
        help="between comparable topologies: fewest switches and cables, or most bandwidth",
    )
    p.add_argument(
        "--precision",
        choices=["fp32", "bf16", "fp16", "fp8", "int8", "int4"],
        help="number format of weights and compute (default: int4 for qlora, else bf16)",
    )
    p.add_argument(
        "--tokens",
        type=_bounded_float(MAX_TOKENS),
        help="training tokens (with --target-days sizes for time)",
    )
    p.add_argument("--target-days", type=_bounded_float(MAX_TARGET_DAYS), help="wanted training time in days")
    p.add_argument(
        "--sequence-length",
        type=_sequence_length,
        default=4096,
        help="tokens per sequence (default: %(default)s)",
    )
    p.add_argument("--name", help="name of the starter blueprint (default: from --write, else `starter`)")
    p.add_argument(
        "--write", metavar="FILE", type=file_name, help="write a starter blueprint that validates (a file)"
    )
    add_common(
        p,
        output_help="write the advice (text or JSON) to this file",
        force_help="replace the -o or --write file if it exists",
    )
    p.set_defaults(func=run)


def _write_refusal(target: str | None) -> str | None:
    """Why --write cannot write ``target``: an existing file, a symlink or what is not a regular file is
    refused by check_outputs (checked before any work)."""
    if target == "-":  # `-o -` is standard output; a starter is a file the next command reads
        return "--write needs a file name (the advice itself goes to standard output)"
    return None


def gpus_problem(gpus: int | None, gpu: str) -> str | None:
    """Why ``--gpus`` cannot be designed for (None: it can, or it is not given); `init` says it the same."""
    if gpus is None:
        return None
    if gpus < 1:
        return "--gpus must be at least 1"
    from generator.perf.advice_model import scale_problem

    scale = scale_problem(gpus, gpu)
    return None if scale is None else f"--gpus {gpus}: {scale}"


def _argument_problem(args: argparse.Namespace) -> str | None:
    return gpus_problem(args.gpus, args.gpu) or _write_refusal(args.write)


def run(args: argparse.Namespace) -> int:
    from rich.markup import escape

    from generator.perf.advice import AdviceError, Request
    from generator.perf.advisor import advise
    from generator.perf.system import PerfError

    # -o and --write the same file: the starter replaced the advice just written
    check_outputs([("-o", args.output), ("--write", args.write)], [], force=args.force)
    problem = _argument_problem(args)
    if problem is not None:
        err_console.print(f"[bold red]error[/]: {safe(problem)} (nothing written)")
        return 2
    name = args.name or (Path(args.write).stem if args.write else "starter")
    req = Request(
        params=args.params,
        mode=args.mode,
        gpus=args.gpus,
        gpu=args.gpu,
        budget=args.budget,
        prefer=args.prefer,
        precision=args.precision,
        tokens=args.tokens,
        target_days=args.target_days,
        sequence_length=args.sequence_length,
        name=name,
    )
    try:
        adv = advise(req)
    except (AdviceError, PerfError) as exc:
        err_console.print(f"[bold red]error[/]: {escape(str(exc))}")
        return 2
    if args.format == "json":
        write_text(dumps(adv.as_dict()), args.output, replace=args.force)
    else:
        with text_output(args.output, replace=args.force) as out:
            _render(adv, out)
    if args.write:
        errors = _write_starter(adv, args.write, replace=args.force)
        if errors:
            err_console.print(
                f"[bold red]starter blueprint does not validate[/] (not written): {escape('; '.join(errors))}"
            )
            return 1
        note(args, f"starter blueprint written to {args.write}")
    return 0


def _write_starter(adv: Advice, path: str, *, replace: bool) -> list[str]:
    """``--write``: the starter `init --from-advice` writes for this advice (settled, with its notes), or the
    errors that keep it from validating (nothing written)."""
    from generator.commands.init import scaffold  # late: init imports this module's helpers
    from generator.fsutil import atomic_write_text

    text, failed = scaffold(adv, "advise")
    if failed:
        return [f"{f.rule}: {f.message}" for f in failed]
    atomic_write_text(path, text if text.endswith("\n") else text + "\n", replace=replace)
    return []


def _render(adv: Advice, console: Console) -> None:
    from rich.markup import escape
    from rich.table import Table

    r = adv.request
    console.print(
        f"[bold]{r.params / 1e9:.3g}B parameters, {r.mode}[/]: {adv.gpus} × {adv.gpu_id} on "
        f"{adv.nodes} node(s) of {adv.server_id}" + (f", {adv.technology}" if adv.technology else "")
    )
    scopes = {"gpu": "one GPU", "node": "one multi-GPU node", "nodes": "several nodes"}
    console.print(
        f"  model size → {scopes[adv.article_scope]} (article); memory → {scopes[adv.memory_scope]} "
        f"({adv.memory_gb:,.0f} GB, at least {adv.memory_gpus} GPUs); so {scopes[adv.scope]}"
    )
    console.print(f"  topology: {escape(adv.topology_rule)}")
    if adv.technology:
        console.print(f"  fabric: budget `{adv.budget}` → {adv.technology}")
    for reason in adv.reasons:
        console.print(f"  - {escape(reason)}")
    if len(adv.options) > 1 or adv.nodes > 1:
        t = Table(
            title="compute fabric designs: counts, and busbw (GB/s) of 1 GiB collectives; spread = ranks "
            "scattered over the fabric",
            title_justify="left",
        )
        for col in (
            "design",
            "switches",
            "cables",
            "bisection (Gb/s)",
            "all_reduce",
            "spread",
            "alltoall",
            "",
        ):
            t.add_column(col, justify="left" if col in ("design", "") else "right")
        for i, o in enumerate(adv.options):
            mark = "← chosen" if i == adv.chosen else (escape(o.error or ""))
            t.add_row(
                escape(o.label),
                str(o.switches),
                str(o.cables),
                f"{o.bisection_gbps:,.0f}",
                f"{o.allreduce_busbw:.1f}",
                f"{o.allreduce_scattered_busbw:.1f}",
                f"{o.alltoall_busbw:.1f}",
                mark,
            )
        print_table(t, console)
    _render_training(adv, console)


def _render_training(adv: Advice, console: Console) -> None:
    st = adv.training
    if st is None or st.mode == "inference":
        return
    lay = st.layout
    console.print(
        f"  training step: TP {lay.tp} × PP {lay.pp} × DP {lay.dp}, {lay.memory_per_gpu_gb:.1f} of "
        f"{lay.gpu_memory_gb:g} GB per GPU; compute {st.compute_s:.2f} s, gradient sync "
        f"{st.sync_s:.3f} s ({st.overlapped_fraction:.0%} hidden, {st.exposed_share:.1%} of the step); "
        f"TP all-reduces {st.tp_s:.2f} s, pipeline sends {st.pp_s:.3f} s, bubble {st.bubble_s:.2f} s "
        "(the fastest fitting split on this fabric)"
        + (f"; whole run {st.train_days:.1f} days" if st.train_days is not None else "")
        + "".join(f"; {n}" for n in st.notes)
    )
