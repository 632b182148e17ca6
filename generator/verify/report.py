"""Text and JSON renderings of a ``Verification``."""

from __future__ import annotations

import json
from typing import Any

from generator.verify.diff import Verification

_LABEL = {
    "miswired": "MISWIRED",
    "missing": "MISSING",
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
    return ", ".join(parts)


def to_text(v: Verification, *, show_ok: bool = False) -> str:
    lines = [f"verify-cabling: fabric {v.fabric}, discovered {v.source} ({v.discovered} links)"]
    width = max(len(r.cable or "-") for r in v.results) if v.results else 1
    for r in v.results:
        if r.status == "ok" and not show_ok:
            continue
        msg = (
            r.message
            if r.status != "ok"
            else f"{r.a.text()} — {r.b.text()}" + (f" {r.found_rate}" if r.found_rate else "")
        )
        lines.append(f"{_LABEL[r.status]:<10}  {(r.cable or '-'):<{width}}  {msg}")
    if v.unidentified:
        lines.append(
            f"{len(v.unidentified)} discovered node(s) match no plan device (set their node descriptions, "
            "or pass --node-name-map):"
        )
        lines.extend(f"  {u}" for u in v.unidentified[:50])
        if len(v.unidentified) > 50:
            lines.append(f"  … and {len(v.unidentified) - 50} more")
    if v.excluded:
        lines.append(f"left out: {len(v.excluded)} SHARP aggregation node(s) (not cables)")
    if v.rate_unchecked:
        lines.append(
            f"note: {v.rate_unchecked} matched cable(s) had no width/speed in the dump (not checked)"
        )
    lines.extend(f"warning: {w}" for w in v.warnings[:20])
    verdict = "MATCHES THE PLAN" if v.clean else "DOES NOT MATCH THE PLAN"
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
        "results": [r.as_dict() for r in v.results if show_ok or r.status != "ok"],
        "unidentified": v.unidentified,
        "excluded_sharp_nodes": v.excluded,
        "warnings": v.warnings,
    }
    return json.dumps(payload, indent=2, sort_keys=False) + "\n"
