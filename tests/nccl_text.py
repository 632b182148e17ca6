"""Synthetic nccl-tests standard output (the formats of nccl-tests src/util.cu), for the tests that need a
run with chosen hosts and bandwidths (imported by name; the suite root is on the path)."""

from __future__ import annotations


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
