"""Every reader of a shipped catalogue file goes through the parse cache (blueprints/catalog/load.py).

With the cache warm, reading the whole catalogue (the hardware tables and every side file: performance
constants, advice, workload factors, subnet managers, switch OS releases, appliances) must not import
ruamel.yaml at all: a reader that parses its file itself would import it (and cost the pure-Python parse,
most of `validate`'s catalogue time before). The data each reader returns is the parser's
(tests/cli/test_startup_imports.py::test_cache_gives_ruamels_data checks the cache against ruamel).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

READ_ALL = """
import importlib, json, sys
from blueprints.catalog import default_catalog
from blueprints.catalog.advice import advice
from blueprints.catalog.perf import perf_data
from blueprints.catalog.workload import workload_factors
import blueprints.catalog.subnet_managers as sm
import blueprints.catalog.switch_os as sw
default_catalog(); advice(); perf_data(); workload_factors(); sm._document(); sw._document()
try:
    importlib.import_module("blueprints.catalog.appliances")._document()
except ModuleNotFoundError:
    pass
sys.stdout.write(json.dumps(sorted(m for m in sys.modules if m.startswith("ruamel.yaml"))))
"""


def _read_all(cache: Path) -> list[str]:
    env = dict(os.environ, XDG_CACHE_HOME=str(cache))
    proc = subprocess.run(
        [sys.executable, "-c", READ_ALL], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def test_warm_cache_reads_every_shipped_file_without_the_parser(tmp_path: Path) -> None:
    cold = _read_all(tmp_path)
    assert "ruamel.yaml" in cold  # the first run parses (and fills the cache)
    shipped = sorted((ROOT / "blueprints" / "catalog" / "data").glob("*.yaml"))
    cached = list((tmp_path / "cluster-blueprint" / "catalog").glob("*.json"))
    assert len(cached) == len(shipped)  # one cached parse per shipped file: each one is read
    assert _read_all(tmp_path) == []  # warm: no reader parsed its file itself (find_spec loads `ruamel` only)
