"""Mutated blueprints end in a located error or a valid build: never a traceback, a hang or a half build."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from conftest import run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

BASE = Path(__file__).with_name("base.yaml")
yaml = YAML(typ="safe", pure=True)
BASE_DATA = yaml.load(BASE.read_text())

NASTY = [
    "",
    " ",
    "../../etc/passwd",
    "{{ lookup('pipe','id') }}",
    "$(rm -rf /)",
    "a;b",
    "`id`",
    "名前",
    "x" * 300,
    "{% raw %}",
    "\u202e",
    "a\nb",
    "null",
    "~",
    "- item",
    "*alias",
    "&anchor x",
]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**12), max_value=10**12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(NASTY),
    st.text(max_size=20),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


def paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out.extend(paths(v, (*prefix, k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.extend(paths(v, (*prefix, i)))
    return out


ALL_PATHS = [p for p in paths(BASE_DATA) if p]


def mutate(data: Any, path: tuple, value: Any) -> Any:
    import copy

    data = copy.deepcopy(data)
    node = data
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return data


def dump(data: Any) -> str:
    import io

    buf = io.StringIO()
    YAML(typ="safe", pure=True).dump(data, buf)
    return buf.getvalue()


RAW_CASES = [
    "a: &a [1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e]\n",
    "name: x\nname: y\n",
    "[" * 5000,
    "a:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 200)),
    "\x00\x01\x02binary",
    "apiVersion: cluster-blueprint/v1\nname: ok\npools: !!python/object/apply:os.system ['id']\n",
]


def check_outcome(text: str, tmp: Path, catalog: str | None = None) -> None:
    if catalog is not None:
        (tmp / "catalog.yaml").write_text(catalog, encoding="utf-8", errors="surrogatepass")
    src = tmp / "bp.yaml"
    src.write_text(text, encoding="utf-8", errors="surrogatepass") if isinstance(
        text, str
    ) else src.write_bytes(text)
    code, out, err = run_cli("validate", str(src), "--format", "json")
    assert code in (0, 1, 2), (code, out, err)
    assert "Traceback" not in out + err and "internal error" not in out + err, out + err
    if code == 2:
        payload = json.loads(out)
        for f in payload["files"][0]["findings"]:
            assert f["line"] >= 1 and f["file"] in (str(src), str(tmp / "catalog.yaml"))
    build = tmp / "build"
    gcode, gout, gerr = run_cli(
        "generate", str(src), "-o", str(build), "--quiet", "--only", "report,slurm,cabling"
    )
    assert gcode in (0, 1, 2), (gcode, gout, gerr)
    assert "Traceback" not in gout + gerr and "internal error" not in gout + gerr, gout + gerr
    if gcode == 0:
        manifest = json.loads((build / "manifest.json").read_text())
        on_disk = {str(p.relative_to(build)) for p in build.rglob("*") if p.is_file()} - {"manifest.json"}
        assert on_disk == set(manifest["files"])
    else:
        assert not build.exists()


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(path=st.sampled_from(ALL_PATHS), value=values)
def test_mutated_blueprints(path: tuple, value: Any) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        check_outcome(dump(mutate(BASE_DATA, path, value)), Path(tmp))


def test_raw_hostile_documents(tmp_path: Path) -> None:
    for i, text in enumerate(RAW_CASES):
        d = tmp_path / str(i)
        d.mkdir()
        check_outcome(text, d)


def test_base_builds(tmp_path: Path) -> None:
    check_outcome(BASE.read_text(), tmp_path)
    assert (tmp_path / "build" / "manifest.json").exists()


# ---- catalogue extensions (`catalog:`): the same outcomes, whatever the user's catalogue holds --------
CATALOG_BP = Path(__file__).with_name("catalog-bp.yaml").read_text()
BASE_CATALOG = yaml.load(Path(__file__).with_name("base-catalog.yaml").read_text())
CATALOG_PATHS = [p for p in paths(BASE_CATALOG) if p]


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(path=st.sampled_from(CATALOG_PATHS), value=values)
def test_mutated_catalogues(path: tuple, value: Any) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        check_outcome(CATALOG_BP, Path(tmp), dump(mutate(BASE_CATALOG, path, value)))


@settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(
    section=st.sampled_from(["servers", "switches", "nics", "gpus", "media", "cloud", "bogus"]), value=values
)
def test_catalogue_sections_of_any_shape(section: str, value: Any) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        check_outcome(CATALOG_BP, Path(tmp), dump({**BASE_CATALOG, section: value}))


def test_raw_hostile_catalogues(tmp_path: Path) -> None:
    for i, text in enumerate(RAW_CASES):
        d = tmp_path / str(i)
        d.mkdir()
        check_outcome(CATALOG_BP, d, text)


def test_base_catalogue_builds(tmp_path: Path) -> None:
    check_outcome(CATALOG_BP, tmp_path, Path(__file__).with_name("base-catalog.yaml").read_text())
    assert (tmp_path / "build" / "manifest.json").exists()
