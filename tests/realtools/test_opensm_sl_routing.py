"""Real OpenSM (Debian 3.3.23) on the generated opensm.conf of every routing engine the blueprint accepts, and
on the premise of rule NET029.

* Every engine the schema takes and the distribution's OpenSM has, with QoS off (service_level 0) and on
  (2, 9): OpenSM reads every key of the generated file, with no "Unrecognized token", "Invalid Cached
  Option Value" or "Warning: Cached Option" (what osm_subnet.c prints while it loads the file).
* DFSSSP on the hypercube example with service_level 2: it needs several virtual lanes and hands paths SLs
  0-7, while the generated qos_sl2vl puts SL 2 alone on VL1 and every other SL on VL0 on the switches: the
  engine's lanes are merged again (NET029's warning).
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import get_args

import pytest
from ib_fixtures import simulators
from ib_fixtures import stop_process as _stop
from ibsim_harness import Simulator, _tool, missing_tools
from real_tools import missing_executables

from blueprints.catalog import subnet_managers
from blueprints.models.fabric import RoutingEngine
from generator.emit import subnet_manager as sm_emit
from generator.emit.ibnetdiscover import render_netfile
from generator.plan.model import Plan

pytestmark = [pytest.mark.realtools]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "hypercube-research.yaml"
COMPLAINTS = re.compile(r"Unrecognized token|Invalid Cached Option|Warning: Cached Option|invalid", re.I)
UPSTREAM = subnet_managers._document().flavours["opensm-upstream"].routing_engines
# ar_updn is NVIDIA's OpenSM's only (NET022 refuses it with the distribution's OpenSM)
ENGINES = [e for e in get_args(RoutingEngine) if e in UPSTREAM]


def _plan(tmp_path: Path, engine: str, sl: int) -> Plan:
    from generator.pipeline import load_and_resolve
    from generator.plan.build import build_plan

    text = EXAMPLE.read_text()
    # the example's own engine (nue), whichever it is, replaced by the one under test
    assert len(re.findall(r"routing_engine: [\w-]+\}", text)) == 1
    blueprint = tmp_path / "bp.yaml"
    blueprint.write_text(
        re.sub(r"routing_engine: [\w-]+\}", f"routing_engine: {engine}, service_level: {sl}}}", text)
    )
    return build_plan(load_and_resolve(str(blueprint))[1])


def _conf(plan: Plan, work: Path) -> Path:
    """The master's generated opensm.conf with /etc/opensm and /var/log moved into ``work``."""
    files = sm_emit.render(plan.cluster, plan)
    rel = next(r for r in files if r.startswith("compute/") and r.endswith("/opensm.conf"))
    (work / "partitions.conf").write_text(files["compute/partitions.conf"])
    conf = work / "opensm.conf"
    conf.write_text(
        files[rel].replace(f"{sm_emit.CONF_DIR}/compute/", f"{work}/").replace("/var/log/", f"{work}/")
    )
    return conf


def _load(conf: Path, work: Path) -> str:
    """What OpenSM prints while it reads ``conf`` (`-c` writes its option template and exits: no fabric)."""
    proc = subprocess.run(
        [
            _tool("timeout"),
            "-k",
            "5",
            "60",
            _tool("opensm"),
            "-F",
            str(conf),
            "-c",
            str(work / "template.conf"),
        ],
        capture_output=True,
        text=True,
        errors="replace",
        check=False,
        stdin=subprocess.DEVNULL,
        cwd=work,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return proc.stdout + proc.stderr


@pytest.mark.needs_tools(missing_executables(("opensm", "timeout")), hint="apt-get install opensm")
@pytest.mark.parametrize("sl", [0, 2, 9])
@pytest.mark.parametrize("engine", ENGINES)
def test_opensm_reads_every_key_of_the_generated_conf(tmp_path: Path, engine: str, sl: int) -> None:
    conf = _conf(_plan(tmp_path, engine, sl), tmp_path)
    out = _load(conf, tmp_path)
    assert f"Loading Cached Option:routing_engine = {engine}" in out, out[-2000:]
    assert ("Loading Cached Option:qos = TRUE" in out) == (sl != 0), out[-2000:]
    assert not COMPLAINTS.findall(out), out[-3000:]


@pytest.mark.needs_tools(missing_executables(("opensm", "timeout")), hint="apt-get install opensm")
def test_the_load_check_sees_a_key_opensm_does_not_know(tmp_path: Path) -> None:
    """The check above can fail: a key OpenSM 3.3.23 lacks (NVIDIA's sharp_enabled) and a value out of range."""
    conf = _conf(_plan(tmp_path, "minhop", 2), tmp_path)
    conf.write_text(conf.read_text() + "sharp_enabled 2\nsm_priority 99\n")
    assert len(COMPLAINTS.findall(_load(conf, tmp_path))) == 2


@pytest.fixture
def simulator(tmp_path: Path) -> Iterator[Callable[..., Simulator]]:
    missing = missing_tools() + missing_executables(("smpquery",))
    if missing:
        msg = f"InfiniBand tools not installed: {', '.join(missing)}"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    yield from simulators(tmp_path)


def _sl2vl_row(sim: Simulator, host: str, guid: str) -> list[int]:
    """VL of SL 0-15 on the first port pair `smpquery sl2vl` prints for port 1 of ``guid``."""
    out = sim._run(host, [_tool("smpquery"), "sl2vl", "-G", guid, "1"], 30).stdout
    m = re.search(r"^ports:[^:]*:\s*(\|.*)$", out, re.M)
    return [int(v) for v in m.group(1).strip(" |").split("|")] if m else []


def test_dfsssp_lanes_are_merged_by_the_generated_sl2vl(
    simulator: Callable[..., Simulator], tmp_path: Path
) -> None:
    plan = _plan(tmp_path, "dfsssp", 2)
    net = render_netfile(plan, "compute")
    sim = simulator(net, "cube")
    host = re.findall(r'^(?:Ca|Hca)\s+\d+\s+"([^"]+)"', net, re.M)[0]
    switch = re.findall(r"^switchguid=(0x[0-9a-f]+)", sim.ibnetdiscover(host), re.M)[0]
    work = sim.workdir
    conf = _conf(plan, work)
    conf.write_text(conf.read_text() + "force_log_flush TRUE\n")  # the log is read while OpenSM runs
    env = {**sim.client_env(host), "OSM_CACHE_DIR": str(work), "OSM_TMP_DIR": str(work)}
    proc = subprocess.Popen(
        [_tool("timeout"), "-k", "5", "120", _tool("opensm"), "-F", str(conf)],
        env=env,
        cwd=work,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        log, row = "", []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            log = (
                (work / "opensm-compute.log").read_text(errors="replace")
                if (work / "opensm-compute.log").exists()
                else ""
            )
            if "SUBNET UP" in log:
                row = _sl2vl_row(sim, host, switch)
                if row and row[2] == sm_emit.NCCL_VL:
                    break
            time.sleep(0.3)
    finally:
        _stop(proc)
    assert "dfsssp tables configured on all switches" in log, log[-3000:]
    m = re.search(r"Virtual Lanes needed: (\d+)", log)
    assert m and int(m.group(1)) > 1, log[-3000:]
    lanes = [int(n) for n in re.findall(r"(\d+)\. lane: [1-9]", log.split("after balancing", 1)[-1])]
    assert len(lanes) > 2, log[-3000:]  # dfsssp hands paths SLs 0..n, one VL each
    assert row == [int(v) for v in sm_emit.qos_sl2vl_table(2).split(",")], row
    assert len({row[sl] for sl in lanes}) < len(lanes)  # ... which the generated map merges
