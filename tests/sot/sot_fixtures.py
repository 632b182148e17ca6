"""Builds for the `sot push` tests: the RoCE example cut to scalable units of 8 nodes, built with 4 nodes
and the same grown to 8 (one full SU).

The growth adds 4 nodes, a rack and their cables, moves the switches to their final rack units and
re-sizes cables (no cable changes ends): `blueprint diff` of the two says exactly what a push of the grown
build must create and update. The units are small because a real Nautobot spends about half a second of
CPU on each cable it creates (tests/sot/test_nautobot_live.py, ~0.5 s a cable measured in CI on 2 cores):
4 -> 8 nodes (106 -> 142 cables) exercises every kind of change in a few minutes, where the example's
own 32-node units (24 -> 32 nodes, 420 -> 550 cables) took 14 minutes of the CI.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest

from conftest import EXAMPLES, run_cli

SOURCE = EXAMPLES / "roce-rail-2tier.yaml"
SMALL, GROWN = 4, 8  # GPU nodes
UNIT = 8  # nodes per scalable unit


def _blueprint(folder: Path, nodes: int) -> Path:
    text = SOURCE.read_text()
    assert "    count: 64\n" in text and "scalable_unit: 32}" in text
    path = folder / f"roce-{nodes}.yaml"
    text = text.replace("    count: 64\n", f"    count: {nodes}\n")
    path.write_text(text.replace("scalable_unit: 32}", f"scalable_unit: {UNIT}}}"))
    return path


def _generate(blueprint: Path, out: Path) -> Path:
    code, _, err = run_cli("generate", str(blueprint), "-o", str(out), "-q")
    assert code == 0, err
    return out


@pytest.fixture(scope="session")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``small`` and ``grown`` build folders, and their blueprints."""
    prebuilt = os.environ.get("CB_SOT_PREBUILT")
    if prebuilt:  # a developer's folder of build-24/, build-32/, roce-24.yaml, roce-32.yaml, growth.json
        p = Path(prebuilt)
        return {
            "small": p / f"build-{SMALL}",
            "grown": p / f"build-{GROWN}",
            "small_yaml": p / f"roce-{SMALL}.yaml",
            "grown_yaml": p / f"roce-{GROWN}.yaml",
            "growth": p / "growth.json",
        }
    root = tmp_path_factory.mktemp("sot")
    small, grown = _blueprint(root, SMALL), _blueprint(root, GROWN)
    return {
        "small": _generate(small, root / f"build-{SMALL}"),
        "grown": _generate(grown, root / f"build-{GROWN}"),
        "small_yaml": small,
        "grown_yaml": grown,
    }


@pytest.fixture(scope="session")
def growth(builds: dict[str, Path]) -> dict:
    """`blueprint diff --format json` of the small and the grown blueprint."""
    if "growth" in builds:
        return json.loads(builds["growth"].read_text())
    code, out, err = run_cli("diff", str(builds["small_yaml"]), str(builds["grown_yaml"]), "--format", "json")
    assert code == 1, err
    return json.loads(out)


def netbox_rows(build: Path, name: str) -> list[dict[str, str]]:
    with open(build / "cabling" / "netbox" / name, newline="") as fh:
        return list(csv.DictReader(fh))
