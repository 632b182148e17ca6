"""A line naming NCCL's network that is longer than NCCL prints is refused where it stands
(generator.perf.nccl_network.MAX_NET_LINE_CHARS: src/debug.cc's prefix and net_ib.cc's 2048-character port list
with its OOB part), and NCCL's IB port list is cut at the first `; OOB ` by a bounded search after the first
prefix: a 60 MB line of repeated `NET/IB : Using` prefixes took 40 s of backtracking (its speed is
benchmarks/hostile.py's; here, what is read)."""

from __future__ import annotations

import pytest

from generator.foreign import ForeignInputError
from generator.perf.nccl_network import MAX_NET_LINE_CHARS, IbPort, NetworkLines

USING = "gpu001:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_3:1/IB ; OOB ib0:10.0.0.1<0>"


def test_nccls_port_list_is_read() -> None:
    lines = NetworkLines()
    assert lines.read(USING, "f:1")
    (host,) = lines.use().ib_ports
    assert (host.host, host.ports) == ("gpu001", (IbPort("mlx5_0", 1, "IB"), IbPort("mlx5_3", 1, "IB")))


def test_a_network_line_longer_than_nccl_prints_is_refused_where_it_stands() -> None:
    lines = NetworkLines()
    padded = "x " * MAX_NET_LINE_CHARS + USING  # the list NCCL prints, behind more than NCCL's prefix holds
    with pytest.raises(ForeignInputError, match=r"^f:1: .*longer than any NCCL prints"):
        lines.read(padded, "f:1")
    repeated = " h:1:1 [0] NCCL INFO NET/IB : Using" * (1 << 15)  # ~1 MB of prefixes, no list
    with pytest.raises(ForeignInputError, match=r"^f:2: "):
        lines.read(repeated, "f:2")
    assert not lines.read(repeated[:MAX_NET_LINE_CHARS], "f:3")  # within the bound: no `; OOB `, no list
    assert not lines.read("x" * (2 * MAX_NET_LINE_CHARS), "f:4")  # long, but none of NCCL's network lines
    assert lines.use().ib_ports == ()


def test_a_list_past_nccls_buffer_is_not_read() -> None:
    """NCCL's list is at most 2047 characters (char line[2048]); the `; OOB ` past it ends no list of its."""
    lines = NetworkLines()
    listed = " [0]mlx5_0:1/IB" * 140  # 2,100 characters
    assert not lines.read(f"gpu001:1:1 [0] NCCL INFO NET/IB : Using{listed}; OOB ib0:10.0.0.1<0>", "f:1")
    assert lines.read(f"gpu001:1:1 [0] NCCL INFO NET/IB : Using{listed[:2000]}; OOB ib0:10.0.0.1<0>", "f:2")
