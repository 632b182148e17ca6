"""The topology overview draws the fabric's appliances (blueprint ``appliances:``), whose cables its
subtitle counts: a box per appliance under the switches it is cabled to (one per switch box, summarised;
a tag on its switch vertex in a torus or hypercube), and a bundle per cable run, in a valid SVG document."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from diagram_plans import plan_named

from generator.emit.diagrams import topology_svg
from generator.plan.model import Plan

NS = "{http://www.w3.org/2000/svg}"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _plan(text: str, tmp_path: Path) -> Plan:
    from generator.pipeline import load_and_resolve
    from generator.plan.build import build_plan

    bp = tmp_path / "bp.yaml"
    bp.write_text(text)
    return build_plan(load_and_resolve(bp)[1])


def _drawn(svg: str) -> tuple[ET.Element, Counter[tuple[str, str]]]:
    """The parsed document and the appliance cables its bundles draw, per (switch or box, appliance box)."""
    root = ET.fromstring(svg.encode())  # well-formed XML or ParseError
    assert root.tag == f"{NS}svg"
    cables: Counter[tuple[str, str]] = Counter()
    for e in root.iter(f"{NS}line"):
        if "appliance_switch" in (e.get("class") or "").split():
            tip = e.find(f"{NS}title")
            assert tip is not None and tip.text
            ends = tip.text.split(":")[0]
            a, b = ends.split(" — ")
            cables[(a, b)] += int(e.get("data-cables") or 0)
    return root, cables


def _subtitle_count(root: ET.Element) -> int:
    sub = next(t.text or "" for t in root.iter(f"{NS}text") if t.get("class") == "st")
    return int(re.search(r"([\d,]+) appliance–switch", sub).group(1).replace(",", ""))  # type: ignore[union-attr]


def _appliance_links(plan: Plan) -> Counter[tuple[str, str]]:
    return Counter(
        (ln.a.device, ln.b.device) for ln in plan.links_of("compute") if ln.layer == "appliance_switch"
    )


def test_detailed_overview_draws_each_appliance_and_its_cables() -> None:
    plan = plan_named("superpod")  # ufm01 and ufm02, two cables each, on the last leaves
    root, cables = _drawn(topology_svg(plan, "compute"))
    boxes = {e.get("data-name"): e for e in root.iter(f"{NS}rect") if "appliance" in (e.get("class") or "")}
    assert set(boxes) == {"ufm01", "ufm02"}
    for box in boxes.values():  # styled as the switches are: class `sw` and the row's fill class
        assert (box.get("class") or "").split() == ["sw", "appliance"]
    assert cables == _appliance_links(plan) and sum(cables.values()) == 4
    assert _subtitle_count(root) == sum(cables.values())
    # each appliance sits below the leaves it is cabled to, in the last row
    leaf_y = max(float(e.get("y") or 0) for e in root.iter(f"{NS}rect") if "leaf" in (e.get("class") or ""))
    assert all(float(b.get("y") or 0) > leaf_y for b in boxes.values())
    assert any(t.text == "appliances" for t in root.iter(f"{NS}text") if t.get("class") == "row")


def test_summarised_overview_draws_the_appliances(tmp_path: Path) -> None:
    """A 511-node 3-tier fat-tree (320 switches: summarised) with an appliance and a spare host."""
    text = (EXAMPLES / "ndr-3tier-4096gpu.yaml").read_text()
    text = text.replace("    count: 512\n", "    count: 511\n").replace("      growth_nodes: 1024\n", "")
    text += (
        "appliances:\n"
        "  - {name: ufm01, model: ufm-enterprise-appliance-3, fabric: compute, ports: 2}\n"
        "  - {name: spare01, fabric: compute, ports: 1, rack_units: 2, power_w: 800}\n"
    )
    plan = _plan(text, tmp_path)
    svg = topology_svg(plan, "compute")
    assert "summarised" in svg
    root, cables = _drawn(svg)
    boxes = [e for e in root.iter(f"{NS}rect") if "appliance" in (e.get("class") or "").split()]
    assert sum(int(b.get("data-count") or 0) for b in boxes) == 2
    tips = " ".join((b.findtext(f"{NS}title") or "") for b in boxes)
    assert "ufm01" in tips and "spare01" in tips
    assert sum(cables.values()) == 3 == _subtitle_count(root)


def test_hypercube_tags_the_switch_vertex_of_an_appliance(tmp_path: Path) -> None:
    text = (EXAMPLES / "hypercube-research.yaml").read_text()
    text += "\nappliances:\n  - {name: spare01, fabric: compute, ports: 1, rack_units: 2, power_w: 800}\n"
    plan = _plan(text, tmp_path)
    ((switch, _appliance),) = _appliance_links(plan)
    root = ET.fromstring(topology_svg(plan, "compute").encode())
    tags = [e for e in root.iter(f"{NS}rect") if e.get("class") == "ap"]
    assert [t.findtext(f"{NS}title") for t in tags] == ["appliances: spare01"]
    vertex = next(e for e in root.iter(f"{NS}rect") if e.get("data-name") == switch)
    tag = tags[0]
    # hung under its switch's box
    assert float(vertex.get("x") or 0) < float(tag.get("x") or 0) < float(vertex.get("x") or 0) + 74
    assert float(tag.get("y") or 0) > float(vertex.get("y") or 0) + float(vertex.get("height") or 0)
    legend = [t.text or "" for t in root.iter(f"{NS}text") if t.get("class") == "lg"]
    assert f"appliance spare01 (generic): 1 cable(s) to {switch}" in legend
    assert _subtitle_count(root) == 1
