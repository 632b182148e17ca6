"""The opensm role's SHARP path, for real, on the Debian test root (community.general.chroot), issue 25.

NVIDIA's packages cannot be downloaded here, so a stand-in of NVIDIA's `sharp` package is built with
dpkg-deb and offered by a local apt repository inside the root; the role installs it with apt like the real
one. The stand-in holds only the paths NVIDIA documents for it (catalogue subnet_managers.yaml): the
Aggregation Manager <prefix>/bin/sharp_am ("$HPCX_SHARP_DIR/bin/sharp_am", HPCX_SHARP_DIR = /opt/mellanox/sharp
with DOCA-Host) and the unit <prefix>/systemd/system/sharp_am.service that NVIDIA's sharp_daemons_setup.sh
installs; their contents are test stubs.

* upstream OpenSM (no SHARP), run first: the role installs, writes and enables nothing for SHARP, even with the
  package on offer;
* NVIDIA's OpenSM with ``sharp: true``: the package is installed, sharp_am.cfg is at /etc/sharp/sharp_am.cfg
  with the generated content, opensm.conf enables SHARP on the switches (``sharp_enabled 2``), the packaged
  unit is in /etc/systemd/system with a drop-in that runs that config after the fabric's OpenSM; a second run
  changes nothing. No systemd in a chroot: ``opensm_hardware_present=false`` skips the start, as for OpenSM.

Files are parsed here (key/value, unit sections), not compared with the role's own templates.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from ansible_helpers import ansible_bin, chroot_root_fixture, root_tarball_fixture  # noqa: F401  (fixtures)
from conftest import run_cli
from real_tools import missing_executables, needs

pytestmark = pytest.mark.ansible_host

BLUEPRINT = """\
apiVersion: cluster-blueprint/v1
name: sharp-am
site: {{name: lab, rows: 2, racks_per_row: 8, rack: {{units: 48, power_kw: 40}}}}
pools:
  - {{name: gpu, role: gpu, count: 4, server: dgx-h100, placement: {{nodes_per_rack: 2}}}}
  - name: sm
    role: management
    count: 2
    spec:
      gpu: null
      gpus: 0
      gpu_interconnect: none
      nics:
        - {{purpose: compute, model: cx7, count: 1, ports: 1, speed_gbps: 400}}
        - {{purpose: management, model: x710, count: 1, ports: 1, speed_gbps: 1}}
      power_kw: 0.8
      rack_units: 1
    ports:
      - {{role: compute, rdma: mlx5_0, netdev: ibp1s0}}
fabrics:
  compute:
    technology: infiniband-ndr
    topology: {{kind: fat-tree, tiers: 2, switch: qm9700, rail_optimized: false}}
    subnet_manager: {{kind: opensm, ha: true, routing_engine: ftree, {sm}}}
"""
NVIDIA = "flavour: opensm-nvidia, sharp: true"
UPSTREAM = "flavour: opensm-upstream"
PREFIX = "/opt/mellanox/sharp"  # SHARP Rev 3.12.0, Appendix E: HPCX_SHARP_DIR default with DOCA-Host
STUB_UNIT = (
    "[Unit]\nDescription=test stand-in of NVIDIA's sharp_am.service\n\n[Service]\nExecStart=/bin/true\n"
)
REPO = "/srv/cb-test-sharp"
SOURCES = "/etc/apt/sources.list.d/cb-test-sharp.list"


def _stub_package(root: Path, work: Path) -> None:
    """A `sharp` .deb with NVIDIA's documented paths, and a trusted local apt repository in ``root`` offering it."""
    needs(missing_executables(["dpkg-deb"]), "dpkg-deb builds the stand-in SHARP package")
    tree = work / "sharp-pkg"
    (tree / "DEBIAN").mkdir(parents=True)
    (tree / "DEBIAN" / "control").write_text(
        "Package: sharp\nVersion: 0.0-cbtest\nArchitecture: all\nMaintainer: cluster-blueprint tests <none>\n"
        "Description: test stand-in for NVIDIA's SHARP package (paths only)\n"
    )
    binary = tree / PREFIX.lstrip("/") / "bin" / "sharp_am"
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\nexit 0\n")
    binary.chmod(0o755)
    unit = tree / PREFIX.lstrip("/") / "systemd" / "system" / "sharp_am.service"
    unit.parent.mkdir(parents=True)
    unit.write_text(STUB_UNIT)
    repo = root / REPO.lstrip("/")
    repo.mkdir(parents=True, exist_ok=True)
    deb = repo / "sharp_0.0-cbtest_all.deb"
    proc = subprocess.run(["dpkg-deb", "--root-owner-group", "--build", str(tree), str(deb)],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    data = deb.read_bytes()
    control = (tree / "DEBIAN" / "control").read_text()
    (repo / "Packages").write_text(
        f"{control}Filename: ./{deb.name}\nSize: {len(data)}\nSHA256: {hashlib.sha256(data).hexdigest()}\n"
    )
    (root / SOURCES.lstrip("/")).write_text(f"deb [trusted=yes] file:{REPO} ./\n")
    # only this source's index, keeping the Debian lists the other tests use
    proc = subprocess.run(
        ["chroot", str(root), "apt-get", "update", "-o", f"Dir::Etc::SourceList={SOURCES}",
         "-o", "Dir::Etc::SourceParts=-", "-o", "APT::Get::List-Cleanup=0"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]


def _build(tmp: Path, name: str, sm: str) -> Path:
    bp = tmp / f"{name}.yaml"
    bp.write_text(BLUEPRINT.format(sm=sm))
    out = tmp / name
    code, _, err = run_cli(
        "generate", str(bp), "-o", str(out), "--quiet", "--only", "ansible,subnet_manager,nccl"
    )
    assert code == 0, err
    return out


def _play(build: Path, inventory: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [ansible_bin("ansible-playbook"), "-i", str(inventory), "-i", "../subnet_manager/inventory.yml",
         "--limit", "sm001", "-e", "opensm_hardware_present=false", "opensm.yml"],
        cwd=build / "ansible", capture_output=True, text=True, timeout=600,
        env={"ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.json", "PATH": "/usr/bin:/bin:/usr/sbin:/sbin"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def _tasks(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Task name → sm001's result (the last one of that name)."""
    names = ((t["task"]["name"].split(" : ", 1)[-1], t) for p in result["plays"] for t in p["tasks"])
    return {name: t["hosts"].get("sm001", {}) for name, t in names}


def _keys(text: str) -> dict[str, str]:
    """opensm.conf / sharp_am.cfg: `key value` lines, comments and blank lines skipped."""
    pairs = (
        line.split(None, 1)
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    )
    return {p[0]: (p[1].strip() if len(p) > 1 else "") for p in pairs}


def _unit(text: str) -> dict[str, list[tuple[str, str]]]:
    """A systemd unit file: section → (key, value) in order (keys repeat: `ExecStart=` resets the list)."""
    sections: dict[str, list[tuple[str, str]]] = {}
    current = ""
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1]
            sections.setdefault(current, [])
        else:
            key, _, value = line.partition("=")
            sections[current].append((key, value))
    return sections


def _installed(root: Path, package: str) -> bool:
    status = (root / "var/lib/dpkg/status").read_text()
    return any(
        f"Package: {package}\n" in s and "Status: install ok installed" in s for s in status.split("\n\n")
    )


def _inventory(tmp: Path, root: Path) -> Path:
    inv = tmp / "chroot.yml"
    inv.write_text(
        "all:\n  vars:\n    ansible_connection: community.general.chroot\n    ansible_become: false\n"
        f"    ansible_python_interpreter: /usr/bin/python3\n  hosts:\n    sm001:\n      ansible_host: {root}\n"
    )
    return inv


SHARP_TASKS = ("Install the SHARP package (Aggregation Manager)", "Install the generated sharp_am.cfg")


def test_upstream_opensm_gets_no_sharp_and_nvidias_gets_the_aggregation_manager(
    chroot_root: Path, tmp_path: Path
) -> None:
    root = chroot_root
    inv = _inventory(tmp_path, root)
    try:
        _stub_package(root, tmp_path)
        # 1. upstream OpenSM: nothing for SHARP, though the package is on offer
        upstream = _build(tmp_path, "upstream", UPSTREAM)
        tasks = _tasks(_play(upstream, inv))
        assert tasks["SHARP Aggregation Manager (NVIDIA's OpenSM with sharp on)"].get("skipped") is True
        assert not any(name in tasks for name in SHARP_TASKS)
        assert not _installed(root, "sharp")
        assert not (root / "etc/sharp").exists()
        assert not (root / "etc/systemd/system/sharp_am.service").exists()
        assert not (root / "etc/systemd/system/sharp_am.service.d").exists()
        assert "sharp_enabled" not in _keys((root / "etc/opensm/compute/opensm.conf").read_text())
        assert "NCCL_COLLNET_ENABLE=0" in (upstream / "nccl/gpu/nccl.conf").read_text().splitlines()

        # 2. NVIDIA's OpenSM with SHARP
        nvidia = _build(tmp_path, "nvidia", NVIDIA)
        first = _play(nvidia, inv)
        tasks = _tasks(first)
        assert tasks["Install the SHARP package (Aggregation Manager)"].get("changed") is True
        assert tasks["Enable and start the Aggregation Manager"].get("skipped") is True  # no systemd here
        assert _installed(root, "sharp")
        _check_sharp_files(root, nvidia)
        second = _play(nvidia, inv)
        stats = second["stats"]["sm001"]
        assert stats["failures"] == 0 and stats["changed"] == 0, stats
    finally:
        (root / SOURCES.lstrip("/")).unlink(missing_ok=True)


def _check_sharp_files(root: Path, build: Path) -> None:
    sm = build / "subnet_manager" / "compute"
    # the AM's configuration where NVIDIA documents it, as generated: OpenSM's port (ib_port_guid 0)
    cfg = _keys((root / "etc/sharp/sharp_am.cfg").read_text())
    assert cfg == _keys((sm / "sharp_am.cfg").read_text())
    assert int(cfg["ib_port_guid"], 16) == 0
    # the SM enables SHARP on the switches: NVIDIA's OpenSM `sharp_enabled 2` (2 = enable)
    conf = _keys((root / "etc/opensm/compute/opensm.conf").read_text())
    assert conf["sharp_enabled"] == "2" and conf["sm_priority"] == "15" and conf["routing_engine"] == "ftree"
    # the packaged unit, installed as sharp_daemons_setup.sh does; the drop-in runs the generated config
    assert (root / "etc/systemd/system/sharp_am.service").read_text() == STUB_UNIT
    drop = _unit((root / "etc/systemd/system/sharp_am.service.d/cluster-blueprint.conf").read_text())
    assert ("After", "cluster-blueprint-opensm@compute.service") in drop["Unit"]
    assert ("Requires", "cluster-blueprint-opensm@compute.service") in drop["Unit"]
    starts = [v for k, v in drop["Service"] if k == "ExecStart"]
    assert starts[0] == "" and len(starts) == 2  # reset the packaged command, then one of ours
    argv = starts[1].split()
    assert argv == [f"{PREFIX}/bin/sharp_am", "-O", "/etc/sharp/sharp_am.cfg"]
    assert (root / argv[0].lstrip("/")).is_file()  # the binary the package installed
    # NCCL uses CollNet only now that the SM really enables SHARP
    assert "NCCL_COLLNET_ENABLE=1" in (build / "nccl/gpu/nccl.conf").read_text().splitlines()
