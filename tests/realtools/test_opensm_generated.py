"""Real OpenSM (Debian 3.3.23) on ibsim runs from the generated subnet-manager files.

The fabric of ``fixtures/ft2-hdr-rail-sm.yaml`` is simulated; ``ibnetdiscover`` output of it goes through
``blueprint sm-guids`` (root and compute-node GUID files, partitions with port GUIDs); the master's and the
standby's ``opensm.conf`` from ``generate`` are used as written except that ``/etc/opensm`` and
``/var/log`` point into the test directory. Verdicts come from OpenSM's log (read after it exits: it
buffers), from the port P_Key and SL-to-VL tables (``smpquery``) and from the SA (``saquery``).
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from ib_fixtures import plan_of, run_cli, simulators
from ib_fixtures import stop_process as _stop
from ibsim_harness import Simulator, _tool, missing_tools

from generator.emit import subnet_manager as sm_emit
from generator.emit.ibnetdiscover import render_netfile
from generator.plan.model import Plan

pytestmark = [pytest.mark.realtools]

FIXTURE = str(Path(__file__).resolve().parent / "fixtures" / "ft2-hdr-rail-sm.yaml")
WAIT_S = 60.0


@pytest.fixture
def simulator(tmp_path: Path) -> Iterator[Callable[..., Simulator]]:
    missing = missing_tools() + [t for t in ("smpquery", "saquery") if not _which(t)]
    if missing:
        msg = f"InfiniBand tools not installed: {', '.join(missing)}"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    yield from simulators(tmp_path)


def _which(tool: str) -> bool:
    return any(Path(d, tool).exists() for d in [*os.environ.get("PATH", "").split(":"), "/usr/sbin"])


@pytest.fixture
def daemons() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    try:
        yield started
    finally:
        for proc in started:
            _stop(proc)


def _ca_hosts(net: str) -> list[str]:
    """Net-file node ids of every CA (SIM_HOST values), in file order."""
    return [m.group(1) for m in re.finditer(r'^(?:Ca|Hca)\s+\d+\s+"([^"]+)"', net, re.M)]


def _setup(plan: Plan, sim: Simulator, host: str, work: Path, blueprint: str = FIXTURE) -> dict[str, Path]:
    """Discover, run `sm-guids`, write every SM member's opensm.conf relocated into ``work``."""
    (work / "ibnetdiscover.out").write_text(sim.ibnetdiscover(host))
    etc = work / "etc"
    # what the opensm role does: sm-guids output and the files it installs under /etc/opensm/<fabric>/
    code, _, err = run_cli(
        "sm-guids", blueprint, "--discovered", str(work / "ibnetdiscover.out"), "-o", str(etc / "compute")
    )
    assert code == 0, err
    confs: dict[str, Path] = {}
    for rel, text in sm_emit.render(plan.cluster, plan).items():
        if rel.startswith("compute/") and rel.endswith("/opensm.conf"):
            member = rel.split("/")[1]
            text = text.replace(f"{sm_emit.CONF_DIR}/", f"{etc}/").replace("/var/log/", f"{work}/{member}-")
            confs[member] = work / f"opensm-{member}.conf"
            confs[member].write_text(text)
    return confs


def _start_sm(sim: Simulator, host: str, conf: Path, work: Path) -> subprocess.Popen[bytes]:
    env = {**sim.client_env(host), "OSM_CACHE_DIR": str(work / host), "OSM_TMP_DIR": str(work / host)}
    (work / host).mkdir(exist_ok=True)
    return subprocess.Popen(
        [_tool("timeout"), "-k", "5", "300", _tool("opensm"), "-F", str(conf)],
        env=env,
        cwd=work,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )


def _text(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


def _query(sim: Simulator, host: str, *argv: str) -> str:
    proc = sim._run(host, [_tool(argv[0]), *argv[1:]], 30)
    assert proc.returncode == 0, f"{' '.join(argv)}: {proc.stderr[-500:]}"
    return proc.stdout


def _wait_pkeys(sim: Simulator, host: str, guid: str) -> str:
    deadline = time.monotonic() + WAIT_S
    out = ""
    while time.monotonic() < deadline:
        proc = sim._run(host, [_tool("smpquery"), "pkeys", "-G", guid, "1"], 30)
        out = proc.stdout
        if "0x800a" in out or "0x000a" in out:
            return out
        time.sleep(0.3)
    raise AssertionError(f"partitions never reached port {guid}: {out[-500:]}")


def test_opensm_runs_generated_ha_pair_partitions_and_ftree_roots(
    simulator: Callable[..., Simulator], daemons: list[subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    plan = plan_of(FIXTURE)
    net = render_netfile(plan, "compute")
    sim = simulator(net, "sm")
    cas = _ca_hosts(net)
    master_host, standby_host = cas[0], cas[1]
    confs = _setup(plan, sim, master_host, tmp_path)
    members = [m.name for m in sm_emit.sm_plan(plan.cluster, "compute", plan).members]
    assert len(members) == 2  # ha: true

    daemons.append(_start_sm(sim, master_host, confs[members[0]], tmp_path))
    # the probe port's P_Key table, set by the SM (the probe is not the SM's own port)
    dump = (tmp_path / "ibnetdiscover.out").read_text()
    m = re.search(r"Initiated from node \S+ port ([0-9a-f]+)", dump)
    assert m, dump[:300]
    sm_port = int(m.group(1), 16)  # ibnetdiscover ran from the SM's host
    probe = next(
        g
        for g in (tmp_path / "etc" / "compute" / "cn_guids.conf").read_text().split()
        if int(g, 16) != sm_port
    )
    pkeys = _wait_pkeys(sim, master_host, probe)
    with confs[members[1]].open("a") as conf:
        conf.write("force_log_flush TRUE\n")  # opensm.conf: flush after each message, so it can be followed
    daemons.append(_start_sm(sim, standby_host, confs[members[1]], tmp_path))

    table = pkeys.split()
    # Default=0x7fff, limited: tenant-a lists pools, so ports reach the SM through Default but not each
    # other (issue 25); only the SM's own port is a full member
    assert "0x7fff" in table and "0xffff" not in table
    assert "0x800a" in table  # tenant-a: the gpu pool, full member
    assert "0x000b" in table  # storage: every CA, limited member
    paths = _query(sim, master_host, "saquery", "--pkey", "0x800a", "-p")
    assert "pkey....................0x800A" in paths  # the SA answers inside the partition
    sl2vl = _query(sim, master_host, "smpquery", "sl2vl", "-G", probe, "1")
    row = _sl2vl_rows(sl2vl)[0]
    # NCCL_IB_SL=2 travels on a data VL (not VL15 = drop) that no other SL uses
    assert row[2] != 15 and row.count(row[2]) == 1, row

    # the standby enters STANDBY once its own discovery has found the higher-priority master: a sweep, not a
    # poll interval, so it is waited for rather than slept on
    standby_at = tmp_path / f"{members[1]}-opensm-compute.log"
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline and "Entering STANDBY state" not in _text(standby_at):
        time.sleep(0.2)
    for proc in reversed(daemons):
        _stop(proc)
    master_log = (tmp_path / f"{members[0]}-opensm-compute.log").read_text(errors="replace")
    standby_log = (tmp_path / f"{members[1]}-opensm-compute.log").read_text(errors="replace")

    spines = [d for d in plan.switches("compute") if d.role == "spine"]
    roots = (tmp_path / "etc" / "compute" / "root_guids.conf").read_text().split()
    cns = (tmp_path / "etc" / "compute" / "cn_guids.conf").read_text().split()
    assert len(roots) == len(spines) == 4
    assert "Entering MASTER state" in master_log
    assert "ftree tables configured on all switches" in master_log, master_log[-3000:]
    assert f"Fabric has {len(roots)} switches at rank 0 (roots)" in master_log
    assert f"({len(cns)} of them CNs)" in master_log
    assert not re.findall(r"ERR AB[0-9A-F]{2}", master_log), master_log[-3000:]
    assert "Entering STANDBY state" in standby_log, standby_log[-2000:]


def test_leaf_listed_as_root_is_rejected_before_opensm(
    simulator: Callable[..., Simulator], tmp_path: Path
) -> None:
    plan = plan_of(FIXTURE)
    net = render_netfile(plan, "compute")
    sim = simulator(net, "roots")
    _setup(plan, sim, _ca_hosts(net)[0], tmp_path)
    dump = tmp_path / "ibnetdiscover.out"
    good = tmp_path / "etc" / "compute" / "root_guids.conf"
    code, _, err = run_cli("sm-guids", FIXTURE, "--discovered", str(dump), "--check-roots", str(good))
    assert code == 0, err

    m = re.search(r"switchguid=0x([0-9a-f]+).*\n.*\"c-leaf-su1-r3\"", dump.read_text())
    assert m, "leaf c-leaf-su1-r3 not in the dump"
    bad = tmp_path / "bad_roots.conf"
    lines = good.read_text().splitlines()
    bad.write_text("\n".join([*lines[:2], f"0x{int(m.group(1), 16):016x}", *lines[3:]]) + "\n")
    code, _, err = run_cli("sm-guids", FIXTURE, "--discovered", str(dump), "--check-roots", str(bad))
    assert code == 1
    assert f"{bad}:3:" in err and "c-leaf-su1-r3 (leaf)" in err, err


def test_a_plan_without_a_top_tier_leaves_no_stale_root_file(
    simulator: Callable[..., Simulator], tmp_path: Path
) -> None:
    """The hypercube has no top tier, so no root file: `sm-guids --force` into a folder holding an earlier
    plan's root_guids.conf left it there, and the opensm role installs whatever root file it finds."""
    example = str(Path(__file__).resolve().parents[2] / "examples" / "hypercube-research.yaml")
    plan = plan_of(example)
    net = render_netfile(plan, "compute")
    sim = simulator(net, "cube")
    dump = tmp_path / "ibnetdiscover.out"
    dump.write_text(sim.ibnetdiscover(_ca_hosts(net)[0]))
    out = tmp_path / "etc"
    out.mkdir()
    (out / "root_guids.conf").write_text("0x0000000000001234\n")
    code, _, err = run_cli("sm-guids", example, "--discovered", str(dump), "-o", str(out))
    assert code == 2 and "--force" in err  # never replaced unasked
    assert (out / "root_guids.conf").exists()
    code, _, err = run_cli("sm-guids", example, "--discovered", str(dump), "-o", str(out), "--force")
    assert code == 0 and "no root file" in err, err
    assert not (out / "root_guids.conf").exists()
    assert (out / "cn_guids.conf").read_text().count("\n") == 64  # every HCA port of the 64 nodes


def _sl2vl_rows(out: str) -> list[list[int]]:
    """`smpquery sl2vl` rows ("ports: in 0, out 0: | 0| 1| ...|"): the VL of SL 0-15 each."""
    return [
        [int(v) for v in m.group(1).strip(" |").split("|")]
        for m in re.finditer(r"^ports:[^:]*:\s*(\|.*)$", out, re.M)
    ]


@pytest.mark.parametrize("sl", [9, 15])
def test_the_nccl_service_level_has_a_vl_of_its_own_on_every_port(
    simulator: Callable[..., Simulator], daemons: list[subprocess.Popen[bytes]], tmp_path: Path, sl: int
) -> None:
    """service_level 8-15: OpenSM folds each qos_sl2vl entry into the VLs the port operates (osm_qos.c
    sl2vl_update_table masks it); with OpenSM's default table SL 9 landed on VL1 beside SL 1 and SL 15 on VL7
    beside SL 7 on ibsim's VL0-7 ports. The generated table must leave the SL alone on its VL on the ports
    (CAs and switch ports) the real OpenSM programmed."""
    from generator.pipeline import load_and_resolve
    from generator.plan.build import build_plan

    text = Path(FIXTURE).read_text()
    assert "      service_level: 2\n" in text
    blueprint = tmp_path / "sl.yaml"
    blueprint.write_text(text.replace("      service_level: 2\n", f"      service_level: {sl}\n"))
    plan = build_plan(load_and_resolve(str(blueprint))[1])
    net = render_netfile(plan, "compute")
    sim = simulator(net, "sl")
    host = _ca_hosts(net)[0]
    confs = _setup(plan, sim, host, tmp_path, str(blueprint))
    master = sm_emit.sm_plan(plan.cluster, "compute", plan).members[0].name
    assert "\nqos TRUE\n" in confs[master].read_text()
    daemons.append(_start_sm(sim, host, confs[master], tmp_path))
    cns = (tmp_path / "etc" / "compute" / "cn_guids.conf").read_text().split()
    _wait_pkeys(sim, host, cns[-1])
    dump = (tmp_path / "ibnetdiscover.out").read_text()
    switch = re.search(r"^switchguid=(0x[0-9a-f]+)", dump, re.M)
    assert switch, dump[:300]
    rows = [r for g in cns[:4] for r in _sl2vl_rows(_query(sim, host, "smpquery", "sl2vl", "-G", g, "1"))]
    rows += _sl2vl_rows(_query(sim, host, "smpquery", "sl2vl", "-G", switch.group(1), "1"))
    assert len(rows) > 4
    for row in rows:
        assert row[sl] != 15 and row.count(row[sl]) == 1, (sl, row)
