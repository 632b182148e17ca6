"""`acceptance-report` reads which network NCCL used (issue 28: the regime a run was really in).

A run across nodes of an RDMA fabric whose NCCL_DEBUG=INFO output shows TCP sockets, or IB connections
without GPUDirect RDMA, measured a transport the prediction is not for: it is marked at the line that shows
it, names no suspect cable and calibrates nothing. The log lines are NCCL's own formats (init.cc
``Using network %s``; transport/net.cc ``sendSetup`` ``Channel %02d/%d : %d[%d] -> %d[%d] [send] via
NET/%s/%d%s%s%s``, before 2.12 ``Channel %02d : %d[%lx] -> %d[%lx] ...``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from nccl_text import nccl_text
from perf_blueprints import server_nodes
from ruamel.yaml import YAML

from generator.cli import main
from generator.foreign import ForeignInputError
from generator.perf.nccl_network import MAX_NETWORKS
from generator.perf.nccl_results import parse_json, parse_text

NDR = {
    "technology": "infiniband-ndr",
    "topology": {"kind": "fat-tree", "switch": "qm9700", "rail_optimized": True},
    "subnet_manager": {"kind": "opensm"},
}
SIZES = [1 << p for p in range(20, 31)]
HOSTS = ["gpu001", "gpu002"]


def _curve(plateau: float) -> list[tuple[int, float]]:
    return [(s, round(plateau * s / (s + (8 << 20)), 2)) for s in SIZES]


def _info(host: str, rank: int, message: str) -> str:
    """One NCCL_DEBUG=INFO line as NCCL's debug.cc prints it: host:pid:tid [cudaDev] NCCL INFO ..."""
    return f"{host}:{1000 + rank}:{2000 + rank} [{rank % 8}] NCCL INFO {message}"


def _log(network: str, gdr: bool, plateau: float, *, ranks_on: str | None = None) -> str:
    """A two-node, eight-GPU-a-node all_reduce log: NCCL's init lines (every rank names its network), one
    connection to the other node per channel and rank, then nccl-tests' rows. ``ranks_on``: the network
    ranks of the second node say they loaded instead (a run whose ranks disagree, NVIDIA/nccl-tests #29)."""
    head, body = nccl_text(HOSTS, 8, _curve(plateau)).split("#       size", 1)
    lines = []
    for rank in range(16):
        host = HOSTS[rank // 8]
        loaded = ranks_on if (ranks_on and rank >= 8) else network
        lines.append(_info(host, rank, f"Using network {loaded}"))
    for channel in range(2):
        for rank in range(16):
            peer = (rank + 8) % 16
            tail = "/GDRDMA" if gdr else ""
            text = f"Channel {channel:02d}/0 : {rank}[{rank % 8}] -> {peer}[{peer % 8}] [send] via NET/{network}/"
            lines.append(_info(HOSTS[rank // 8], rank, f"{text}{rank % 8}{tail}"))
    return head + "\n".join(lines) + "\n#       size" + body


def _site(tmp_path: Path, logs: dict[str, str]) -> tuple[Path, Path]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    bp = tmp_path / "bp.yaml"
    with bp.open("w") as fh:
        YAML().dump(server_nodes("dgx-h100", 2, NDR), fh)
    results = tmp_path / "results"
    results.mkdir()
    for name, text in logs.items():
        (results / name).write_text(text)
    return bp, results


def _report(bp: Path, results: Path, capsys, *extra: str) -> tuple[int, dict]:
    code = main(["acceptance-report", str(bp), "--results", str(results), "--format", "json", *extra])
    return code, json.loads(capsys.readouterr().out)


# ---- what the parser reads ----------------------------------------------------------------------


def test_the_connections_show_the_network_and_gpudirect(tmp_path: Path) -> None:
    path = tmp_path / "all_reduce_perf.log"
    (run,) = parse_text(_log("IB", gdr=False, plateau=300.0), path)
    (ib,) = run.network.connections
    assert (ib.network, ib.count, ib.without_gdr) == ("IB", 32, 32)
    text = _log("IB", gdr=False, plateau=300.0).split("\n")
    first = next(i for i, line in enumerate(text, 1) if "[send] via NET/" in line)
    assert ib.first_at == ib.first_without_gdr_at == f"{path}:{first}"
    assert run.network.uses("IB") == f"{path}:{first}" and run.network.uses("Socket") is None
    (gdr,) = parse_text(_log("IB", gdr=True, plateau=300.0), path)
    assert gdr.network.connections[0].without_gdr == 0


def test_older_and_pxn_connection_lines_are_read(tmp_path: Path) -> None:
    """Before 2.12 a channel line names bus ids (``0[1b000]``); a PXN connection names its proxy rank in
    parentheses (``NET/IB/0(1)``)."""
    rows = nccl_text(HOSTS, 1, _curve(40.0))
    lines = [
        _info("gpu001", 0, "Channel 00 : 0[1b000] -> 1[1b000] [send] via NET/IB/0/GDRDMA"),
        _info("gpu001", 0, "Channel 01/1 : 0[0] -> 1[0] [send] via NET/IB/0(1)/GDRDMA"),
        _info("gpu002", 1, "Channel 00 : 1[1b000] -> 0[1b000] [send] via NET/Socket/0"),
    ]
    (run,) = parse_text("\n".join(lines) + "\n" + rows, tmp_path / "x.log")
    counts = {c.network: (c.count, c.without_gdr) for c in run.network.connections}
    assert counts == {"IB": (2, 0), "Socket": (1, 1)}
    assert run.network.uses("socket") == f"{tmp_path / 'x.log'}:3"  # NCCL_NET matches case-insensitively


# Lines as published: NVIDIA/nccl #1814 (HPC-X's IBext_v8 plugin, no GPUDirect RDMA; NCCL 2.19+ format) and
# NVIDIA/nccl #707 (NCCL's IB with GPUDirect RDMA; the format before 2.12, bus ids)
PUBLISHED = (
    "hostname-test:981:1267 [1] NCCL INFO Channel 00/0 : 33[1] -> 40[0] [send] via NET/IBext_v8/7",
    "hostname-test:983:1261 [3] NCCL INFO Channel 02/0 : 35[3] -> 42[2] [send] via NET/IBext_v8/0",
    "hostname-test:981:1267 [1] NCCL INFO Channel 01/0 : 26[2] -> 33[1] [receive] via NET/IBext_v8/4",
    "hostname-test:980:1265 [0] NCCL INFO Channel 00/0 : 32[0] -> 39[7] via P2P/CUMEM",
    "10-90-43-152:120890:121563 [3] NCCL INFO Channel 01 : 3[ca000] -> 2[c7000] [send] via NET/IB/2/GDRDMA",
    "10-90-43-152:120890:121562 [2] NCCL INFO Channel 01 : 0[87000] -> 2[c7000] [receive] via NET/IB/2/GDRDMA",
)


def test_published_connection_lines_are_read_as_nccl_wrote_them(tmp_path: Path) -> None:
    """Only [send] lines count (each connection prints one on each side); NVLink (P2P) lines are no network."""
    text = "\n".join(PUBLISHED) + "\n" + nccl_text(HOSTS, 1, _curve(40.0))
    (run,) = parse_text(text, tmp_path / "p.log")
    counts = {c.network: (c.count, c.without_gdr, c.first_without_gdr_at) for c in run.network.connections}
    assert counts == {"IBext_v8": (2, 2, f"{tmp_path / 'p.log'}:1"), "IB": (1, 0, None)}


def test_connections_outweigh_what_ranks_say_they_loaded(tmp_path: Path) -> None:
    (run,) = parse_text(_log("IB", gdr=True, plateau=300.0, ranks_on="Socket"), tmp_path / "a.log")
    assert [name for name, _ in run.network.loaded] == ["IB", "Socket"]
    assert run.network.uses("Socket") is None  # every connection went over IB
    no_connections = "\n".join(
        line for line in _log("IB", True, 300.0, ranks_on="Socket").split("\n") if "[send]" not in line
    )
    (bare,) = parse_text(no_connections, tmp_path / "b.log")
    assert bare.network.uses("Socket") is not None  # without connection lines, what ranks loaded counts


def test_a_run_naming_more_networks_than_nccl_loads_is_refused_at_the_line(tmp_path: Path) -> None:
    names = [f"Net{i}" for i in range(MAX_NETWORKS + 1)]
    lines = [_info("gpu001", 0, f"Using network {name}") for name in names]
    text = "\n".join(lines) + "\n" + nccl_text(HOSTS, 1, _curve(40.0))
    with pytest.raises(ForeignInputError) as exc:
        parse_text(text, tmp_path / "h.log")
    assert f"h.log:{MAX_NETWORKS + 1}" in str(exc.value) and "more than 8 networks" in str(exc.value)


def test_a_name_no_nccl_prints_is_not_taken(tmp_path: Path) -> None:
    """A control character or an over-long name is no network NCCL names: the line is not read as one."""
    lines = [
        _info("gpu001", 0, "Using network IB\x1b[2J"),
        _info("gpu001", 0, "Using network " + "x" * 65),
        _info("gpu001", 0, "Channel 00/0 : 0[0] -> 1[0] [send] via NET/" + "y" * 65 + "/0"),
    ]
    (run,) = parse_text("\n".join(lines) + "\n" + nccl_text(HOSTS, 1, _curve(40.0)), tmp_path / "n.log")
    assert run.network.loaded == () and run.network.connections == ()


def _json_doc(env: list[str]) -> str:
    devices = [{"rank": i, "hostname": h, "device": 0} for i, h in enumerate(HOSTS)]
    results = [
        {"size": s, "out_of_place": {"time": 1.0, "alg_bw": b, "bus_bw": b, "nwrong": 0.0}}
        for s, b in _curve(40.0)
    ]
    return json.dumps(
        {
            "args": ["all_reduce_perf", "-g", "1"],
            "env": env,
            "config": {"devices": devices},
            "results": results,
        }
    )


def test_a_json_run_names_the_network_it_forced(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    (run,) = parse_json(_json_doc(["NCCL_NET=socket"]), path)
    assert run.network.uses("Socket") == f"{path}: $.env"
    (plain,) = parse_json(_json_doc([]), path)
    assert plain.network.uses("Socket") is None
    with pytest.raises(ForeignInputError) as exc:
        parse_json(_json_doc(["NCCL_NET=IB/../x"]), path)
    assert "$.env" in str(exc.value) and "NCCL_NET" in str(exc.value)


# ---- what the report does with it ---------------------------------------------------------------


def _one_node(host: str) -> str:
    return nccl_text([host], 8, _curve(480.0))


def test_a_run_over_sockets_is_marked_and_blames_no_cable(tmp_path: Path, capsys) -> None:
    """A run at socket speed between two nodes whose one-node runs are healthy: marked at its first
    connection line, and no rail, link or leaf switch is blamed for it."""
    socket_log = _log("Socket", gdr=False, plateau=3.0)
    logs = {f"all_reduce_perf-{h}.log": _one_node(h) for h in HOSTS}
    bp, results = _site(tmp_path, {**logs, "all_reduce_perf-tcp.log": socket_log})
    code, out = _report(bp, results, capsys)
    assert code == 1 and out["clean"] is False
    runs = {Path(r["file"]).name: r for r in out["runs"]}
    first = next(i for i, line in enumerate(socket_log.split("\n"), 1) if "[send] via NET/" in line)
    assert runs["all_reduce_perf-tcp.log"]["transport"].startswith(
        f"NCCL ran over TCP sockets (`Socket`, {results / 'all_reduce_perf-tcp.log'}:{first})"
    )
    assert [runs[name]["transport"] for name in logs] == [None, None]
    assert out["suspects"] == [] and out["cluster_wide"] is False
    assert runs["all_reduce_perf-tcp.log"]["network"] == {
        "loaded": ["Socket"],
        "forced": None,
        "connections": [{"network": "Socket", "count": 32, "without_gdrdma": 32}],
        "ib_ports": {},  # the log has no `NET/IB : Using` line
    }
    assert all("network" not in runs[name] for name in logs)  # their outputs say nothing of it


def test_without_the_socket_lines_the_same_slow_run_blames_the_fabric(tmp_path: Path, capsys) -> None:
    """The counterpart of the test above: the same slow run with its NCCL lines removed is an ordinary low
    run, and the rails and links only it touched become suspects; the marking is what keeps them out."""
    bare = "\n".join(line for line in _log("Socket", False, 3.0).split("\n") if "NCCL INFO" not in line)
    logs = {f"all_reduce_perf-{h}.log": _one_node(h) for h in HOSTS}
    bp, results = _site(tmp_path, {**logs, "all_reduce_perf-tcp.log": bare})
    code, out = _report(bp, results, capsys)
    assert code == 1
    assert [r["transport"] for r in out["runs"]] == [None, None, None]
    assert {s["kind"] for s in out["suspects"]} == {"rail", "switch"}


def test_connections_without_gpudirect_are_marked(tmp_path: Path, capsys) -> None:
    bp, results = _site(tmp_path, {"all_reduce_perf-nogdr.log": _log("IB", gdr=False, plateau=250.0)})
    code, out = _report(bp, results, capsys)
    (run,) = out["runs"]
    assert code == 1 and run["transport"].startswith("32 of 32 network connection(s) printed without /GDRDMA")
    main(["acceptance-report", str(bp), "--results", str(results)])
    assert "TRANSPORT 32 of 32" in capsys.readouterr().out


def test_the_hpcx_verbs_plugin_without_gpudirect_is_marked(tmp_path: Path, capsys) -> None:
    log = _log("IBext_v8", gdr=False, plateau=250.0)
    bp, results = _site(tmp_path, {"all_reduce_perf-ibext.log": log})
    code, out = _report(bp, results, capsys)
    assert code == 1 and out["runs"][0]["transport"].startswith("32 of 32 network connection(s)")
    with_gdr = _log("IBext_v8", gdr=True, plateau=330.0)
    bp, results = _site(tmp_path / "gdr", {"all_reduce_perf-ibext.log": with_gdr})
    code, out = _report(bp, results, capsys)
    assert code == 0 and out["runs"][0]["transport"] is None


def test_a_healthy_ib_run_and_a_one_node_socket_line_are_clean(tmp_path: Path, capsys) -> None:
    """One node never uses the network: `Using network Socket` there (a node without RDMA devices, NVIDIA/nccl
    #428) says nothing of the fabric."""
    one_node = "\n".join(_info("gpu001", r, "Using network Socket") for r in range(8))
    one_node += "\n" + nccl_text(["gpu001"], 8, _curve(480.0))
    bp, results = _site(
        tmp_path, {"all_reduce_perf-ib.log": _log("IB", True, 330.0), "all_reduce_perf-1n.log": one_node}
    )
    code, out = _report(bp, results, capsys)
    assert code == 0, out
    assert [r["transport"] for r in out["runs"]] == [None, None]


def test_a_socket_run_calibrates_nothing(tmp_path: Path, capsys) -> None:
    bp, results = _site(tmp_path, {"all_reduce_perf-tcp.log": _log("Socket", False, 3.0)})
    cal = tmp_path / "cal.yaml"
    code = main(["acceptance-report", str(bp), "--results", str(results), "--calibrate", str(cal)])
    err = capsys.readouterr().err
    assert code == 2 and not cal.exists()
    assert (
        "no run can calibrate the model (nothing written): all_reduce_perf-tcp.log: NCCL ran over TCP"
        in " ".join(err.split())
    )


# ---- the ports NCCL's IB transport listed ----------------------------------------------------------------
# NCCL's IB transport lists, once a process, the active ports NCCL_IB_HCA selects (NVIDIA/nccl
# src/transport/net_ib.cc ncclIbInit, commit 48bb7fec): "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_3:1/IB ... ;
# OOB ibp24s0:10.0.0.1<0>", merged ports as " [0]={[0] mlx5_0:1/IB, [1] mlx5_1:1/IB}", none as "NET/IB : No
# device found.". The DGX H100 compute ports, rail by rail, as NVIDIA's DGX H100 user guide maps them (GPU k's
# OSFP port): mlx5_0, 3, 4, 5, 6, 9, 10, 11; its storage ports are mlx5_1 / mlx5_7, in-band mlx5_2 / mlx5_8.
DGX_H100_COMPUTE = ["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"]


def _using(ports: list[str], link: str = "IB", oob: str = "ibp24s0:10.0.0.1<0>") -> str:
    listed = "".join(f" [{i}]{p}:1/{link}" for i, p in enumerate(ports))
    return f"NET/IB : Using{listed} [RO]; OOB {oob}"


def _ported(lists: dict[str, list[str]], plateau: float = 330.0, link: str = "IB") -> str:
    """The healthy two-node IB log with each rank's `NET/IB : Using` line: ``lists`` per host (the host's eight
    ranks print the same list)."""
    lines = [
        _info(host, 8 * i + r, _using(ports, link))
        for i, (host, ports) in enumerate(lists.items())
        for r in range(8)
    ]
    return "\n".join(lines) + "\n" + _log("IB", True, plateau)


def _cable_row(tmp_path: Path, bp: Path, host: str, port: str) -> dict[str, str]:
    """The cabling plan's row for ``host``'s ``port`` (cables.csv, as `blueprint generate` writes it)."""
    import csv

    out = tmp_path / "build"
    assert main(["generate", str(bp), "-o", str(out), "-q"]) == 0
    with (out / "cabling" / "cables.csv").open() as fh:
        (row,) = [r for r in csv.DictReader(fh) if r["a_device"] == host and r["a_port"] == port]
    return row


def test_every_planned_port_listed_is_clean_and_shown(tmp_path: Path, capsys) -> None:
    storage_too = [*DGX_H100_COMPUTE, "mlx5_7"]  # NCCL_IB_HCA unset: listed, not a finding
    bp, results = _site(
        tmp_path, {"all_reduce_perf.log": _ported({"gpu001": storage_too, "gpu002": DGX_H100_COMPUTE})}
    )
    code, out = _report(bp, results, capsys)
    (run,) = out["runs"]
    assert code == 0 and run["ports"] is None, run
    assert run["network"]["ib_ports"] == {
        "gpu001": [f"{p}:1/IB" for p in storage_too],
        "gpu002": [f"{p}:1/IB" for p in DGX_H100_COMPUTE],
    }


def test_a_port_nccl_did_not_list_is_named_with_its_cable(tmp_path: Path, capsys) -> None:
    """gpu002's rail-5 port (mlx5_9) was down when NCCL started: the run is marked at gpu002's first list,
    names that port's cable from the cabling plan and blames no rail, link or switch by bandwidth."""
    without = [p for p in DGX_H100_COMPUTE if p != "mlx5_9"]
    log = _ported({"gpu001": DGX_H100_COMPUTE, "gpu002": without}, plateau=290.0)
    bp, results = _site(tmp_path, {"all_reduce_perf.log": log})
    code, out = _report(bp, results, capsys)
    row = _cable_row(tmp_path, bp, "gpu002", "mlx5_9/1")
    first = next(
        i for i, line in enumerate(log.split("\n"), 1) if line.startswith("gpu002:") and "NET/IB" in line
    )
    (run,) = out["runs"]
    assert code == 1 and out["clean"] is False and out["suspects"] == []
    assert run["ports"].startswith(
        f"gpu002 rail 5 port mlx5_9:1 (cable {row['cable_id']} to {row['b_device']} port {row['b_port']}) "
        f"is not among the ports NCCL found ({results / 'all_reduce_perf.log'}:{first})"
    )
    assert row["b_device"].endswith("-r5")  # the rail-5 leaf of the rail-optimised plan
    assert "other link layer" not in run["ports"]  # the port is missing, not in another layer
    (listed,) = out["port_problems"]  # the report's list: each port once, with its cabling-plan row
    assert (listed["host"], listed["rail"], listed["port"], listed["listed_as"]) == (
        "gpu002",
        5,
        "mlx5_9:1",
        None,
    )
    assert (listed["cable"], listed["switch"], listed["switch_port"]) == (
        row["cable_id"],
        row["b_device"],
        row["b_port"],
    )
    assert listed["runs"] == ["all_reduce_perf.log"]
    main(["acceptance-report", str(bp), "--results", str(results)])
    text = capsys.readouterr().out
    assert "PORTS gpu002 rail 5 port mlx5_9:1" in text
    assert f"      {row['cable_id']}: gpu002 mlx5_9/1 <-> {row['b_device']} port {row['b_port']}" in text


def test_the_report_lists_each_missing_port_once(tmp_path: Path, capsys) -> None:
    """Two runs that both show gpu002's rail-5 port missing, and one rail-0 run in the other link layer: the
    report's list names rail 5's port once with both runs, and gpu001's rail-0 port as listed in RoCE."""
    without = [p for p in DGX_H100_COMPUTE if p != "mlx5_9"]
    missing = _ported({"gpu001": DGX_H100_COMPUTE, "gpu002": without}, plateau=290.0)
    roce = _ported({"gpu001": ["mlx5_0"], "gpu002": ["mlx5_0"]}, link="RoCE")
    logs = {
        "all_reduce_perf-a.log": missing,
        "all_reduce_perf-b.log": missing,
        "all_reduce_perf-rail0.log": roce,
    }
    bp, results = _site(tmp_path, logs)
    code, out = _report(bp, results, capsys)
    assert code == 1
    shown = [
        (p["host"], p["rail"], p["port"], p["listed_as"], sorted(p["runs"])) for p in out["port_problems"]
    ]
    assert sorted(shown) == [
        ("gpu001", 0, "mlx5_0:1", "RoCE", ["all_reduce_perf-rail0.log"]),
        ("gpu002", 0, "mlx5_0:1", "RoCE", ["all_reduce_perf-rail0.log"]),
        ("gpu002", 5, "mlx5_9:1", None, ["all_reduce_perf-a.log", "all_reduce_perf-b.log"]),
    ]


def test_no_device_found_names_every_planned_port(tmp_path: Path, capsys) -> None:
    lines = [_info("gpu001", r, _using(DGX_H100_COMPUTE)) for r in range(8)]
    lines += [_info("gpu002", 8 + r, "NET/IB : No device found.") for r in range(8)]
    bp, results = _site(tmp_path, {"all_reduce_perf.log": "\n".join(lines) + "\n" + _log("IB", True, 300.0)})
    code, out = _report(bp, results, capsys)
    text = out["runs"][0]["ports"]
    assert code == 1 and text.count("gpu002 rail ") == 4 and "and 4 more" in text
    assert "gpu001" not in text


def test_a_port_in_the_other_link_layer_is_marked(tmp_path: Path, capsys) -> None:
    log = _ported({"gpu001": DGX_H100_COMPUTE, "gpu002": DGX_H100_COMPUTE}, link="RoCE")
    bp, results = _site(tmp_path, {"all_reduce_perf.log": log})
    code, out = _report(bp, results, capsys)
    text = out["runs"][0]["ports"]
    assert code == 1 and "gpu001 rail 0 port mlx5_0:1" in text
    assert "runs RoCE where the plan's fabric runs IB" in text
    assert "a port in the other link layer is not on the planned fabric" in text


def test_ranks_listing_one_port_each_cover_the_host(tmp_path: Path, capsys) -> None:
    """NCCL_IB_HCA set per local rank (a wrapper giving rank k its own port): the host's lists together hold
    every planned port, so nothing is missing; merged ports (NCCL_IB_MERGE_NICS) are read inside their braces."""
    lines = [
        _info(h, 8 * i + k, _using([DGX_H100_COMPUTE[k]])) for i, h in enumerate(HOSTS) for k in range(8)
    ]
    merged = " [0]={[0] mlx5_0:1/IB, [1] mlx5_3:1/IB}"
    lines.append(_info("gpu001", 0, f"NET/IB : Using{merged} ; OOB ibp24s0:10.0.0.1<0>"))
    bp, results = _site(tmp_path, {"all_reduce_perf.log": "\n".join(lines) + "\n" + _log("IB", True, 330.0)})
    code, out = _report(bp, results, capsys)
    assert code == 0 and out["runs"][0]["ports"] is None
    (run,) = parse_text("\n".join(lines[-1:]) + "\n" + nccl_text(HOSTS, 1, _curve(40.0)), tmp_path / "m.log")
    assert [str(p) for p in run.network.ib_ports[0].ports] == ["mlx5_0:1/IB", "mlx5_3:1/IB"]


def test_a_one_rail_run_is_held_to_its_rail(tmp_path: Path, capsys) -> None:
    """NCCL_IB_HCA=mlx5_9 lists that port alone: the rail-5 run is clean; the same list in a rail-0 run
    misses rail 0's port (mlx5_0)."""
    log = _ported({"gpu001": ["mlx5_9"], "gpu002": ["mlx5_9"]})
    bp, results = _site(tmp_path, {"all_reduce_perf-rail5.log": log, "all_reduce_perf-rail0.log": log})
    code, out = _report(bp, results, capsys)
    runs = {Path(r["file"]).name: r for r in out["runs"]}
    assert runs["all_reduce_perf-rail5.log"]["ports"] is None
    assert runs["all_reduce_perf-rail0.log"]["ports"].startswith("gpu001 rail 0 port mlx5_0:1")
    assert code == 1


def test_placeholder_port_names_are_not_held_to(tmp_path: Path, capsys) -> None:
    """A server whose RDMA names are not published gets placeholder ports in the plan (mlx5_<n>/1, never
    written into host configuration): NCCL's real names are not compared with them."""
    from perf_blueprints import l40s_nodes

    topology = {"kind": "fat-tree", "switch": "sn5600", "rail_optimized": True}
    bp_doc = l40s_nodes("l40s", 2, 2, 400, topology)
    bp_doc["fabrics"]["compute"]["technology"] = "roce-v2-400"
    log_hosts = ["node001", "node002"]
    lines = [_info(h, i, _using(["rocep1s0f0"], "RoCE")) for i, h in enumerate(log_hosts)]
    text = "\n".join(lines) + "\n" + nccl_text(log_hosts, 4, _curve(40.0))
    bp = tmp_path / "bp.yaml"
    with bp.open("w") as fh:
        YAML().dump(bp_doc, fh)
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "all_reduce_perf.log").write_text(text)
    _, out = _report(bp, tmp_path / "results", capsys)
    assert out["runs"][0]["ports"] is None and out["runs"][0]["network"]["ib_ports"]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (_info("12345", 0, _using(["mlx5_0"])), "all digits"),
        (_info("gpu001", 0, "NET/IB : Using [0]mlx5_0:0/IB ; OOB ib0:1.2.3.4<0>"), "no port number"),
        (_info("gpu001", 0, "NET/IB : Using [0]mlx5_0:300/IB ; OOB ib0:1.2.3.4<0>"), "no port number"),
    ],
)
def test_a_port_list_no_nccl_prints_is_refused_at_its_line(tmp_path: Path, line: str, message: str) -> None:
    text = line + "\n" + nccl_text(HOSTS, 1, _curve(40.0))
    with pytest.raises(ForeignInputError) as exc:
        parse_text(text, tmp_path / "p.log")
    assert "p.log:1" in str(exc.value) and message in str(exc.value)


def test_a_host_listing_more_ports_than_a_server_has_is_refused(tmp_path: Path) -> None:
    """The host's processes list ports one line each (NCCL_IB_HCA per rank); together they pass the bound at
    the line that does."""
    from generator.perf.nccl_network import MAX_IB_PORTS

    lines = [
        _info("gpu001", i, f"NET/IB : Using [0]mlx5_{i}:1/IB ; OOB ib0:1.2.3.4<0>")
        for i in range(MAX_IB_PORTS + 1)
    ]
    text = "\n".join(lines) + "\n" + nccl_text(HOSTS, 1, _curve(40.0))
    with pytest.raises(ForeignInputError) as exc:
        parse_text(text, tmp_path / "big.log")
    assert f"big.log:{MAX_IB_PORTS + 1}" in str(exc.value) and f"more than {MAX_IB_PORTS} ports" in str(
        exc.value
    )


def test_a_one_node_run_is_not_held_to_its_ports(tmp_path: Path, capsys) -> None:
    one = "\n".join(_info("gpu001", r, _using(DGX_H100_COMPUTE[:2])) for r in range(8))
    bp, results = _site(tmp_path, {"all_reduce_perf.log": one + "\n" + _one_node("gpu001")})
    code, out = _report(bp, results, capsys)
    assert code == 0 and out["runs"][0]["ports"] is None


def test_a_run_missing_a_port_calibrates_nothing(tmp_path: Path, capsys) -> None:
    without = [p for p in DGX_H100_COMPUTE if p != "mlx5_0"]
    bp, results = _site(
        tmp_path, {"all_reduce_perf.log": _ported({"gpu001": without, "gpu002": DGX_H100_COMPUTE})}
    )
    cal = tmp_path / "cal.yaml"
    code = main(["acceptance-report", str(bp), "--results", str(results), "--calibrate", str(cal)])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2 and not cal.exists()
    assert (
        "no run can calibrate the model (nothing written): all_reduce_perf.log: gpu001 rail 0 port mlx5_0:1"
        in err
    )
