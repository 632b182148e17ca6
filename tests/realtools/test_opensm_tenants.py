"""Tenant isolation in real OpenSM (Debian 3.3.23) on ibsim, from the generated partitions (issue 25).

A two-tenant blueprint: pools ``train`` and ``infer`` of one HDR fat-tree, each in its own partition; the
HA subnet manager runs on the first ``infer`` hosts. The simulated fabric is discovered, ``blueprint
sm-guids`` writes ``partitions.conf`` with the ports' GUIDs, the master's generated ``opensm.conf`` runs
as written (paths moved into the test directory), and every CA port's P_Key table is read back with
``smpquery pkeys`` after the SM configured the subnet. A P_Key's top bit is the membership: 0x8000 set is
full, clear is limited (IBA 10.9.1). Verdicts:

* a ``train`` port holds the train P_Key as a full member and no infer P_Key at all, and vice versa;
* every tenant port is a limited member of Default (0x7fff): tenants do not meet there either;
* the SM's own port (an ``infer`` host) is a full member of Default and of infer (its pool), and holds no
  train P_Key: the SM host is not a member of a tenant it was not given.

Failover (second test): the HA pair on dedicated management hosts (``sm001``/``sm002``, one HDR port each, in
no tenant partition). The master's generated opensm.conf runs on sm001's port and the standby's on sm002's;
the standby must enter STANDBY; the master is SIGKILLed (a crash) and the standby must log "Entering MASTER
state" and "SUBNET UP" within sminfo_polling_timeout x (polling_retry_number + 2) + 30 s (the standby's poll
timer fires every sminfo_polling_timeout ms and sends one SMInfo request a tick; the tick that finds more than
polling_retry_number of them unanswered goes to DISCOVERING, the first tick up to one interval after the death:
linux-rdma/opensm osm_sm_state_mgr.c osm_sm_state_mgr_polling_callback), ``sminfo`` from sm002 must name sm002's port as the master, and every port's P_Key table read
again through the new master must still isolate the tenants.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from ib_fixtures import run_cli, simulators, stop_process
from ibsim_harness import Simulator, _tool, missing_tools

from generator.emit import nccl as nccl_emit
from generator.emit import subnet_manager as sm_emit
from generator.emit.ibnetdiscover import render_netfile
from generator.pipeline import load_and_resolve
from generator.plan.build import build_plan

pytestmark = [pytest.mark.realtools]

BLUEPRINT = """\
apiVersion: cluster-blueprint/v1
name: two-tenants
site: {name: lab, rows: 2, racks_per_row: 8, rack: {units: 48, power_kw: 40}}
pools:
  - {name: infer, role: gpu, count: 4, server: dgx-a100, placement: {nodes_per_rack: 4}}
  - {name: train, role: gpu, count: 4, server: dgx-a100, placement: {nodes_per_rack: 4}}
fabrics:
  compute:
    technology: infiniband-hdr
    topology: {kind: fat-tree, tiers: 2, switch: qm8700, rail_optimized: true, scalable_unit: 4}
    subnet_manager:
      kind: opensm
      ha: true
      routing_engine: ftree
      partitions:
        - {name: train, pkey: 0x10, pools: [train], membership: full}
        - {name: infer, pkey: 0x20, pools: [infer], membership: full}
"""
TRAIN, INFER = 0x10, 0x20
FULL = 0x8000
WAIT_S = 60.0


@pytest.fixture
def simulator(tmp_path: Path) -> Iterator[Callable[..., Simulator]]:
    missing = missing_tools() + [t for t in ("smpquery",) if not _which(t)]
    if missing:
        msg = f"InfiniBand tools not installed: {', '.join(missing)}"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    yield from simulators(tmp_path)


def _which(tool: str) -> bool:
    return any(Path(d, tool).exists() for d in [*os.environ.get("PATH", "").split(":"), "/usr/sbin"])


@pytest.fixture
def daemon() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    try:
        yield started
    finally:
        for proc in started:
            stop_process(proc)


def _ca_ports(dump: str) -> dict[str, int]:
    """ibnetdiscover output → {"<host> <rdma>" (the node description): port 1 GUID}."""
    ports: dict[str, int] = {}
    for m in re.finditer(r'^Ca\s+\d+\s+"[^"]+"\s+# "([^"]+)"\n\[1\]\(([0-9a-f]+)\)', dump, re.M):
        ports[m.group(1)] = int(m.group(2), 16)
    return ports


def _pkeys(sim: Simulator, sm_host: str, guid: int, *, wait: bool = False) -> set[int]:
    # -G asks the SA for the port's LID: it fails until the SM has brought the subnet up
    proc = sim._run(sm_host, [_tool("smpquery"), "pkeys", "-G", f"0x{guid:016x}", "1"], 30)
    if wait and proc.returncode != 0:
        return set()
    assert proc.returncode == 0, proc.stderr[-500:]
    # "0: 0xffff 0x8010 0x0000 ..." rows after a header; 0x0000 is an empty slot
    return {int(v, 16) for v in re.findall(r"0x[0-9a-f]{4}\b", proc.stdout)} - {0}


def _pkey_table(sim: Simulator, sm_host: str, guid: int) -> list[int]:
    """The port's P_Key table in index order (smpquery prints rows "0: 0x7fff 0x8010 ..." of 8 entries
    from the block's first index)."""
    proc = sim._run(sm_host, [_tool("smpquery"), "pkeys", "-G", f"0x{guid:016x}", "1"], 30)
    assert proc.returncode == 0, proc.stderr[-500:]
    table: dict[int, int] = {}
    for m in re.finditer(r"^\s*(\d+):((?:\s+0x[0-9a-f]{4})+)", proc.stdout, re.M):
        for k, v in enumerate(re.findall(r"0x[0-9a-f]{4}", m.group(2))):
            table[int(m.group(1)) + k] = int(v, 16)
    return [table.get(i, 0) for i in range(max(table, default=-1) + 1)]


def _setup(blueprint: Path, sim: Simulator, sm_host: str, work: Path) -> tuple[Path, str]:
    """Discover, `sm-guids` into etc/compute, the master's opensm.conf relocated into ``work``."""
    dump = sim.ibnetdiscover(sm_host)
    (work / "ibnetdiscover.out").write_text(dump)
    etc = work / "etc"
    code, _, err = run_cli(
        "sm-guids",
        str(blueprint),
        "--discovered",
        str(work / "ibnetdiscover.out"),
        "-o",
        str(etc / "compute"),
    )
    assert code == 0, err
    plan = build_plan(load_and_resolve(str(blueprint))[1])
    master = sm_emit.sm_plan(plan.cluster, "compute", plan).members[0].name
    text = sm_emit.render(plan.cluster, plan)[f"compute/{master}/opensm.conf"]
    conf = work / "opensm-master.conf"
    conf.write_text(text.replace(f"{sm_emit.CONF_DIR}/", f"{etc}/").replace("/var/log/", f"{work}/"))
    return conf, dump


def _start_sm(sim: Simulator, host: str, conf: Path, work: Path) -> subprocess.Popen[bytes]:
    env = {**sim.client_env(host), "OSM_CACHE_DIR": str(work), "OSM_TMP_DIR": str(work)}
    return subprocess.Popen(
        [_tool("timeout"), "-k", "5", "300", _tool("opensm"), "-F", str(conf)],
        env=env,
        cwd=work,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )


def _wait_configured(sim: Simulator, sm_host: str, guid: int) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if FULL | TRAIN in _pkeys(sim, sm_host, guid, wait=True):
            return
        time.sleep(0.3)
    raise AssertionError(f"the train partition never reached port 0x{guid:016x}")


# 28 train nodes: 224 port GUIDs, past the 4,096-byte line OpenSM reads, had they been written on one line
# (then it dropped the file and made every port a full member of Default)
@pytest.mark.parametrize("train_nodes", [4, 28])
def test_each_tenant_sees_only_its_partition_and_the_sm_host_no_other(
    simulator: Callable[..., Simulator],
    daemon: list[subprocess.Popen[bytes]],
    tmp_path: Path,
    train_nodes: int,
) -> None:
    blueprint = tmp_path / "two-tenants.yaml"
    train = "  - {name: train, role: gpu, count: 4,"
    assert train in BLUEPRINT
    text = BLUEPRINT.replace(train, f"  - {{name: train, role: gpu, count: {train_nodes},")
    unit = 4 if train_nodes == 4 else 16  # 20 nodes at most on a 40-port leaf at 1:1
    blueprint.write_text(text.replace("scalable_unit: 4}", f"scalable_unit: {unit}}}"))
    plan = build_plan(load_and_resolve(str(blueprint))[1])
    members = [m.name for m in sm_emit.sm_plan(plan.cluster, "compute", plan).members]
    assert members == ["infer001", "infer002"]  # the SM runs on infer hosts: the leak issue 25 found
    net = render_netfile(plan, "compute")
    sim_host = next(n for n in re.findall(r'^Ca\s+\d+\s+"([^"]+)"', net, re.M) if n.startswith("H-infer001-"))
    sim = simulator(net, "tenants")
    conf, dump = _setup(blueprint, sim, sim_host, tmp_path)
    partitions = (tmp_path / "etc" / "compute" / "partitions.conf").read_text()
    assert partitions.count("SELF") == 1  # Default only
    daemon.append(_start_sm(sim, sim_host, conf, tmp_path))

    ports = _ca_ports(dump)
    assert len(ports) == len(re.findall(r"^Ca\s", net, re.M)) > 0  # every CA port discovered
    train = {n: g for n, g in ports.items() if n.startswith("train")}
    infer = {n: g for n, g in ports.items() if n.startswith("infer")}
    assert len(train) == 8 * train_nodes and len(infer) == 8 * 4 and len(ports) == len(train) + len(infer)
    sm_port = f"infer001 {sim_host.removeprefix('H-infer001-')}"
    _wait_configured(sim, sim_host, next(iter(train.values())))
    tables = {n: _pkeys(sim, sim_host, g) for n, g in ports.items()}

    for name in train:
        assert tables[name] == {FULL | TRAIN, 0x7FFF}, (name, sorted(map(hex, tables[name])))
    for name in infer:
        if name != sm_port:
            assert tables[name] == {FULL | INFER, 0x7FFF}, (name, sorted(map(hex, tables[name])))
    # the SM's port: full in Default (what OpenSM needs), full in its own pool's partition, not in train
    assert tables[sm_port] == {0xFFFF, FULL | INFER}, sorted(map(hex, tables[sm_port]))
    # NCCL's queue pairs take the P_Key at index NCCL_IB_PKEY: the generated index must hold the pool's
    # own partition, full member, in the table OpenSM programmed (index 0 is Default, limited for tenants)
    for pool, key, names in (("train", TRAIN, train), ("infer", INFER, infer)):
        setting = nccl_emit.derive(plan.cluster, next(p for p in plan.cluster.pools if p.name == pool), plan)
        index = int(setting.env()["NCCL_IB_PKEY"])
        for name in names:
            ordered = _pkey_table(sim, sim_host, ports[name])
            assert ordered[index] == FULL | key, (name, index, [hex(v) for v in ordered[:4]])

    os.killpg(daemon[0].pid, signal.SIGTERM)  # OpenSM buffers its log: read it after it exits
    daemon[0].wait(timeout=30)
    log = (tmp_path / "opensm-compute.log").read_text(errors="replace")
    assert "Entering MASTER state" in log
    assert "ftree tables configured on all switches" in log, log[-3000:]
    assert not re.findall(r"ERR [0-9A-F]{4}", log), log[-3000:]


@pytest.mark.parametrize("shared", [0x30, 0x105])
def test_nccl_ib_pkey_is_the_index_opensm_programs_whatever_the_file_order(
    simulator: Callable[..., Simulator],
    daemon: list[subprocess.Popen[bytes]],
    tmp_path: Path,
    shared: int,
) -> None:
    """A partition of every port listed before the tenants': OpenSM does not fill a port's table in the
    file's order but by P_Key in network byte order (0x105 before 0x10 before 0x30); the generated
    NCCL_IB_PKEY of each tenant must still be the index of its own full-member P_Key."""
    blueprint = tmp_path / "shared.yaml"
    first = "        - {name: train, pkey: 0x10, pools: [train], membership: full}\n"
    assert first in BLUEPRINT
    extra = f"        - {{name: shared, pkey: {shared:#x}, pools: [], membership: limited}}\n"
    blueprint.write_text(BLUEPRINT.replace(first, extra + first))
    plan = build_plan(load_and_resolve(str(blueprint))[1])
    net = render_netfile(plan, "compute")
    sim_host = next(n for n in re.findall(r'^Ca\s+\d+\s+"([^"]+)"', net, re.M) if n.startswith("H-infer001-"))
    sim = simulator(net, "tenants-order")
    conf, dump = _setup(blueprint, sim, sim_host, tmp_path)
    daemon.append(_start_sm(sim, sim_host, conf, tmp_path))
    ports = _ca_ports(dump)
    _wait_configured(sim, sim_host, next(g for n, g in ports.items() if n.startswith("train")))
    for pool, key in (("train", TRAIN), ("infer", INFER)):
        profile = nccl_emit.derive(plan.cluster, next(p for p in plan.cluster.pools if p.name == pool), plan)
        index = int(profile.env()["NCCL_IB_PKEY"])
        for name in (
            n for n in ports if n.startswith(pool) and n != f"infer001 {sim_host.removeprefix('H-infer001-')}"
        ):
            ordered = _pkey_table(sim, sim_host, ports[name])
            assert ordered[index] == FULL | key, (name, index, [hex(v) for v in ordered[:4]])
            assert shared in ordered, [hex(v) for v in ordered[:4]]  # the shared partition is there


# ------------------------------------------------------------------------------------------------- failover
SM_POOL = """\
  - name: sm
    role: management
    count: 2
    spec:
      gpu: null
      gpus: 0
      gpu_interconnect: none
      nics:
        - {purpose: compute, model: cx6, count: 1, ports: 1, speed_gbps: 200}
        - {purpose: management, model: x710, count: 1, ports: 1, speed_gbps: 1}
      power_kw: 0.8
      rack_units: 1
    ports:
      - {role: compute, rdma: mlx5_0, netdev: ibp1s0}
"""
BLUEPRINT_HA = (
    BLUEPRINT.replace("name: two-tenants\n", "name: two-tenants-sm-ha\n")
    .replace("fabrics:\n", SM_POOL + "fabrics:\n", 1)
    .replace("rail_optimized: true, scalable_unit: 4", "rail_optimized: false")
    .replace("      ha: true\n", "      ha: true\n      hosts: [sm001, sm002]\n")
)
TAKEOVER_MARGIN_S = 30.0
STANDBY_WAIT_S = 60.0


def _member_conf(plan, member: str, etc: Path, run: Path) -> Path:  # type: ignore[no-untyped-def]
    """``member``'s generated opensm.conf with /etc/opensm and /var/log moved into the test directory, and the
    log flushed per line (``force_log_flush``, an OpenSM 3.3 key) so the test can follow it."""
    text = sm_emit.render(plan.cluster, plan)[f"compute/{member}/opensm.conf"]
    run.mkdir(parents=True, exist_ok=True)
    conf = run / "opensm.conf"
    text = text.replace(f"{sm_emit.CONF_DIR}/", f"{etc}/").replace("/var/log/", f"{run}/")
    conf.write_text(text + "force_log_flush TRUE\n")
    return conf


def _conf_int(conf: Path, key: str) -> int:
    values = [ln.split()[1] for ln in conf.read_text().splitlines() if ln.split()[:1] == [key]]
    assert len(values) == 1 and values[0].isdigit(), (key, values)
    return int(values[0])


def _wait_log(log: Path, needles: tuple[str, ...], timeout_s: float, after: int = 0) -> float | None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        text = log.read_text(errors="replace")[after:] if log.exists() else ""
        if all(n in text for n in needles):
            return time.monotonic() - t0
        time.sleep(0.2)
    return None


def _check_isolation(tables: dict[str, set[int]], sm_ports: set[str]) -> None:
    for name, table in tables.items():
        if name in sm_ports:  # a management host in no tenant partition: Default only, full
            assert table == {0xFFFF}, (name, sorted(map(hex, table)))
        elif name.startswith("train"):
            assert table == {FULL | TRAIN, 0x7FFF}, (name, sorted(map(hex, table)))
        else:
            assert name.startswith("infer"), name
            assert table == {FULL | INFER, 0x7FFF}, (name, sorted(map(hex, table)))


def test_standby_takes_over_and_the_tenants_stay_isolated(
    simulator: Callable[..., Simulator], daemon: list[subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    blueprint = tmp_path / "two-tenants-sm-ha.yaml"
    blueprint.write_text(BLUEPRINT_HA)
    plan = build_plan(load_and_resolve(str(blueprint))[1])
    assert [m.name for m in sm_emit.sm_plan(plan.cluster, "compute", plan).members] == ["sm001", "sm002"]
    net = render_netfile(plan, "compute")
    master_host, standby_host = "H-sm001-mlx5_0", "H-sm002-mlx5_0"
    assert {master_host, standby_host} <= set(re.findall(r'^Ca\s+\d+\s+"([^"]+)"', net, re.M))
    sim = simulator(net, "tenants-ha")
    _, dump = _setup(blueprint, sim, master_host, tmp_path)
    etc = tmp_path / "etc"
    master = _member_conf(plan, "sm001", etc, tmp_path / "sm001")
    standby = _member_conf(plan, "sm002", etc, tmp_path / "sm002")
    assert _conf_int(master, "sm_priority") > _conf_int(standby, "sm_priority")
    ports = _ca_ports(dump)
    sm_ports = {"sm001 mlx5_0", "sm002 mlx5_0"}
    assert sm_ports <= set(ports)
    train = next(g for n, g in ports.items() if n.startswith("train"))

    daemon.append(_start_sm(sim, master_host, master, tmp_path / "sm001"))
    _wait_configured(sim, master_host, train)
    _check_isolation({n: _pkeys(sim, master_host, g) for n, g in ports.items()}, sm_ports)

    daemon.append(_start_sm(sim, standby_host, standby, tmp_path / "sm002"))
    standby_log = tmp_path / "sm002" / "opensm-compute.log"
    assert _wait_log(standby_log, ("Entering STANDBY state",), STANDBY_WAIT_S) is not None, _tail(standby_log)
    bound = (
        _conf_int(standby, "sminfo_polling_timeout") / 1000 * (_conf_int(standby, "polling_retry_number") + 2)
        + TAKEOVER_MARGIN_S
    )
    size = standby_log.stat().st_size
    os.killpg(daemon[0].pid, signal.SIGKILL)  # the master crashes
    daemon[0].wait(timeout=10)
    took = _wait_log(standby_log, ("Entering MASTER state", "SUBNET UP"), bound, size)
    assert took is not None, f"no takeover within {bound:.0f} s: {_tail(standby_log)}"

    # the SA and SMInfo now answer from sm002's port
    proc = sim._run(standby_host, [_tool("sminfo")], 30)
    assert proc.returncode == 0, proc.stderr[-500:]
    guid = int(re.search(r"sm guid (0x[0-9a-f]+)", proc.stdout).group(1), 16)  # type: ignore[union-attr]
    assert guid == ports["sm002 mlx5_0"] and "SMINFO_MASTER" in proc.stdout, proc.stdout
    _wait_configured(sim, standby_host, train)
    _check_isolation({n: _pkeys(sim, standby_host, g) for n, g in ports.items()}, sm_ports)
    # before the takeover the log holds the SMInfo timeouts that told the standby its master was gone
    text = standby_log.read_text(errors="replace")
    after = text[text.rindex("Entering MASTER state") :]
    assert "ftree tables configured on all switches" in after, _tail(standby_log)
    assert not re.findall(r"ERR [0-9A-F]{4}", after), _tail(standby_log)
    assert re.search(r"ERR 3120: Timeout while getting attribute 0x20 \(SMInfo\)", text[: -len(after)])


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-2000:] if log.exists() else "(no log)"


# ---------------------------------------------------------------------------------------------------- SHARP
BLUEPRINT_SHARP = BLUEPRINT_HA.replace("name: two-tenants-sm-ha\n", "name: two-tenants-sharp\n").replace(
    "      kind: opensm\n", "      kind: opensm\n      flavour: opensm-nvidia\n      sharp: true\n"
)


def _switch_port0_pkeys(sim: Simulator, sm_host: str, dump: str) -> dict[str, set[int]]:
    """Every switch's port 0 P_Key table (where its SHARP Aggregation Node sits), by node description."""
    out: dict[str, set[int]] = {}
    for m in re.finditer(r'^switchguid=0x([0-9a-f]+).*\nSwitch\s+\d+\s+"[^"]+"\s+# "([^"]+)"', dump, re.M):
        proc = sim._run(sm_host, [_tool("smpquery"), "pkeys", "-G", f"0x{m.group(1)}", "0"], 30)
        assert proc.returncode == 0, proc.stderr[-500:]
        out[m.group(2)] = {int(v, 16) for v in re.findall(r"0x[0-9a-f]{4}\b", proc.stdout)} - {0}
    return out


def test_sharp_with_tenants_switches_are_full_members_of_the_pkey_sharp_uses(
    simulator: Callable[..., Simulator], daemon: list[subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    """SHARP on with tenant partitions: the Aggregation Nodes sit on switch port 0 and the hosts are limited
    members of Default, so every switch must be a full member of the P_Key sharp_am.cfg gives SHARP
    (`ib_qpc_pkey`), which every host holds; the tenants stay isolated. Before the fix port 0 held only
    0x7fff (limited): a limited host and a limited Aggregation Node cannot talk (IBA 10.9.1)."""
    blueprint = tmp_path / "two-tenants-sharp.yaml"
    blueprint.write_text(BLUEPRINT_SHARP)
    plan = build_plan(load_and_resolve(str(blueprint))[1])
    files = sm_emit.render(plan.cluster, plan)
    qpc = [
        ln.split()[1] for ln in files["compute/sharp_am.cfg"].splitlines() if ln.startswith("ib_qpc_pkey ")
    ]
    assert len(qpc) == 1, files["compute/sharp_am.cfg"]
    pkey = int(qpc[0], 16)
    assert pkey & FULL, qpc  # the documents: the membership bit set
    net = render_netfile(plan, "compute")
    sim = simulator(net, "tenants-sharp")
    _, dump = _setup(blueprint, sim, "H-sm001-mlx5_0", tmp_path)
    conf = _member_conf(plan, "sm001", tmp_path / "etc", tmp_path / "sm001")
    # Debian's OpenSM 3.3.23 has no sharp_enabled (NVIDIA's OpenSM key): the partitions are what is tested
    text = conf.read_text()
    assert "\nsharp_enabled 2\n" in text
    conf.write_text(text.replace("\nsharp_enabled 2\n", "\n"))
    ports = _ca_ports(dump)
    daemon.append(_start_sm(sim, "H-sm001-mlx5_0", conf, tmp_path / "sm001"))
    _wait_configured(sim, "H-sm001-mlx5_0", next(g for n, g in ports.items() if n.startswith("train")))

    switches = _switch_port0_pkeys(sim, "H-sm001-mlx5_0", dump)
    assert len(switches) == len(re.findall(r"^Switch\s", net, re.M)) > 0
    for name, table in switches.items():
        assert pkey in table, (name, sorted(map(hex, table)))
    hosts = {n: _pkeys(sim, "H-sm001-mlx5_0", g) for n, g in ports.items()}
    for name, table in hosts.items():
        assert pkey & 0x7FFF in {k & 0x7FFF for k in table}, (name, sorted(map(hex, table)))
    _check_isolation(hosts, {"sm001 mlx5_0", "sm002 mlx5_0"})
