"""Text and JSON renderings of a ``Verification``."""

from __future__ import annotations

import json
from typing import Any

from generator.safetext import inline
from generator.verify.diff import CableResult, Verification

_LABEL = {
    "miswired": "MISWIRED",
    "missing": "MISSING",
    "absent": "ABSENT",
    "rate": "WRONG RATE",
    "unexpected": "UNEXPECTED",
    "ok": "ok",
}


def summary_line(v: Verification) -> str:
    c = v.counts
    parts = [f"{v.planned} cables planned", f"{c['ok']} ok"]
    parts += [
        f"{c[s]} {'wrong speed/width' if s == 'rate' else s}"
        for s in ("miswired", "missing", "rate", "unexpected")
    ]
    if v.absent:
        parts.append(f"{v.absent} switch(es) not discovered")
    if v.accepted:
        parts.append(f"{v.accepted} acknowledged")
    return ", ".join(parts)


MAX_LISTED = 50  # unidentified nodes listed in text mode
MAX_WARNINGS = 20  # warnings listed in text mode (all of them are in --format json)


def _capped(items: list[str], limit: int, prefix: str) -> list[str]:
    """At most ``limit`` lines, then how many were left out. The items quote foreign text (node
    descriptions, LLDP names, file names): each stays on its line."""
    lines = [f"{prefix}{inline(u)}" for u in items[:limit]]
    if len(items) > limit:
        lines.append(f"{prefix}… and {len(items) - limit} more (all of them with --format json)")
    return lines


def _finding(r: CableResult, width: int, show_ok: bool) -> str | None:
    if r.status == "ok" and not show_ok:
        return None
    msg = (
        r.message
        if r.status != "ok"
        else f"{r.a.text()} — {r.b.text()}" + (f" {r.found_rate}" if r.found_rate else "")
    )
    if r.accepted:  # the reason is the accept file's text: kept on this line
        return (
            f"{'accepted':<10}  {(r.cable or '-'):<{width}}  {msg} [{_LABEL[r.status]}: {inline(r.accepted)}]"
        )
    return f"{_LABEL[r.status]:<10}  {(r.cable or '-'):<{width}}  {msg}"


def to_text(v: Verification, *, show_ok: bool = False) -> str:
    lines = [f"verify-cabling: fabric {v.fabric}, discovered {v.source} ({v.discovered} links)"]
    width = max(len(r.cable or "-") for r in v.results) if v.results else 1
    lines += [line for r in v.results if (line := _finding(r, width, show_ok)) is not None]
    if v.unidentified:
        how = (
            "set their LLDP system names to the plan's (lldpcli configure system hostname NAME), or --accept"
            if v.lldp
            else "set their node descriptions, or pass --node-name-map"
        )
        lines.append(f"{len(v.unidentified)} discovered node(s) match no plan device ({how}):")
        lines += _capped(v.unidentified, MAX_LISTED, "  ")
    if v.excluded:
        lines.append(f"left out: {len(v.excluded)} SHARP aggregation node(s) (not cables)")
    if v.rate_unchecked:
        lines.append(
            f"note: {v.rate_unchecked} matched cable(s) had no width/speed in the dump (not checked)"
        )
    lines += _capped(v.warnings, MAX_WARNINGS, "warning: ")
    verdict = "MATCHES THE PLAN" if v.clean else "DOES NOT MATCH THE PLAN"
    if v.clean and v.accepted:
        verdict += f" (but for the differences acknowledged in {v.accepted_from})"
    lines.append(f"{summary_line(v)} — {verdict}")
    return "\n".join(lines) + "\n"


def to_json(v: Verification, *, blueprint: str = "", show_ok: bool = False) -> str:
    payload: dict[str, Any] = {
        "blueprint": blueprint,
        "fabric": v.fabric,
        "discovered": v.source,
        "matches": v.clean,
        "summary": {
            "planned": v.planned,
            "discovered_links": v.discovered,
            **v.counts,
            "rate_unchecked": v.rate_unchecked,
        },
        "absent_switches": v.absent,
        "acknowledged": v.accepted,
        "results": [r.as_dict() for r in v.results if show_ok or r.status != "ok"],
        "unidentified": v.unidentified,
        "excluded_sharp_nodes": v.excluded,
        "warnings": v.warnings,
        "accepted_from": v.accepted_from or None,
    }
    return json.dumps(payload, indent=2, sort_keys=False) + "\n"
