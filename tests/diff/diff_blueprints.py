"""Blueprints for day-2 diffs, written from the reference example with a few values changed."""

from __future__ import annotations

import re
import tempfile
from functools import cache
from pathlib import Path

from generator.pipeline import load_and_resolve
from generator.plan.build import build_plan
from generator.plan.model import Plan

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "superpod-h100-4su.yaml"
_DIR = tempfile.TemporaryDirectory(prefix="diff-blueprints-")


def _replace(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"the example no longer has exactly one `{old.strip()}`"
    return text.replace(old, new)


@cache
def variant(
    name: str, *, dgx: int = 128, mgmt: int = 3, growth: int | None = None, hdr: bool = False, su: int = 32
) -> Path:
    """The example with the dgx and mgmt pool sizes, SU size and growth headroom changed; ``hdr``: an HDR
    SuperPOD of QM8700 leaves (20 down + 20 up ports)."""
    # the example's 127 DGX and the UFM appliances in the 128th node slot: these diffs grow whole units,
    # so the appliances (and their leaf ports) are left out
    text = _replace(EXAMPLE.read_text(), "    count: 127\n", f"    count: {dgx}\n")
    text = re.sub(r"\nappliances:\n(?:  - .*\n)+", "\n", text)
    text = _replace(text, "    count: 3\n", f"    count: {mgmt}\n")
    text = _replace(
        text,
        "      scalable_unit: 32\n",
        f"      scalable_unit: {su}\n" + (f"      growth_nodes: {growth}\n" if growth else ""),
    )
    if hdr:
        text = _replace(text, "    technology: infiniband-ndr\n", "    technology: infiniband-hdr\n")
        text = _replace(
            text, "      switch: qm9700\n      rail_optimized", "      switch: qm8700\n      rail_optimized"
        )
    path = Path(_DIR.name) / f"{name}.yaml"
    path.write_text(text)
    return path


@cache
def plan_of(path: Path) -> Plan:
    return build_plan(load_and_resolve(path)[1])
