"""Synthetic nccl-tests standard output (the formats of nccl-tests src/util.cu), for the tests that need a
run with chosen hosts and bandwidths (imported by name; the suite root is on the path)."""

from __future__ import annotations

import json


def nccl_text(
    hosts: list[str], gpus_per_node: int, rows: list[tuple[int, float]], program: str = "all_reduce_perf"
) -> str:
    """One run: the ``# Using devices`` block (rank by rank, host by host), a result row per (size, busbw)
    with algbw = busbw (2 ranks' factor), and the average line the acceptance role's filter reads."""
    lines = [
        "# nccl-tests version 2.17.6 nccl-headers=22602 nccl-library=22602",
        f"# Collective test starting: {program}",
        "#",
        "# Using devices",
    ]
    rank = 0
    for host in hosts:
        for dev in range(gpus_per_node):
            lines.append(
                f"#  Rank {rank:2d} Group  0 Pid {1000 + rank:6d} on {host:>10s} device {dev:2d} "
                f"[0000:{dev:02x}:00] NVIDIA H100 80GB HBM3"
            )
            rank += 1
    lines += [
        "#",
        "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   "
        "algbw   busbw  #wrong",
    ]
    for size, busbw in rows:
        t = size / (busbw * 1e3)  # µs at algbw = busbw
        body = f"  {t:7.1f}  {busbw:6.2f}  {busbw:6.2f}       0"
        lines.append(f"{size:12d}  {size // 4:12d}     float     sum      -1{body}{body}")
    avg = sum(b for _, b in rows) / len(rows)
    lines += [
        "# Out of bounds values : 0 OK",
        f"# Avg bus bandwidth    : {avg:.4f}",
        "#",
        f"# Collective test concluded: {program}",
    ]
    return "\n".join(lines) + "\n"


def nccl_json(
    hosts: list[str], hca: str | None, rows: list[tuple[int, float]], gpus_per_node: int = 1
) -> str:
    """nccl-tests -J output (JSON_FILE_VERSION 2, keys as src/util.cu writes them) of one process a GPU, with
    ``NCCL_IB_HCA`` in its environment unless ``hca`` is None."""
    devices = [
        {
            "rank": i,
            "group": 0,
            "pid": 1000 + i,
            "hostname": hosts[i // gpus_per_node],
            "device": i % gpus_per_node,
            "device_hex": f"0000:{18 + i % gpus_per_node:02x}:00",
            "device_info": "NVIDIA H100 80GB HBM3",
        }
        for i in range(len(hosts) * gpus_per_node)
    ]
    results = [
        {
            "size": s,
            "count": s // 4,
            "type": "float",
            "redop": "sum",
            "root": "    -1",
            "out_of_place": {"time": s / (b * 1e3), "alg_bw": b, "bus_bw": b, "nwrong": 0.0},
            "in_place": {"time": s / (b * 1e3), "alg_bw": b, "bus_bw": b, "nwrong": 0.0},
            "actual_iterations": 20,
            "experiment_name": "all_reduce_perf",
        }
        for s, b in rows
    ]
    doc = {
        "version": 2,
        "start_time": "2026-01-01 00:00:00",
        "args": ["/opt/nccl-tests/build/all_reduce_perf", "-b", "1M", "-e", "1G", "-f", "2", "-g", "1"],
        "env": [*([f"NCCL_IB_HCA={hca}"] if hca is not None else []), "NCCL_DEBUG=WARN"],
        "nccl_version": 22602,
        "config": {
            "nthreads": 1,
            "ngpus": 1,
            "minimum_bytes": rows[0][0],
            "maximum_bytes": rows[-1][0],
            "step_factor": 2,
            "devices": devices,
        },
        "results": results,
        "out_of_bounds": {"count": 0, "okay": "true"},
        "average_bus_bandwidth": {"bandwidth": 1.0, "okay": "unchecked"},
        "errors": [],
        "end_time": "2026-01-01 00:01:00",
    }
    return json.dumps(doc, indent=1)
