"""`blueprint init`: scaffold a blueprint that validates, from a few answers, from `advise`, or by asking.

The design is `blueprint advise`'s (the article's selection rules): init only gathers the answers,
so a scaffold and an advice for the same answers are the same blueprint. The file is checked with
`validate` before it is written, and an existing file is never replaced unless --force is given.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from generator.commands._common import add_common, command, err_console, note, write_text
from generator.commands.advise import MODES  # the advisor's modes, without importing the advisor
from generator.report import safe

TYPE_CHECKING = (
    False  # start-up: heavy modules are imported in run() (generator/cli.py); mypy reads this as True
)
if TYPE_CHECKING:
    from generator.perf.advisor import Request

ORDER = 4
DEFAULT_FILE = "blueprint.yaml"
# editors find the schema through this line; `blueprint schema -o blueprint.schema.json` writes the file
SCHEMA_LINE = (
    "# yaml-language-server: $schema=blueprint.schema.json\n"
    "# (editor help: write the schema beside this file with `blueprint schema -o blueprint.schema.json`)"
)


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "init",
        "scaffold a blueprint that validates (from a few answers, from `advise`, or interactively)",
        description="Scaffold a blueprint that validates. Answer with options (--params and optionally "
        "--gpus, --gpu, --mode, --name), reuse an `advise --format json` result with --from-advice, or "
        "answer questions with --interactive (the default when no answer is given and standard input "
        "is a terminal). The design is the one `blueprint advise` recommends.",
    )
    p.add_argument("--name", help="cluster name (default: from the file name)")
    p.add_argument("--params", type=float, help="model parameters the cluster is for, e.g. 70e9")
    p.add_argument("--mode", choices=MODES, default="pretrain", help="what the GPUs do (default: pretrain)")
    p.add_argument("--gpus", type=int, help="GPUs in the cluster (default: what the model needs)")
    p.add_argument(
        "--gpu", default="h100-sxm", help="GPU catalogue id (default: h100-sxm; `blueprint catalog gpus`)"
    )
    p.add_argument(
        "--from-advice",
        metavar="FILE",
        help="the JSON of `blueprint advise --format json` (- for standard input): scaffold its design",
    )
    p.add_argument("-i", "--interactive", action="store_true", help="ask for each answer, with defaults")
    p.add_argument("--force", action="store_true", help="replace the output file if it exists")
    add_common(
        p,
        formats=("yaml",),
        default_format="yaml",
        format_help="blueprint format",
        output_help=f"file to write (default: {DEFAULT_FILE}; - for standard output)",
        output_default=DEFAULT_FILE,
    )
    p.set_defaults(func=run)


def _ask(prompt: str, default: str, parse: Callable[[str], Any], read: Callable[[], str]) -> Any:
    while True:
        err_console.print(safe(f"{prompt} [{default}]: "), end="")
        answer = read().strip() or default
        try:
            return parse(answer)
        except ValueError as exc:
            err_console.print(f"  not understood ({safe(str(exc))}); try again")


def _interactive(args: argparse.Namespace) -> Request:
    from generator.perf.advisor import Request

    def read() -> str:
        line = sys.stdin.readline()
        if not line:
            raise EOFError
        return line

    def mode(text: str) -> str:
        if text not in MODES:
            raise ValueError(f"one of {', '.join(MODES)}")
        return text

    def gpus(text: str) -> int | None:
        return None if text in ("", "auto") else int(text)

    name = _ask("cluster name", args.name or _name_from(args.output), str, read)
    params = _ask("model parameters", f"{args.params or 7e9:g}", float, read)
    return Request(
        params=params,
        mode=_ask(f"mode ({', '.join(MODES)})", args.mode, mode, read),
        gpus=_ask("GPUs (a number, or auto: what the model needs)", str(args.gpus or "auto"), gpus, read),
        gpu=_ask("GPU (catalogue id)", args.gpu, str, read),
        name=name,
    )


def _name_from(output: str | None) -> str:
    return "my-cluster" if output in (None, "-") else Path(output).stem


def _request(args: argparse.Namespace) -> Request | str:
    """The answers as an advisor request, or why there are none."""
    from generator.foreign import ByteBudget
    from generator.perf.advice_model import read_advice
    from generator.perf.advisor import Request

    name = args.name or _name_from(args.output)
    if args.from_advice:
        # a foreign file: bounded, regular, checked against advice_model; a refusal (ForeignInputError) is
        # printed by the CLI at its JSON path with exit 2
        return read_advice(args.from_advice, name, ByteBudget())
    if args.interactive or (args.params is None and sys.stdin.isatty()):
        try:
            return _interactive(args)
        except EOFError:
            return "no answer (end of input)"
    if args.params is None:
        return "give --params (and optionally --gpus, --gpu, --mode), --from-advice FILE, or --interactive"
    return Request(params=args.params, mode=args.mode, gpus=args.gpus, gpu=args.gpu, name=name)


def run(args: argparse.Namespace) -> int:
    from generator.perf.advisor import AdviceError, advise, starter_yaml
    from generator.perf.system import PerfError

    if args.output not in (None, "-") and Path(args.output).exists() and not args.force:
        err_console.print(f"[bold red]init[/]: {safe(args.output)} exists; choose another -o or add --force")
        return 2
    req = _request(args)
    if isinstance(req, str):
        err_console.print(f"[bold red]init[/]: {safe(req)}")
        return 2
    if req.gpus is not None and req.gpus < 1:
        err_console.print("[bold red]init[/]: --gpus must be at least 1")
        return 2
    try:
        adv = advise(req)
    except (AdviceError, PerfError) as exc:
        err_console.print(f"[bold red]init[/]: {safe(str(exc))}")
        return 2
    text = (
        SCHEMA_LINE
        + "\n"
        + starter_yaml(adv).replace("written by `blueprint advise`", "written by `blueprint init`")
    )
    errors = _validate(text)
    if errors:  # the advisor promises a valid starter; say so loudly if it is not
        err_console.print(
            f"[bold red]init[/]: the scaffold does not validate (not written): {safe('; '.join(errors))}"
        )
        return 3
    write_text(text if text.endswith("\n") else text + "\n", args.output)
    if args.output not in (None, "-"):
        note(
            args,
            f"wrote {args.output}: {adv.gpus} × {adv.gpu_id} on {adv.nodes} node(s); next: "
            f"`blueprint validate {args.output}`, then `blueprint generate {args.output} -o build/`",
        )
    return 0


def _validate(text: str) -> list[str]:
    import tempfile

    from generator.findings import BlueprintError
    from generator.pipeline import check

    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / "scaffold.yaml"
        probe.write_text(text, encoding="utf-8")
        try:
            return [f"{f.rule}: {f.message}" for f in check(probe).errors]
        except BlueprintError as exc:
            return [f"{f.rule}: {f.message}" for f in exc.findings]
