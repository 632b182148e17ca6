"""Topology overviews and rack elevations: well-formed, deterministic, complete, and small at 100k GPUs."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from conftest import EXAMPLES, run_cli
from diagram_plans import plan_named

from generator.emit.diagrams import applies, emit, rack_elevation_svgs, render_all, topology_svg

NS = "{http://www.w3.org/2000/svg}"
MAX_BYTES_100K = 500_000


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg.encode())
    assert root.tag == f"{NS}svg"
    return root


def rects(root: ET.Element, cls: str) -> list[ET.Element]:
    return [e for e in root.iter(f"{NS}rect") if cls in (e.get("class") or "").split()]


def bundles(root: ET.Element) -> list[ET.Element]:
    return [
        e
        for e in root.iter()
        if e.tag in (f"{NS}line", f"{NS}path") and "e" in (e.get("class") or "").split()
    ]


def test_superpod_compute_shows_every_switch() -> None:
    plan = plan_named("superpod")
    svg = topology_svg(plan, "compute")
    root = parse(svg)
    leaves = rects(root, "leaf")
    spines = rects(root, "spine")
    assert len(leaves) == 32 and len(spines) == 16
    assert {e.get("data-name") for e in leaves} == {
        d.name for d in plan.switches("compute") if d.role == "leaf"
    }
    nodes = rects(root, "nodes")
    assert len(nodes) == 4  # one box per scalable unit
    # every cable of the fabric is in exactly one drawn bundle: counts per layer add up to the plan's, the
    # UFM appliances' 4 cables the subtitle counts too
    drawn: Counter[str] = Counter()
    for e in bundles(root):
        layer = next(c for c in e.get("class", "").split() if c not in ("e", "up"))
        drawn[layer] += int(e.get("data-cables"))
    cabled = Counter(ln.layer for ln in plan.links_of("compute"))
    assert drawn == cabled == {"node_leaf": 1016, "leaf_spine": 1024, "appliance_switch": 4}
    assert plan.metrics["compute"].cables == cabled
    # rails coloured: node lines carry the 8 rail colours
    colours = {e.get("stroke") for e in bundles(root) if "node_leaf" in e.get("class", "")}
    assert len(colours) == 8
    assert topology_svg(plan, "compute") == svg  # deterministic


def test_100k_gpus_is_summarised_and_small() -> None:
    plan = plan_named("gpu100k")
    assert plan.cluster.gpu_count == 100_000
    svg = topology_svg(plan, "compute")
    assert len(svg.encode()) < MAX_BYTES_100K
    root = parse(svg)
    assert "summarised" in svg
    counts: Counter[str] = Counter()
    boxes = 0
    for e in root.iter(f"{NS}rect"):
        cls = (e.get("class") or "").split()
        if "agg" in cls:
            boxes += 1
            tier = next(c for c in cls if c != "agg")
            counts[tier] += int(e.get("data-count"))
    assert boxes <= 4 * 12
    assert counts == {**plan.metrics["compute"].switches, "nodes": 12_500}
    drawn: Counter[str] = Counter()
    for e in bundles(root):
        layer = next(c for c in e.get("class", "").split() if c not in ("e", "up"))
        drawn[layer] += int(e.get("data-cables"))
    assert drawn == Counter(plan.metrics["compute"].cables)  # no cable lost in aggregation
    assert len(bundles(root)) < 400  # bundles, not 300k lines


def test_dragonfly_groups_and_arcs() -> None:
    plan = plan_named("dragonfly")
    root = parse(topology_svg(plan))
    assert len(rects(root, "router")) == 20
    assert len(rects(root, "grp")) == 5
    layers = Counter(
        next(c for c in e.get("class", "").split() if c not in ("e", "up")) for e in bundles(root)
    )
    assert layers["global"] + layers["local"] == len(
        {tuple(sorted((x.a.device, x.b.device))) for x in plan.links if x.layer in ("local", "global")}
    )


def test_large_dragonfly_is_summarised() -> None:
    plan = plan_named("dragonfly-big")
    root = parse(topology_svg(plan))
    routers = [e for e in rects(root, "router")]
    assert sum(int(e.get("data-count")) for e in routers) == 256 and len(routers) <= 12
    drawn = sum(int(e.get("data-cables")) for e in bundles(root) if "global" in e.get("class", ""))
    legend = [t.text or "" for t in root.iter(f"{NS}text") if "global cables join" in (t.text or "")]
    inside = int(legend[0].split(" ", 1)[0].replace(",", "")) if legend else 0
    assert drawn + inside == plan.metrics["compute"].cables["global"]
    # summarised, no group frame or local arc is drawn, so the legend says it is a summary and names neither
    texts = " ".join(t.text or "" for t in root.iter(f"{NS}text"))
    assert not rects(root, "grp") and "summarised: " in texts and "orange arcs" not in texts


def test_torus_grid() -> None:
    plan = plan_named("torus")
    root = parse(topology_svg(plan))
    vertices = rects(root, "vn")
    assert len(vertices) == 16
    assert len(bundles(root)) == plan.metrics["compute"].cables["torus"] == 32
    wraps = [e for e in bundles(root) if "wrap" in e.get("class", "")]
    assert len(wraps) == 8  # 4 rings per dimension, each closed by one wrap-around cable


def test_big_torus_summary() -> None:
    plan = plan_named("torus-big")
    svg = topology_svg(plan)
    root = parse(svg)
    assert sum(int(e.get("data-count")) for e in rects(root, "cell")) == 512
    assert "dimension 3 (size 2): 256 links" in svg


def test_missing_fabric_is_a_valid_placeholder() -> None:
    root = parse(topology_svg(plan_named("torus"), "storage"))
    assert "no storage fabric" in "".join(t.text or "" for t in root.iter(f"{NS}text"))


def test_rack_elevations() -> None:
    plan = plan_named("superpod")
    files = rack_elevation_svgs(plan)
    rows = sorted({r.row for r in plan.racks})
    assert sorted(files) == [f"rack-elevation-row{r:02d}.svg" for r in rows]
    drawn_devices = 0
    for name, svg in files.items():
        root = parse(svg)
        row = int(name[-6:-4])
        racks = [r for r in plan.racks if r.row == row]
        assert len(rects(root, "frame")) == len(racks)
        devs = rects(root, "dev")
        drawn_devices += len(devs)
        texts = "".join(t.text or "" for t in root.iter(f"{NS}text"))
        for r in racks:
            assert f"{r.power_kw:.1f} / {r.power_budget_kw:g} kW" in texts
            assert r.id in texts
    assert (
        drawn_devices == sum(len(r.devices) for r in plan.racks) == len([d for d in plan.devices if d.rack])
    )
    assert rack_elevation_svgs(plan) == files


def test_power_over_budget_is_flagged() -> None:
    from dataclasses import replace

    plan = plan_named("superpod")
    rack = plan.racks[0]
    hot = replace(plan, racks=(replace(rack, power_kw=rack.power_budget_kw + 5), *plan.racks[1:]))
    root = parse(rack_elevation_svgs(hot)["rack-elevation-row01.svg"])
    assert len(rects(root, "pover")) == 1


def test_emit_and_cli(tmp_path: Path) -> None:
    plan = plan_named("superpod")
    assert applies(plan.cluster)
    emit(plan.cluster, plan, tmp_path / "diagrams")
    files = render_all(plan.cluster, plan)
    assert sorted(p.name for p in (tmp_path / "diagrams").iterdir()) == sorted(files)
    assert {"topology-compute.svg", "topology-storage.svg", "topology-management.svg"} <= set(files)
    code, out, err = run_cli("topology", str(EXAMPLES / "superpod-h100-4su.yaml"), "--format", "svg")
    assert code == 0, err
    assert out == files["topology-compute.svg"]
