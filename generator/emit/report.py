"""build/report/: the plan summary, validation findings and a short human summary (Markdown)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from generator.emit._registry import BuildContext, Emitter
from generator.foreign import path_text
from generator.plan.model import Plan
from generator.report import dumps
from generator.resolve import ResolvedCluster
from generator.safetext import markdown_line

NAME = "report"


def applies(cluster: ResolvedCluster) -> bool:
    return True


class ReportEmitter(Emitter):
    """The build's own summary: lists the findings `validate` reported (BuildContext.findings)."""

    name = NAME
    order = 70

    def applies(self, cluster: ResolvedCluster) -> bool:
        return applies(cluster)

    def emit(self, ctx: BuildContext) -> None:
        emit(ctx.cluster, ctx.plan, ctx.out, findings=list(ctx.findings))


def _dump(data: Any) -> str:
    return dumps(data, sort_keys=True)  # a finding's file name may hold bytes that are not UTF-8


def emit(
    cluster: ResolvedCluster, plan: Plan, out: Path, findings: list[dict[str, Any]] | None = None
) -> None:
    out.mkdir(parents=True, exist_ok=True)
    summary = plan.summary()
    (out / "plan.json").write_text(_dump(summary), encoding="utf-8")
    (out / "findings.json").write_text(_dump(findings or []), encoding="utf-8")
    lines = [
        f"# {cluster.name}",
        "",
        markdown_line(cluster.blueprint.description or ""),  # one paragraph: it cannot forge sections
        "",
        f"- nodes: {summary['nodes']} ({summary['gpu_nodes']} GPU nodes, {summary['gpus']} GPUs)",
        f"- racks: {summary['racks']}, power {summary['power_kw']:g} kW",
        f"- cables: {summary['cables_total']}, transceivers: {summary['transceivers']}",
        f"- compute bisection: {summary['bisection_gbps']:g} Gb/s, diameter {summary['diameter_hops']} hops",
        "",
        "## Switches",
        "",
        *(f"- {tier}: {n}" for tier, n in summary["switches"].items()),
        "",
        "## Findings",
        "",
        *(
            # the file name is the user's (any characters a file system allows): one Markdown line
            f"- {f['severity']} {f['rule']} {markdown_line(path_text(str(f['file'])))}:{f['line']}: "
            f"{markdown_line(f['message'], code_spans=True)}"
            for f in (findings or [])
        ),
    ]
    if not findings:
        lines.append("- none")
    (out / "SUMMARY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
