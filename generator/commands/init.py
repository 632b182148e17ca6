"""`blueprint init`: scaffold a blueprint that validates, from a few answers, from `advise`, or by asking.

The design is `blueprint advise`'s (the article's selection rules): init only gathers the answers,
so a scaffold and an advice for the same answers are the same blueprint. The file is checked with
`validate` before it is written, and an existing file is never replaced unless --force is given.
"""

from __future__ import annotations

import argparse
import copy
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from blueprints.starter import STARTER_GPU
from generator.commands._common import add_common, check_outputs, command, err_console, note, write_text
from generator.commands.advise import (  # the advisor's, without importing it
    MODES,
    gpus_problem,
    params_number,
)
from generator.report import safe

TYPE_CHECKING = (
    False  # start-up: heavy modules are imported in run() (generator/cli.py); mypy reads this as True
)
if TYPE_CHECKING:
    from generator.findings import Finding
    from generator.perf.advice import Advice, Request

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
    p.add_argument("--params", type=params_number, help="model parameters the cluster is for, e.g. 70e9")
    p.add_argument("--mode", choices=MODES, default="pretrain", help="what the GPUs do (default: pretrain)")
    p.add_argument("--gpus", type=int, help="GPUs in the cluster (default: what the model needs)")
    p.add_argument(
        "--gpu",
        default=STARTER_GPU,
        help=f"GPU catalogue id (default: {STARTER_GPU}; `blueprint catalog gpus`)",
    )
    p.add_argument(
        "--from-advice",
        metavar="FILE",
        help="the JSON of `blueprint advise --format json` (- for standard input): scaffold its design",
    )
    p.add_argument("-i", "--interactive", action="store_true", help="ask for each answer, with defaults")
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
        if not sys.stdin.isatty():  # a piped answer is not echoed: end the prompt's line with it
            err_console.print(safe(answer), highlight=False)
        try:
            return parse(answer)
        except ValueError as exc:
            err_console.print(f"  not understood ({safe(str(exc))}); try again")


def _interactive(args: argparse.Namespace) -> Request:
    from generator.perf.advice import Request

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

    def params_answer(text: str) -> float:
        try:
            return params_number(text)
        except argparse.ArgumentTypeError as exc:  # said, and asked again
            raise ValueError(str(exc)) from None

    name = _ask("cluster name", args.name or _name_from(args.output), str, read)
    params = _ask("model parameters", f"{args.params or 7e9:g}", params_answer, read)
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
    from generator.perf.advice import Request
    from generator.perf.advice_model import read_advice

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
    from generator.perf.advice import AdviceError
    from generator.perf.advisor import advise
    from generator.perf.system import PerfError

    # before any question is asked; the advice read is never the file written, even with --force
    check_outputs([("-o", args.output)], [("--from-advice", args.from_advice)], force=args.force)
    req = _request(args)
    if isinstance(req, str):
        err_console.print(f"[bold red]init[/]: {safe(req)}")
        return 2
    problem = gpus_problem(req.gpus, req.gpu)
    if problem is not None:
        err_console.print(f"[bold red]init[/]: {safe(problem)}")
        return 2
    try:
        adv = advise(req)
    except (AdviceError, PerfError) as exc:
        err_console.print(f"[bold red]init[/]: {safe(str(exc))}")
        return 2
    text, failed = scaffold(adv, "init")
    if failed:  # the user's own GPU count can leave too little memory (1, as `validate`); else a bug (3)
        from generator.rules.dep.dep010_address_plan import AddressPlanFits
        from generator.rules.wrk.wrk002_memory_fit import MemoryFit  # the model does not fit the GPUs' memory

        # or more hosts than the starter's management block holds: exit 1
        given_ids = {MemoryFit.id, AddressPlanFits.id}
        memory_only = req.gpus is not None and all(f.rule in given_ids for f in failed)
        given = " with the --gpus given" if memory_only else ""
        errors = "; ".join(f"{f.rule}: {f.message}" for f in failed)
        err_console.print(
            f"[bold red]init[/]: the scaffold does not validate{given} (not written): {safe(errors)}"
        )
        return 1 if memory_only else 3
    write_text(text if text.endswith("\n") else text + "\n", args.output, replace=args.force)
    if args.output not in (None, "-"):
        note(
            args,
            f"wrote {args.output}: {adv.gpus} × {adv.gpu_id} on {adv.nodes} node(s); next: "
            f"`blueprint validate {args.output}`, then `blueprint generate {args.output} -o build/`",
        )
    return 0


def scaffold(adv: Advice, tool: str) -> tuple[str, list[Finding]]:
    """The starter blueprint of ``adv`` as `blueprint <tool>` writes it (init, and advise --write, so that one
    advice gives one file): settled (in place) until it gives no warning of its own design, with a note per
    change in its header, and the errors `validate` still gives it."""
    from generator.findings import Severity  # late: keeps `init --help` light
    from generator.perf.starter import starter_yaml

    notes = _settle(adv, starter_yaml)
    text = (
        SCHEMA_LINE
        + "\n"
        + starter_yaml(adv).replace("written by `blueprint advise`", f"written by `blueprint {tool}`")
    )
    if notes:  # what was changed in the advisor's starter, beside the advisor's own reasons
        text = text.replace("\n# Review site,", "".join(f"\n# - {n}" for n in notes) + "\n# Review site,", 1)
    return text, [f for f in _check(text) if f.severity is Severity.ERROR]


def _check(text: str) -> list[Finding]:
    """Every finding `validate` reports for the scaffold ``text`` (errors that stop it included)."""
    import tempfile

    from generator.findings import BlueprintError
    from generator.pipeline import check

    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / "scaffold.yaml"
        probe.write_text(text, encoding="utf-8")
        try:
            return list(check(probe).findings)
        except BlueprintError as exc:
            return list(exc.findings)


# A scaffold must not warn about itself: the warnings a starter can trip because of choices the answers
# did not make, each with the change that avoids it (in the blueprint's own terms) and its note.
SETTLE_ROUNDS = 6
MAX_GROWN_ROWS = 2  # rows a starter's site may grow by for those changes (PLN001), each costing a round


def _settle(adv: Advice, render: Callable[[Advice], str]) -> list[str]:
    """Change the advisor's starter (in place) until `validate` gives it no warning these fixes know;
    returns one note per change made."""
    from generator.findings import Severity  # late: keeps `init --help` light

    fixes: dict[str, Callable[[Advice, Finding], str | None]] = {
        "TOP017": _two_spines,
        "PLT001": _published_ports,
        "PWR005": _longer_rows,
        "PWR008": _whole_domains,
    }
    # one note a rule and fabric, its last: a fix made twice (spines for 4 nodes, then 8) said both
    notes: dict[tuple[str, tuple[str | int, ...]], str] = {}
    before: tuple[dict[str, Any], dict[tuple[str, tuple[str | int, ...]], str]] | None = None
    rows = 0  # rows added to the site for the fixes
    for _ in range(SETTLE_ROUNDS):
        found = _check(render(adv))
        errors = [f for f in found if f.severity is Severity.ERROR]
        if before is not None and errors and rows < MAX_GROWN_ROWS and (grown := _another_row(adv, errors)):
            notes[("PLN001", ("site",))] = grown  # checked again next round, with the larger site
            rows += 1
            continue
        if before is not None and errors:
            # the last round's fixes made a design the site cannot hold, even a row larger: undone, its
            # warning kept rather than a scaffold that fails
            adv.starter.clear()
            adv.starter.update(before[0])
            notes = before[1]
            break
        warnings = [f for f in found if f.severity is Severity.WARNING and f.rule in fixes]
        before = (copy.deepcopy(adv.starter), dict(notes))
        made = {(f.rule, f.path[:2]): note for f in warnings if (note := fixes[f.rule](adv, f)) is not None}
        if not made:
            break
        notes.update(made)
    return list(notes.values())


def _another_row(adv: Advice, errors: list[Finding]) -> str | None:
    """PLN001 at `site` alone after a round's fixes (whole NVLink domains a scalable unit give each unit its
    own leaf rack: 1,152 GB200 needed 33 racks of a 32-rack site): the site one row larger, else None."""
    site = adv.starter.get("site", {})
    if any(f.rule != "PLN001" or tuple(f.path) != ("site",) for f in errors):
        return None
    site["rows"] = int(site.get("rows", 1)) + 1
    return f"site of {site['rows']} row(s): the fixes above need more racks than the advisor's site (PLN001)"


def _two_spines(adv: Advice, finding: Finding) -> str | None:
    """TOP017 (the leaves meet in one spine): size the spines for twice the nodes (``growth_nodes``)."""
    fabric = finding.path[1] if len(finding.path) > 1 else None
    topology = adv.starter.get("fabrics", {}).get(fabric, {}).get("topology", {})
    if topology.get("kind") != "fat-tree":
        return None
    nodes = sum(int(p.get("count", 0)) for p in adv.starter.get("pools", []))
    topology["growth_nodes"] = 2 * int(topology.get("growth_nodes") or nodes)
    return (
        f"{fabric} spines sized for {topology['growth_nodes']} nodes (growth_nodes): a fabric whose leaves "
        "meet in one spine loses everything with it (TOP017)"
    )


def _published_ports(adv: Advice, finding: Finding) -> str | None:
    """PLT001 on a spec the advisor derived from a catalogue server (its compute NICs at another speed, the
    same adapters): the compute port names that server's vendor publishes (catalogue platforms.yaml)."""
    from blueprints.catalog import default_catalog

    pool = _pool_at(adv, finding)
    cat = default_catalog()
    server, platform = cat.servers.get(adv.server_id), cat.platforms.get(adv.server_id)
    if pool is None or "ports" in pool or server is None or platform is None:
        return None
    kind = cat.fabric(adv.technology).kind if adv.technology else None
    link = "infiniband" if kind == "infiniband" else "ethernet"
    same = {n.model for n in server.nics if n.purpose == "compute"} == {
        n["model"] for n in pool["spec"].get("nics", []) if n["purpose"] == "compute"
    }
    rows = [r for r in platform.ports if r.role == "compute"]
    if not same or not rows or any(r.rdma is None or r.netdev_link != link for r in rows):
        return None  # other adapters, or names not published for this link layer: PLT001 stays
    pool["ports"] = [
        {"role": "compute", "faceplate": r.faceplate, "rdma": r.rdma, "netdev": r.netdev, "gpu": r.gpu}
        for r in rows
    ]
    return (
        f"pool `{pool['name']}`: the compute port names of the {server.name} it is derived from (same "
        f"adapters; catalogue platforms.yaml `{adv.server_id}`) (PLT001)"
    )


def _pool_at(adv: Advice, finding: Finding) -> dict[str, Any] | None:
    pools = adv.starter.get("pools", [])
    index = finding.path[1] if len(finding.path) > 2 and finding.path[0] == "pools" else None
    if not isinstance(index, int) or index >= len(pools) or "spec" not in pools[index]:
        return None
    pool: dict[str, Any] = pools[index]
    return pool


def _whole_domains(adv: Advice, finding: Finding) -> str | None:
    """PWR008 (a scalable unit ends inside a multi-node NVLink domain): the compute fabric's scalable unit
    a whole number of domains (the rule's own fix), as many as the unit it replaces holds, at least one."""
    pools = adv.starter.get("pools", [])
    index = finding.path[1] if len(finding.path) > 1 and finding.path[0] == "pools" else None
    pool = pools[index] if isinstance(index, int) and index < len(pools) else {}
    topology = adv.starter.get("fabrics", {}).get("compute", {}).get("topology")
    spec = pool.get("spec", {})
    domain_gpus, gpus = spec.get("nvlink_domain_gpus"), spec.get("gpus")
    if "server" in pool:  # a catalogue server (gb200-nvl72-tray): its own facts
        from blueprints.catalog import default_catalog

        server = default_catalog().servers.get(str(pool["server"]))
        domain_gpus, gpus = (server.nvlink_domain_gpus, server.gpus) if server is not None else (None, None)
    # only a fat-tree has scalable units (a dragonfly's schema refuses the key)
    if not isinstance(topology, dict) or topology.get("kind") != "fat-tree":
        return None
    if not domain_gpus or not gpus or domain_gpus % gpus:
        return None
    domain = domain_gpus // gpus
    unit = int(topology.get("scalable_unit") or domain)
    if unit % domain == 0 and "scalable_unit" in topology:
        return None
    topology["scalable_unit"] = domain * max(1, unit // domain)
    return (
        f"compute scalable_unit {topology['scalable_unit']}: whole NVLink domains of {domain} nodes, so "
        "no domain is racked in two racks (PWR008)"
    )


def _longer_rows(adv: Advice, finding: Finding) -> str | None:
    """PWR005 (node-leaf cables cross rows): the same racks in half as many, twice as long rows."""
    site = adv.starter.get("site", {})
    if int(site.get("rows", 1)) < 2:
        return None
    site["racks_per_row"] = 2 * int(site["racks_per_row"])
    site["rows"] = -(-int(site["rows"]) // 2)
    return (
        f"{site['rows']} row(s) of {site['racks_per_row']} racks: no node-leaf cable crosses a row (PWR005)"
    )
