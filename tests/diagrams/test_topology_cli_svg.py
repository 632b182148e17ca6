"""`blueprint topology --format svg` as a user runs it: every fabric or one, device level, and drawings
of a size a screen or a page can show, even for the largest example."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

from conftest import EXAMPLES, run_cli

NS = "{http://www.w3.org/2000/svg}"
MAX_W, MAX_H = 4000.0, 3000.0  # px: a large monitor or an A3 page at print resolution
MAX_LINES = 1500  # drawn lines and paths: beyond this a drawing is a grey band


def _svg(*args: str) -> ET.Element:
    code, out, err = run_cli("topology", *args, "--format", "svg")
    assert code == 0, err
    return ET.fromstring(out.encode("utf-8"))


def _size(root: ET.Element) -> tuple[float, float]:
    return float(root.get("width", "0")), float(root.get("height", "0"))


def _largest_example() -> str:
    gpus = {}
    for path in EXAMPLES.glob("*.yaml"):
        code, out, _ = run_cli("plan", str(path), "--format", "json")
        if code == 0:
            gpus[str(path)] = json.loads(out)["gpus"]
    return max(gpus, key=lambda p: (gpus[p], p))


def test_largest_example_fits_a_screen_in_every_fabric() -> None:
    path = _largest_example()
    assert json.loads(run_cli("plan", path, "--format", "json")[1])["gpus"] >= 4096
    root = _svg(path, "--fabric", "all")
    drawings = [e for e in root if e.tag == f"{NS}svg"]
    fabrics = json.loads(run_cli("plan", path, "--format", "json")[1])["fabrics"]
    assert len(drawings) == len(fabrics)
    assert {d.findtext(f"{NS}title").split(": ")[1].removesuffix(" fabric") for d in drawings} == set(fabrics)
    width, height = _size(root)
    assert width == max(_size(d)[0] for d in drawings)
    assert height == sum(_size(d)[1] for d in drawings)
    for d in drawings:
        w, h = _size(d)
        assert 0 < w <= MAX_W and 0 < h <= MAX_H, (w, h)
        assert len([e for e in d.iter() if e.tag in (f"{NS}line", f"{NS}path")]) <= MAX_LINES
    # styles are scoped per drawing, so one fabric's CSS cannot restyle another's
    for i, d in enumerate(drawings):
        css = d.findtext(f"{NS}style") or ""
        selectors = [sel for rule in re.findall(r"([^{}]+)\{", css) for sel in rule.split(",")]
        assert selectors and all(sel.startswith(f".f{i} ") for sel in selectors)


def test_dense_leaf_spine_mesh_is_a_bus_not_a_band() -> None:
    path = str(EXAMPLES / "superpod-h100-4su.yaml")
    root = _svg(path)
    plan = json.loads(run_cli("plan", path, "--format", "json")[1])["fabrics"]["compute"]
    leaves, spines = plan["switches"]["leaf"], plan["switches"]["spine"]
    up = [e for e in root.iter(f"{NS}line") if "leaf_spine" in (e.get("class") or "").split()]
    assert len(up) == leaves < leaves * spines  # one rise per leaf, not one line per leaf-spine pair
    assert sum(int(e.get("data-cables")) for e in up) == plan["cables"]["leaf_spine"]
    texts = " ".join(t.text or "" for t in root.iter(f"{NS}text"))
    assert "every leaf switch to every spine switch" in texts


def test_level_device_is_drawn_and_port_is_refused() -> None:
    path = str(EXAMPLES / "superpod-h100-4su.yaml")
    default = run_cli("topology", path, "--format", "svg")[1]
    assert run_cli("topology", path, "--format", "svg", "--level", "device")[1] == default
    code, out, err = run_cli("topology", path, "--format", "svg", "--level", "port")
    assert code == 2 and out == "" and "draws devices" in err
