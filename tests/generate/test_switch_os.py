"""``fabrics.<f>.switch_os``: every switch of a routed fabric gets exactly one configuration file, in the form
its operating system loads (cumulus: ``startup.yaml``, frr: ``frr.conf``; docs/switches.md), and the switch
inventory tells Ansible (read by the real ``ansible-inventory``) how to reach it and which file it installs.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import run_cli
from switch_os import with_switch_os

REPO = Path(__file__).resolve().parents[2]
ROCE_FT = REPO / "tests" / "realtools" / "fixtures" / "roce-ft2-rail.yaml"
ROCE_DF = REPO / "tests" / "realtools" / "fixtures" / "roce-dragonfly-small.yaml"
FILE = {"cumulus": "startup.yaml", "frr": "frr.conf"}
# what each OS's group must say: NVUE's network OS and Cumulus Linux's default user; a plain SSH host
CONNECTION = {
    "cumulus": {"ansible_network_os": "nvidia.nvue.nvue", "ansible_user": "cumulus"},
    "frr": {"ansible_connection": "ansible.builtin.ssh"},
}
CONNECTION_KEYS = {"ansible_network_os", "ansible_user", "ansible_connection"}


def ansible_bin(name: str) -> str:
    local = Path(sys.executable).parent / name  # the venv's ansible (as tests/ansible_playbooks/ansible_helpers.py)
    return str(local) if local.exists() else (shutil.which(name) or name)


def _generate(blueprint: Path, out: Path) -> Path:
    code, _, err = run_cli("generate", str(blueprint), "-o", str(out), "--quiet", "--only", "switches")
    assert code == 0, err
    return out / "switches"


def _switch_names(blueprint: Path, fabric: str) -> set[str]:
    from generator.pipeline import load_and_resolve
    from generator.plan.build import build_plan

    return {d.name for d in build_plan(load_and_resolve(str(blueprint))[1]).switches(fabric)}


def _files_per_switch(switches_dir: Path, fabric: str) -> dict[str, set[str]]:
    return {d.name: {f.name for f in d.iterdir()} for d in (switches_dir / fabric).iterdir()}


def _hostvars(switches_dir: Path) -> dict[str, dict[str, object]]:
    proc = subprocess.run(
        [ansible_bin("ansible-inventory"), "-i", "inventory.yml", "--list"],
        cwd=switches_dir,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["_meta"]["hostvars"]


def _assert_group(
    hostvars: dict[str, dict[str, object]], switches_dir: Path, fabric: str, os_name: str
) -> None:
    for name in _switch_names_from_disk(switches_dir, fabric):
        hv = hostvars[name]
        assert hv["cb_switch_fabric"] == fabric and hv["cb_switch_os"] == os_name
        assert hv["cb_switch_config"] == FILE[os_name]
        assert (switches_dir / fabric / name / str(hv["cb_switch_config"])).is_file()  # what the play copies
        assert {k: v for k, v in hv.items() if k in CONNECTION_KEYS} == CONNECTION[os_name]


def _switch_names_from_disk(switches_dir: Path, fabric: str) -> list[str]:
    return sorted(d.name for d in (switches_dir / fabric).iterdir())


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("os_name", [None, "cumulus", "frr"], ids=["default", "cumulus", "frr"])
def test_each_switch_gets_only_the_file_of_its_os(os_name: str | None, tmp_path: Path) -> None:
    bp = ROCE_DF if os_name is None else with_switch_os(ROCE_DF, tmp_path, compute=os_name)
    effective = os_name or "cumulus"  # the default: the catalogue's Spectrum switches run Cumulus Linux
    switches_dir = _generate(bp, tmp_path / "out")
    routers = _switch_names(bp, "compute")
    assert len(routers) == 12
    assert _files_per_switch(switches_dir, "compute") == {r: {FILE[effective]} for r in routers}
    assert {p.name for p in switches_dir.iterdir()} == {"asn-plan.csv", "inventory.yml", "compute"}
    _assert_group(_hostvars(switches_dir), switches_dir, "compute", effective)
    again = _generate(bp, tmp_path / "again")
    assert _tree(switches_dir) == _tree(again)  # byte-identical re-run


def _mixed_blueprint(tmp_path: Path) -> Path:
    """The rail fat-tree plus an Ethernet leaf-spine storage fabric: compute on Cumulus, storage on FRR."""
    doc = yaml.safe_load(ROCE_FT.read_text())
    doc["pools"][0]["spec"]["nics"].insert(
        1, {"purpose": "storage", "model": "cx6-dx", "count": 1, "speed_gbps": 100}
    )
    doc["fabrics"]["compute"]["switch_os"] = "cumulus"
    doc["fabrics"]["storage"] = {
        "technology": "ethernet-100",
        "topology": {"kind": "leaf-spine", "switch": "sn4600c"},
        "switch_os": "frr",
    }
    bp = tmp_path / "mixed.yaml"
    bp.write_text(yaml.safe_dump(doc, sort_keys=False))
    return bp


def test_mixed_cluster_compute_on_cumulus_storage_on_frr(tmp_path: Path) -> None:
    bp = _mixed_blueprint(tmp_path)
    switches_dir = _generate(bp, tmp_path / "out")
    compute, storage = _switch_names(bp, "compute"), _switch_names(bp, "storage")
    assert compute and storage and not compute & storage
    assert _files_per_switch(switches_dir, "compute") == {s: {"startup.yaml"} for s in compute}
    assert _files_per_switch(switches_dir, "storage") == {s: {"frr.conf"} for s in storage}
    hostvars = _hostvars(switches_dir)
    assert set(hostvars) == compute | storage
    _assert_group(hostvars, switches_dir, "compute", "cumulus")
    _assert_group(hostvars, switches_dir, "storage", "frr")
    with (switches_dir / "asn-plan.csv").open() as fh:  # one ASN plan for both fabrics
        rows = list(csv.DictReader(fh))
    assert {(r["fabric"], r["switch"]) for r in rows} == {("compute", s) for s in compute} | {
        ("storage", s) for s in storage
    }
    # the playbook reaches exactly the storage switches through their group
    proc = subprocess.run(
        [
            ansible_bin("ansible-playbook"),
            "-i",
            str(switches_dir / "inventory.yml"),
            "--list-hosts",
            "--limit",
            "switches_storage",
            str(REPO / "playbooks" / "switches.yml"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = re.search(r"hosts \((\d+)\):\n((?:\s+\S+\n?)+)", proc.stdout)
    assert found, proc.stdout
    assert set(found.group(2).split()) == storage and int(found.group(1)) == len(storage)


def test_unknown_switch_os_is_a_located_error(tmp_path: Path) -> None:
    text = ROCE_FT.read_text()
    assert text.endswith("    mtu: 4200\n")
    bp = tmp_path / "sonic.yaml"
    bp.write_text(text + "    switch_os: sonic\n")
    line = len(text.splitlines()) + 1  # the appended line; the key starts at column 5
    code, out, err = run_cli("validate", str(bp))
    assert code == 2
    assert (
        f"{bp}:{line}:5: error SCHEMA fabrics.compute.switch_os: Value error, expected cumulus, cumulus-linux, "
        "cumulus-linux@<release> (e.g. cumulus-linux@5.15) or frr (got 'sonic')"
    ) in out
    assert "Traceback" not in out + err
    code, _, err = run_cli("generate", str(bp), "-o", str(tmp_path / "out"), "--quiet", "--only", "switches")
    assert code == 2 and f"{bp}:{line}:5:" in err
    assert not (tmp_path / "out").exists()
