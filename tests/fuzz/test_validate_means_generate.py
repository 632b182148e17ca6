"""`validate` passing means `generate` works (issue 29): one truth for every decision an emitter can refuse.

Shipped examples mutated in the fields whose derived facts are computed by more than one stage (leaf
split from the oversubscription ratio, racks and power, loopback and address pools, counts, switch
models, the subnet manager) with values a user could write. For each mutated blueprint: `validate`
ends 0, 1 or 2 (never 3) and, when it finds no error, `generate` of every output ends 0 with every
file of its manifest on disk; when it finds errors, `generate` refuses too.
"""

from __future__ import annotations

import copy
import io
import json
import tempfile
from pathlib import Path
from typing import Any

from conftest import EXAMPLES, run_cli
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

BASES = ("roce-rail-2tier", "hdr-fat-tree-a100", "ethernet-torus", "hypercube-research", "single-pcie5-h100")
_yaml = YAML(typ="safe", pure=True)
BASE_DATA = {name: _yaml.load((EXAMPLES / f"{name}.yaml").read_text(encoding="utf-8")) for name in BASES}

ratio = st.builds(
    lambda d, u: f"{d}:{u}",
    st.sampled_from(["1", "1.5", "2", "3", "4", "1.2"]),
    st.sampled_from(["1", "1.5", "1.7", "2", "3"]),
)
MUTATIONS: dict[tuple[str, ...], st.SearchStrategy[Any]] = {
    ("fabrics", "compute", "topology", "oversubscription"): ratio,
    ("fabrics", "compute", "topology", "scalable_unit"): st.sampled_from([4, 8, 16, 20, 32, 64]),
    ("fabrics", "compute", "topology", "rail_optimized"): st.booleans(),
    ("fabrics", "compute", "underlay"): st.builds(
        lambda n: {"loopback_cidr": f"10.255.0.0/{n}"}, st.integers(min_value=22, max_value=32)
    ),
    ("fabrics", "compute", "subnet_manager"): st.sampled_from(
        [
            {"kind": "opensm", "ha": True, "routing_engine": "ftree"},
            {"kind": "opensm", "ha": False, "routing_engine": "updn"},
            {"kind": "opensm", "ha": True, "routing_engine": "minhop"},
        ]
    ),
    ("pools", 0, "count"): st.integers(min_value=1, max_value=96),
    ("pools", 0, "placement"): st.one_of(
        st.none(), st.builds(lambda n: {"nodes_per_rack": n}, st.integers(min_value=1, max_value=8))
    ),
    ("site", "rack", "power_kw"): st.sampled_from([6, 9, 12, 15, 20, 30, 44, 60]),
    ("site", "rack", "units"): st.sampled_from([24, 42, 48, 52]),
    ("site", "racks_per_row"): st.integers(min_value=1, max_value=12),
    ("site", "rows"): st.integers(min_value=1, max_value=4),
}


def _set(data: Any, path: tuple[Any, ...], value: Any) -> bool:
    """Set `path` in `data` when its parent exists (a mutation of an absent section is skipped)."""
    node = data
    for part in path[:-1]:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
        else:
            return False
    if value is None and isinstance(node, dict):
        node.pop(path[-1], None)
    else:
        node[path[-1]] = value
    return True


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    name = draw(st.sampled_from(BASES))
    data = copy.deepcopy(BASE_DATA[name])
    for path in draw(
        st.lists(st.sampled_from(sorted(MUTATIONS, key=str)), min_size=1, max_size=3, unique=True)
    ):
        _set(data, path, draw(MUTATIONS[path]))
    return name, data


def _dump(data: Any) -> str:
    buf = io.StringIO()
    YAML(typ="safe", pure=True).dump(data, buf)
    return buf.getvalue()


def check_validate_means_generate(text: str, tmp: Path) -> None:
    src = tmp / "bp.yaml"
    src.write_text(text, encoding="utf-8")
    code, out, err = run_cli("validate", str(src), "--format", "json")
    assert code in (0, 1, 2), (code, out, err)
    if code == 2:
        return
    build = tmp / "build"
    gcode, gout, gerr = run_cli("generate", str(src), "-o", str(build), "--quiet")
    if code == 0:
        assert gcode == 0, f"validate passed, generate ended {gcode}:\n{gout}{gerr}\n--- blueprint:\n{text}"
        manifest = json.loads((build / "manifest.json").read_text(encoding="utf-8"))
        on_disk = {p.relative_to(build).as_posix() for p in build.rglob("*") if p.is_file()}
        assert on_disk - {"manifest.json"} == set(manifest["files"])
    else:
        assert gcode == 1 and not build.exists(), (gcode, gout, gerr)


def _known(name: str, path: tuple[Any, ...], value: Any) -> tuple[str, dict[str, Any]]:
    data = copy.deepcopy(BASE_DATA[name])
    assert _set(data, path, value)
    return name, data


# The cases issue 29 found by hand: validate said yes, generate said no (or the two counted differently).
KNOWN = [
    _known("roce-rail-2tier", ("fabrics", "compute", "underlay"), {"loopback_cidr": "10.255.255.0/30"}),
    _known("roce-rail-2tier", ("fabrics", "compute", "topology", "oversubscription"), "1.5:1.7"),
    _known("hdr-fat-tree-a100", ("fabrics", "compute", "topology", "oversubscription"), "2:1"),
    _known("roce-rail-2tier", ("site", "rack", "power_kw"), 9),
]


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@example(case=KNOWN[0])
@example(case=KNOWN[1])
@example(case=KNOWN[2])
@example(case=KNOWN[3])
@given(case=mutated())
def test_validate_passing_means_generate_works(case: tuple[str, dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        check_validate_means_generate(_dump(case[1]), Path(tmp))


def test_every_example_that_validates_generates(tmp_path: Path) -> None:
    for shipped in sorted(EXAMPLES.glob("*.yaml")):
        work = tmp_path / shipped.stem
        work.mkdir()
        check_validate_means_generate(shipped.read_text(encoding="utf-8"), work)
