"""``switch_os: cumulus-linux@<release>``: every key of a generated ``startup.yaml`` is a command of that release,
checked key by key (with its value) against NVIDIA's published command syntax kept in tests/data/nvue/
(origin in each file's header), for every release the catalogue documents; and the RoCE QoS is NVIDIA's.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import run_cli
from switch_os import with_switch_os

from blueprints.catalog.switch_os import latest_release, releases

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data" / "nvue"
ROCE_FT = REPO / "tests" / "realtools" / "fixtures" / "roce-ft2-rail.yaml"
ROCE_PCIE = REPO / "tests" / "ansible_playbooks" / "data" / "roce-pcie.yaml"  # PFC priority 4, DSCP 24
ETH_STORAGE = "ethernet-100"


def _commands(release: str) -> list[list[str]]:
    lines = (DATA / f"cumulus-linux-{release}.txt").read_text().splitlines()
    return [ln.split("#")[0].split() for ln in lines if ln.strip() and not ln.startswith("#")]


def _token_ok(pattern: str, token: str) -> bool:
    if pattern.startswith("(") and pattern.endswith(")"):
        return token in pattern[1:-1].split("|")
    if pattern == "<bytes>":
        return re.fullmatch(r"[0-9]+", token) is not None
    rng = re.fullmatch(r"<([0-9]+)-([0-9]+)>", pattern)
    if rng:
        return token.isdigit() and int(rng.group(1)) <= int(token) <= int(rng.group(2))
    if pattern.startswith("<") and pattern.endswith(">"):
        return bool(token)
    return pattern == token


def _matches(command: list[str], known: list[list[str]]) -> bool:
    return any(len(p) == len(command) and all(map(_token_ok, p, command)) for p in known)


def _flatten(node: Any, prefix: list[str]) -> list[list[str]]:
    """`nv set` command per leaf of an NVUE document (an empty mapping ends a path at its identifier)."""
    if isinstance(node, dict):
        if not node:
            return [prefix]
        return [cmd for k, v in node.items() for cmd in _flatten(v, [*prefix, str(k)])]
    return [[*prefix, str(node)]]


def _startups(blueprint: Path, out: Path) -> dict[str, list[list[str]]]:
    code, _, err = run_cli("generate", str(blueprint), "-o", str(out), "--quiet", "--only", "switches")
    assert code == 0, err
    found = {}
    for f in sorted((out / "switches").rglob("startup.yaml")):
        doc = yaml.safe_load(f.read_text())
        assert isinstance(doc, list) and len(doc) == 1 and set(doc[0]) == {"set"}
        found[str(f.relative_to(out))] = _flatten(doc[0]["set"], ["nv", "set"])
    assert found
    return found


def test_the_catalogue_documents_5_14_and_5_15_and_5_15_is_the_default() -> None:
    assert set(releases()) >= {"5.14", "5.15"} and latest_release() == releases()[-1]
    for release in releases():  # every documented release has its command list here
        assert _commands(release)


@pytest.mark.parametrize("blueprint", [ROCE_FT, ROCE_PCIE], ids=["fat-tree", "pfc-priority-4"])
@pytest.mark.parametrize("release", ["5.14", "5.15"])
def test_every_key_is_a_command_of_the_declared_release(
    blueprint: Path, release: str, tmp_path: Path
) -> None:
    bp = with_switch_os(blueprint, tmp_path, compute=f"cumulus-linux@{release}")
    own, other = _commands(release), _commands("5.15" if release == "5.14" else "5.14")
    checked = 0
    for rel, commands in _startups(bp, tmp_path / "out").items():
        bad = [" ".join(c) for c in commands if not _matches(c, own)]
        assert not bad, f"{rel}: not Cumulus Linux {release} commands: {bad[:5]}"
        # the files really differ by release: some keys are refused by the other release's list
        assert any(not _matches(c, other) for c in commands), rel
        checked += len(commands)
    assert checked > 50  # the small fixtures: 97 (one leaf) to several hundred keys


def test_default_is_the_latest_release(tmp_path: Path) -> None:
    default = _startups(ROCE_FT, tmp_path / "default")
    pinned = _startups(
        with_switch_os(ROCE_FT, tmp_path, compute=f"cumulus-linux@{latest_release()}"), tmp_path / "p"
    )
    assert default == pinned
    code, _, err = run_cli(
        "generate", str(ROCE_FT), "-o", str(tmp_path / "inv"), "--quiet", "--only", "switches"
    )
    assert code == 0, err
    inventory = yaml.safe_load((tmp_path / "inv" / "switches" / "inventory.yml").read_text())
    group = inventory["all"]["children"]["switches"]["children"]["switches_compute"]["vars"]
    assert group["cb_switch_os"] == "cumulus" and group["cb_switch_os_release"] == latest_release()


def _qos(blueprint: Path, tmp_path: Path) -> dict[str, Any]:
    out = tmp_path / "qos"
    code, _, err = run_cli("generate", str(blueprint), "-o", str(out), "--quiet", "--only", "switches")
    assert code == 0, err
    first = sorted((out / "switches" / "compute").iterdir())[0] / "startup.yaml"
    return yaml.safe_load(first.read_text())[0]["set"]["qos"]


def test_roce_qos_is_nvidias(tmp_path: Path) -> None:
    """NVIDIA's RoCE page: ECN on traffic class 3 at 150,000 / 1,500,000 bytes (NVUE's KB is 1,024 bytes, so
    never `150KB`), probability 100; lossless pool roce-lossless at 60 % with default-lossy at 40 %."""
    qos = _qos(ROCE_FT, tmp_path)
    ecn = qos["congestion-control"]["default-global"]["traffic-class"]
    assert ecn == {
        3: {"ecn": "enable", "min-threshold": 150_000, "max-threshold": 1_500_000, "probability": 100}
    }
    assert qos["traffic-pool"] == {
        "default-lossy": {"memory-percent": 40},
        "roce-lossless": {"memory-percent": 60, "switch-priority": {3: {}}},
    }
    assert "egress-queue-mapping" not in qos  # priority 3 is already RoCE's traffic class


def test_another_roce_priority_is_moved_to_traffic_class_3_as_nvidia_shows(tmp_path: Path) -> None:
    qos = _qos(ROCE_PCIE, tmp_path)  # PFC priority 4
    assert qos["egress-queue-mapping"]["default-global"]["switch-priority"] == {
        4: {"traffic-class": 3},
        3: {"traffic-class": 0},
    }
    assert set(qos["pfc"]["default-global"]["switch-priority"]) == {4}
    assert set(qos["congestion-control"]["default-global"]["traffic-class"]) == {3}


def test_unknown_release_is_a_located_rule_error(tmp_path: Path) -> None:
    text = ROCE_FT.read_text()
    assert text.endswith("    mtu: 4200\n")
    bp = tmp_path / "cl599.yaml"
    bp.write_text(text + "    switch_os: cumulus-linux@5.99\n")
    line = len(text.splitlines()) + 1
    code, out, err = run_cli("validate", str(bp))
    assert code == 1, out + err
    assert f"{bp}:{line}:5: error NET016 compute fabric declares `switch_os: cumulus-linux@5.99`" in out
    assert "Traceback" not in out + err
    code, _, err = run_cli("generate", str(bp), "-o", str(tmp_path / "out"), "--quiet", "--only", "switches")
    assert code == 1 and "NET016" in err + _ and not (tmp_path / "out").exists()
