"""The generated tree topology and NodeName lines, loaded by a real slurmctld (Debian's Slurm 22.05 here).

slurmctld runs in the foreground on free ports with auth/none and a state directory under tmp_path;
nodes are declared State=CLOUD so it does not try to resolve the made-up hostnames. ``scontrol show
topology`` must then list exactly our switches, levels, nodes and children. Slurm 22.05 predates
topology/block (23.11) and topology.yaml (25.05), so only the tree files are checked this way.
"""

from __future__ import annotations

import getpass
import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
from real_tools import missing_executables
from slurm_blueprints import planned
from vendor_tables import gcp_a3_mega_stage_scripts, gcp_long_prolog_timers

from generator.emit.slurm import render
from generator.emit.slurm.hostlist import expand

SLURMCTLD = shutil.which("slurmctld") or (
    "/usr/sbin/slurmctld" if os.path.exists("/usr/sbin/slurmctld") else None
)
SCONTROL = shutil.which("scontrol")
pytestmark = pytest.mark.needs_tools(
    missing_executables(("slurmctld", "scontrol")), hint="apt-get install slurmctld slurm-client"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _conf(tmp: Path, fragment: str, suggested_partitions: bool = False) -> Path:
    """slurm.conf: the fragment's settings and nodes, and one partition over every node, or with
    ``suggested_partitions`` the fragment's own (commented-out) PartitionName lines."""
    user = getpass.getuser()
    lines = [
        "ClusterName=bptest",
        "SlurmctldHost=localhost",
        "AuthType=auth/none",
        "CredType=cred/none",
        f"SlurmctldPort={_free_port()}",
        f"SlurmdPort={_free_port()}",
        f"StateSaveLocation={tmp / 'state'}",
        f"SlurmctldPidFile={tmp / 'slurmctld.pid'}",
        f"SlurmctldLogFile={tmp / 'slurmctld.log'}",
        f"SlurmUser={user}",
        "SelectType=select/cons_tres",
        "ProctrackType=proctrack/linuxproc",
        "MpiDefault=none",
    ]
    for line in fragment.splitlines():
        if line and not line.startswith("#"):
            lines.append(line.replace("State=UNKNOWN", "State=CLOUD"))
    if suggested_partitions:
        lines += [ln[2:] for ln in fragment.splitlines() if ln.startswith("# PartitionName=")]
    else:
        lines.append("PartitionName=batch Nodes=ALL Default=YES State=UP")
    (tmp / "state").mkdir()
    path = tmp / "slurm.conf"
    path.write_text("\n".join(lines) + "\n")
    return path


def _scontrol(conf: Path, *args: str) -> str:
    """Start slurmctld on ``conf`` (foreground, bounded waits), run ``scontrol args``, stop it."""
    env = {**os.environ, "SLURM_CONF": str(conf)}
    proc = subprocess.Popen(
        [SLURMCTLD, "-D", "-f", str(conf)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            ping = subprocess.run([SCONTROL, "ping"], env=env, capture_output=True, text=True, timeout=10)
            if "is UP" in ping.stdout:
                break
            if proc.poll() is not None:
                log = conf.parent / "slurmctld.log"
                pytest.fail("slurmctld exited: " + (log.read_text()[-2000:] if log.exists() else "no log"))
            time.sleep(0.5)
        else:
            pytest.fail("slurmctld did not come up in 30 s")
        return subprocess.run([SCONTROL, *args], env=env, capture_output=True, text=True, timeout=20).stdout
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def _show_topology(conf: Path) -> dict[str, tuple[int, list[str], list[str]]]:
    out = _scontrol(conf, "show", "topology")
    tree: dict[str, tuple[int, list[str], list[str]]] = {}
    for line in out.splitlines():
        kv = dict(re.findall(r"(\w+)=(\S+)", line))
        if "SwitchName" in kv:
            tree[kv["SwitchName"]] = (
                int(kv["Level"]),
                expand(kv.get("Nodes", "")),
                expand(kv.get("Switches", "")),
            )
    return tree


@pytest.mark.parametrize(
    "name",
    [
        "superpod",
        "tier3",
        "dragonfly",
        "non-rail",
        "torus-switched",
        "unattached-leaf",
        "nvl72-mixed",
        "nvl72-partial",
    ],
)
def test_slurmctld_loads_our_tree(name: str, tmp_path: Path) -> None:
    cluster, plan = planned(name)
    files = render(cluster, plan)
    (tmp_path / "topology.conf").write_text(files["topology.conf"])
    conf = _conf(tmp_path, files["slurm.conf.fragment"])
    got = _show_topology(conf)
    ours: dict[str, tuple[list[str], list[str]]] = {}
    for raw in files["topology.conf"].splitlines():
        kv = dict(re.findall(r"(\w+)=(\S+)", raw.split("#", 1)[0]))
        if kv:
            ours[kv["SwitchName"]] = (expand(kv.get("Nodes", "")), expand(kv.get("Switches", "")))
    assert set(got) == set(ours)
    for sw, (nodes, children) in ours.items():
        level, got_nodes, got_children = got[sw]
        assert sorted(got_children) == sorted(children)
        if nodes:  # a leaf: level 0, exactly our nodes
            assert level == 0 and sorted(got_nodes) == sorted(nodes)
        else:  # an upper switch: Slurm lists every node beneath it
            below = {n for c in children for n in got[c][1]}
            assert level == 1 + max(got[c][0] for c in children) and set(got_nodes) == below
    top = max(got.values(), key=lambda t: t[0])
    assert sorted(top[1]) == sorted(h for p in cluster.pools if p.role == "gpu" for h in p.hostnames)


def test_slurmctld_loads_the_a3_mega_job_prolog(tmp_path: Path) -> None:
    """The A3 Mega fragment's Prolog/Epilog and long-prolog timers, as a real slurmctld reads them: the
    script stage_scripts.sh stages (test data) and the Toolkit's long-prolog template's TIMERS."""
    cluster, plan = planned("a3mega")
    conf = _conf(tmp_path, render(cluster, plan)["slurm.conf.fragment"])
    shown = dict(
        (k.strip(), v.strip())
        for k, _, v in (ln.partition("=") for ln in _scontrol(conf, "show", "config").splitlines())
    )
    staged = gcp_a3_mega_stage_scripts()
    timers = gcp_long_prolog_timers()
    assert shown["Prolog"] == staged.path and shown["Epilog"] == staged.path, shown
    # Contain implies Alloc (slurm.conf(5)), which Slurm lists too
    assert set(shown["PrologFlags"].split(",")) == {*timers["PrologFlags"].split(","), "Alloc"}, shown
    for key in ("PrologEpilogTimeout", "MessageTimeout", "BatchStartTimeout"):
        assert shown[key].split()[0] == timers[key], (key, shown[key])


@pytest.mark.parametrize("name", ["tenants", "vendors", "superpod"])
def test_suggested_partitions_never_join_pools_that_cannot_run_one_job(name: str, tmp_path: Path) -> None:
    """The fragment's one `PartitionName=batch` spanned InfiniBand tenants (each pinned to its own P_Key,
    limited members of Default) and GPU vendors/models. Slurm reads the suggested partitions back: each holds
    pools of one tenant and one GPU model, and together they hold every node."""
    from generator.plan.subnet_manager import home_partition

    cluster, plan = planned(name)
    files = render(cluster, plan)
    (tmp_path / "topology.conf").write_text(files["topology.conf"])
    conf = _conf(tmp_path, files["slurm.conf.fragment"], suggested_partitions=True)
    shown: dict[str, list[str]] = {}
    for line in _scontrol(conf, "-o", "show", "partition").splitlines():
        kv = dict(re.findall(r"(\w+)=(\S+)", line))
        shown[kv["PartitionName"]] = expand(kv["Nodes"])
    sm = cluster.fabrics["compute"].spec.subnet_manager
    group = {}
    for pool in cluster.pools:
        if pool.role != "gpu":  # the Slurm nodes are the compute pools'
            continue
        home = home_partition(sm, pool.name) if sm is not None else None
        for h in pool.hostnames:
            group[h] = (home[0] if home else None, pool.gpu_id)
    assert sorted(n for nodes in shown.values() for n in nodes) == sorted(group)
    for part, nodes in shown.items():
        assert len({group[n] for n in nodes}) == 1, (part, sorted({group[n] for n in nodes}, key=str))
    assert (len(shown) == 1) == (name == "superpod"), shown
