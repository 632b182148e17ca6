"""The acceptance role's one-rail runs, for real, on the Debian test root (chroot), and acceptance-report on
what they leave: one weak cable among 3 DGX H100 × 8 rails must be found and named by its cabling row.

No GPU: three inventory hosts share the chroot root; the role's own variables point at a stand-in launcher
(records each command line, passes the -H host list on as mpirun passes the environment) and a stand-in
all_reduce_perf that prints a synthetic nccl-tests output (tests/nccl_text.py) for the hosts it runs on,
chosen by the NCCL_IB_HCA the role set: dgx002's rail-5 cable (mlx5_9, DGX H100/H200 User Guide Table 6)
runs at half the rate, so the two rail-5 runs that cross it are low and the third rail-5 run is not. As
NCCL does under NCCL_DEBUG=INFO, the stand-in prints the network each run used (only when the role set it):
the rail-2 run between dgx003 and dgx001 fell back to TCP sockets, which the report marks instead of blaming.
It also prints, per host, the ports NCCL's IB transport lists (net_ib.cc "NET/IB : Using [0]mlx5_9:1/IB ..."),
the one the role's NCCL_IB_HCA names: on dgx002 the rail-6 port was down in the run with dgx001 ("NET/IB : No
device found."), which the report marks with that port's cable.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from ansible_helpers import DATA, build, chroot_root_fixture, root_tarball_fixture  # noqa: F401  (fixtures)
from conftest import run_cli
from nccl_text import nccl_text

pytestmark = pytest.mark.ansible_host

BLUEPRINT = DATA / "dgx-h100-ib.yaml"
HOSTS = ["dgx001", "dgx002", "dgx003"]
FAKE = "/opt/cb-test-rails"
SIZES = [1 << 30, 2 << 30]
# The rails' ports in rail order (the catalogue's DGX H100 port map; the role gets them from group_vars).
RAIL_HCAS = ["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"]
# Synthetic bandwidths (GB/s): one healthy NDR rail between two nodes near the model's 88 GB/s, the weak
# cable at half (a port trained at NDR200), every rail together low because of it: NCCL splits each call
# evenly over its channels, so the two on the weak port set the pace of all 16 (under 0.85 of the model's
# ~320 GB/s for three nodes).
HEALTHY_RAIL, WEAK_RAIL, ALL_RAILS = 86.0, 43.0, 200.0
MPIRUN = f"""#!/bin/sh
echo "NCCL_IB_HCA=$NCCL_IB_HCA $*" >> {FAKE}/mpirun.log
while [ $# -gt 0 ]; do
  case "$1" in
    -H) CB_PAIR=$(echo "$2" | sed 's/:[0-9]*//g; s/,/-/g'); export CB_PAIR ;;
    */*_perf) exec "$@" ;;
  esac
  shift
done
exit 127
"""
# The port down when one run started: dgx002's rail-6 port (mlx5_10) in the rail-6 run with dgx001.
DOWN_PORT = "mlx5_10 dgx002 dgx001-dgx002"
PERF = f"""#!/bin/sh
case "$NCCL_IB_HCA" in
  *,*) cat "{FAKE}/out/all-$CB_PAIR.txt" ;;
  *)
    if [ "$NCCL_DEBUG" = INFO ] && [ "$NCCL_DEBUG_SUBSYS" = INIT,ENV ]; then
      dev=${{NCCL_IB_HCA#=}}; dev=${{dev%:*}}
      for h in $(echo "$CB_PAIR" | tr '-' ' '); do
        if [ "$dev $h $CB_PAIR" = "{DOWN_PORT}" ]; then
          echo "$h:100:200 [0] NCCL INFO NET/IB : No device found."
        else
          echo "$h:100:200 [0] NCCL INFO NET/IB : Using [0]$dev:1/IB [RO]; OOB ibp24s0:10.0.0.1<0>"
        fi
      done
      cat "{FAKE}/out/net-$NCCL_IB_HCA-$CB_PAIR.txt"
    fi
    cat "{FAKE}/out/rail-$NCCL_IB_HCA-$CB_PAIR.txt" ;;
esac
"""
# The rail and pair whose run fell back to NCCL's socket transport (a bandwidth no rail has).
SOCKET_RUN, SOCKET_BUSBW = ("mlx5_4", ["dgx003", "dgx001"]), 2.5


def _net_lines(hca: str, pair: list[str]) -> str:
    """What NCCL_DEBUG=INFO prints of the network (init.cc "Using network %s"; transport/net.cc sendSetup
    "Channel %02d/%d : %d[%d] -> %d[%d] [send] via NET/%s/%d%s"), one send a rank and channel."""
    socket = (hca, pair) == SOCKET_RUN
    name, gdr = ("Socket", "") if socket else ("IB", "/GDRDMA")
    lines = []
    for rank in range(16):
        host = pair[rank // 8]
        lines.append(f"{host}:{100 + rank}:{200 + rank} [{rank % 8}] NCCL INFO Using network {name}")
        peer = (rank + 8) % 16
        lines.append(
            f"{host}:{100 + rank}:{300 + rank} [{rank % 8}] NCCL INFO Channel 00/0 : {rank}[{rank % 8}] -> "
            f"{peer}[{peer % 8}] [send] via NET/{name}/0{gdr}"
        )
    return "\n".join(lines) + "\n"


def _pairs() -> list[list[str]]:
    return [[HOSTS[i], HOSTS[(i + 1) % len(HOSTS)]] for i in range(len(HOSTS))]


def _stand_ins(root: Path) -> None:
    fake = root / FAKE.lstrip("/")
    out = fake / "out"
    out.mkdir(parents=True, exist_ok=True)
    (fake / "bin").mkdir(exist_ok=True)
    for hca in RAIL_HCAS:
        for pair in _pairs():
            weak = hca == "mlx5_9" and "dgx002" in pair
            busbw = SOCKET_BUSBW if (hca, pair) == SOCKET_RUN else (WEAK_RAIL if weak else HEALTHY_RAIL)
            rows = [(s, busbw) for s in SIZES]
            (out / f"rail-={hca}:1-{'-'.join(pair)}.txt").write_text(nccl_text(pair, 8, rows))
            (out / f"net-={hca}:1-{'-'.join(pair)}.txt").write_text(_net_lines(hca, pair))
    (out / f"all-{'-'.join(HOSTS)}.txt").write_text(nccl_text(HOSTS, 8, [(8 << 30, ALL_RAILS)]))
    # what the nccl role installs: every rail, which each one-rail run must override
    (fake / "nccl.env").write_text(f"NCCL_IB_HCA=={','.join(h + ':1' for h in RAIL_HCAS)}\nNCCL_DEBUG=WARN\n")
    for path, text in ((fake / "mpirun", MPIRUN), (fake / "bin" / "all_reduce_perf", PERF)):
        path.write_text(text)
        path.chmod(0o755)


def _inventory(path: Path, root: Path) -> Path:
    hosts = "".join(
        f"        {h}:\n"
        f"          ansible_host: {root}\n"
        "          acceptance_collectives: [all_reduce]\n"
        f"          acceptance_mpirun: {FAKE}/mpirun\n"
        f"          acceptance_nccl_tests_bin: {FAKE}/bin\n"
        f"          acceptance_nccl_env_path: {FAKE}/nccl.env\n"
        for h in HOSTS
    )
    path.write_text(
        "all:\n"
        "  vars:\n"
        "    ansible_connection: community.general.chroot\n"
        "    ansible_become: false\n"
        "    ansible_python_interpreter: /usr/bin/python3\n"
        "  children:\n"
        "    pool_dgx:\n"
        "      hosts:\n" + hosts + "    role_gpu:\n"
        "      children:\n"
        "        pool_dgx: {}\n"
    )
    return path


def test_one_rail_runs_find_the_weak_cable(chroot_root: Path, tmp_path: Path) -> None:
    out = build(BLUEPRINT, tmp_path / "build")
    _stand_ins(chroot_root)
    code, text, err = run_cli(
        "configure",
        str(out),
        "-i",
        str(_inventory(tmp_path / "hosts.yml", chroot_root)),
        "--playbook",
        "acceptance.yml",
        "--format",
        "json",
        "-e",
        "cb_hardware_present=false",
        "-e",
        "acceptance_run_nccl_tests=true",
    )
    result = json.loads(text)
    first = result["hosts"]["dgx001"]
    # 1. the play fails on the one-rail check (74.8 GB/s = the model's 88 × 0.85 > 43), after every run
    assert code == 1 and first["failed"] == 1, json.dumps(result, indent=1) + err
    assert [f["task"] for f in first["failures"]] == ["Check each one-rail run reaches its threshold"]

    # 2. the command lines: the all-rail run, then each rail's port alone (NCCL's exact-match `=`) for each
    #    pair of neighbours, 2 × 8 ranks, NCCL_IB_HCA forwarded once, the rail sweep of the group_vars
    log = (chroot_root / FAKE.lstrip("/") / "mpirun.log").read_text().splitlines()
    assert len(log) == 1 + 8 * 3
    assert log[0].startswith("NCCL_IB_HCA==mlx5_0:1,mlx5_3:1,") and "-np 24" in log[0]
    rail_lines = log[1:]
    expected = [(hca, pair) for hca in RAIL_HCAS for pair in _pairs()]
    for line, (hca, pair) in zip(rail_lines, expected, strict=True):
        args = line.split()
        assert args[0] == f"NCCL_IB_HCA=={hca}:1", line
        assert args[args.index("-np") + 1] == "16"
        assert args[args.index("-H") + 1] == f"{pair[0]}:8,{pair[1]}:8"
        assert args.count("NCCL_IB_HCA") == 1 and "-x" in args
        assert (
            args.count("NCCL_DEBUG") == 1 and args.count("NCCL_DEBUG_SUBSYS") == 1
        )  # nccl.env's WARN not sent
        assert args[-13:] == [
            f"{FAKE}/bin/all_reduce_perf", "-b", "1G", "-e", "2G", "-f", "2", "-g", "1", "-n", "20", "-c", "1"
        ]  # fmt: skip

    # 3. every output fetched under the names acceptance-report reads
    results = out / "acceptance-results"
    names = sorted(p.name for p in results.iterdir())
    assert names == sorted(
        ["all_reduce_perf-3nodes-dgx001-dgx003.txt"]
        + [f"all_reduce_perf-rail{r}-2nodes-{a}-{b}.txt" for r in range(8) for a, b in _pairs()]
    )

    # 4. acceptance-report names dgx002's rail-5 link and the cabling-plan row of that cable
    code, report, err = run_cli(
        "acceptance-report", str(BLUEPRINT), "--results", str(results), "--format", "json"
    )
    assert code == 1, err
    doc = json.loads(report)
    low = sorted(Path(r["file"]).name for r in doc["runs"] if r["low"] and not r["transport"])
    assert low == [
        "all_reduce_perf-3nodes-dgx001-dgx003.txt",
        "all_reduce_perf-rail5-2nodes-dgx001-dgx002.txt",
        "all_reduce_perf-rail5-2nodes-dgx002-dgx003.txt",
    ]
    marked = {Path(r["file"]).name: r["transport"] for r in doc["runs"] if r["transport"]}
    socket_file = "all_reduce_perf-rail2-2nodes-dgx003-dgx001.txt"
    assert list(marked) == [socket_file]
    assert marked[socket_file].startswith(f"NCCL ran over TCP sockets (`Socket`, {results / socket_file}:")
    assert [(s["kind"], s["name"]) for s in doc["suspects"]] == [("link", "dgx002 rail 5")]
    # every one-rail run listed its rail's port on both hosts (the role's NCCL_IB_HCA reached NCCL), but one
    ports = {Path(r["file"]).name: r["ports"] for r in doc["runs"] if r["ports"]}
    down_file = "all_reduce_perf-rail6-2nodes-dgx001-dgx002.txt"
    assert list(ports) == [down_file]
    listed = {Path(r["file"]).name: r["network"]["ib_ports"] for r in doc["runs"] if r["rail"] is not None}
    assert listed["all_reduce_perf-rail5-2nodes-dgx002-dgx003.txt"] == {
        "dgx002": ["mlx5_9:1/IB"],
        "dgx003": ["mlx5_9:1/IB"],
    }
    assert listed[down_file] == {"dgx001": ["mlx5_10:1/IB"], "dgx002": []}
    # the cabling plan as `blueprint generate` writes it
    assert run_cli("generate", str(BLUEPRINT), "-o", str(tmp_path / "full"))[0] == 0
    with (tmp_path / "full" / "cabling" / "cables.csv").open() as fh:
        rows = [r for r in csv.DictReader(fh) if r["a_device"] == "dgx002" and r["a_port"] == "mlx5_9/1"]
    assert [c["cable"] for c in doc["suspects"][0]["cables"]] == [r["cable_id"] for r in rows]
    assert len(rows) == 1 and rows[0]["rail"] == "5"
    with (tmp_path / "full" / "cabling" / "cables.csv").open() as fh:
        (down,) = [r for r in csv.DictReader(fh) if r["a_device"] == "dgx002" and r["a_port"] == "mlx5_10/1"]
    assert ports[down_file].startswith(
        f"dgx002 rail 6 port mlx5_10:1 (cable {down['cable_id']} to {down['b_device']} port {down['b_port']}) "
        f"is not among the ports NCCL found ({results / down_file}:"
    )
    (entry,) = doc["port_problems"]  # the report's list of ports: that one, once, with its cable
    assert (entry["host"], entry["rail"], entry["cable"], entry["runs"]) == (
        "dgx002",
        6,
        down["cable_id"],
        [down_file],
    )
