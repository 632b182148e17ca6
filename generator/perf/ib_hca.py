"""``NCCL_IB_HCA`` as NCCL reads it: which RDMA ports a run was allowed to use.

NVIDIA/nccl src/transport/net_ib.cc ``ncclIbInit`` (commit 48bb7fec7953112ff37499a272317f6663f8f600) takes
the value, drops a leading ``^`` (exclude what matches) and then a leading ``=`` (match names exactly), and
splits the rest with src/misc/utils.cc ``parseStringList`` (commit 01d1836668ad59bfc26d14aede5fec593da6ae42)
into at most ``MAX_IB_DEVS`` (32) entries ``name[:port]``; that function drops one more leading ``^`` or
``=``, skips empty entries and reads a port with ``atoi``. ``matchIfList`` then matches a device's name by
prefix (``mlx5_1`` also selects ``mlx5_10`` and ``mlx5_11``) or, with ``=``, whole; a port matches when
either side names none. An empty list selects every port (and, with ``^``, none).

The value is foreign input (a -J file's ``env``, an INFO line): printable ASCII, bounded, and no entry longer
than the 63 characters NCCL's ``struct netIf`` holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from generator.foreign import ForeignInputError

MAX_IB_DEVS = 32  # net_ib.cc: `struct netIf userIfs[MAX_IB_DEVS]`, the entries parseStringList reads
MAX_NAME = 63  # utils.h `struct netIf { char prefix[64]; ... }`, with its terminating NUL
MAX_VALUE = 4096  # more than MAX_IB_DEVS entries of MAX_NAME characters and a port each
_VALUE_RE = re.compile(r"[ -~]*", re.ASCII)
_ATOI_RE = re.compile(r"[ \t\n\v\f\r]*([+-]?[0-9]{1,9})", re.ASCII)  # atoi's leading digits; none: 0


@dataclass(frozen=True)
class HcaFilter:
    """An ``NCCL_IB_HCA`` value, parsed as NCCL parses it."""

    text: str  # the value as given, for messages
    exclude: bool  # `^`: the entries name the ports NOT to use
    exact: bool  # `=`: names match whole, not by prefix
    entries: tuple[tuple[str, int], ...]  # (name or name prefix, port; -1: every port)

    @property
    def shown(self) -> str:
        """The value for a message: whole when short."""
        return self.text if len(self.text) <= 120 else self.text[:120] + "..."

    def selects(self, device: str, port: int) -> bool:
        """Whether NCCL, given this value, may use ``device``'s ``port`` (matchIfList ^ searchNot)."""
        listed = not self.entries or any(
            (device == name if self.exact else device.startswith(name)) and (want == -1 or want == port)
            for name, want in self.entries
        )
        return listed != self.exclude


def parse_hca(value: str, where: str) -> HcaFilter:
    """``value`` as ncclIbInit and parseStringList read it; ForeignInputError at ``where`` when it is no
    value a shell hands NCCL (not printable ASCII, too long) or an entry overflows NCCL's name buffer."""
    value = value.rstrip("\r\n")
    if len(value) > MAX_VALUE or not _VALUE_RE.fullmatch(value):
        raise ForeignInputError(
            where, f"NCCL_IB_HCA: its value is no list of RDMA devices (printable ASCII, at most {MAX_VALUE})"
        )
    rest = value
    exclude = rest.startswith("^")
    rest = rest[1:] if exclude else rest
    exact = rest.startswith("=")
    rest = rest[1:] if exact else rest
    if rest[:1] in ("^", "="):  # parseStringList ignores one more
        rest = rest[1:]
    entries: list[tuple[str, int]] = []
    for item in rest.split(","):
        if len(entries) >= MAX_IB_DEVS:
            break  # parseStringList stops at maxList
        name, colon, port_text = item.partition(":")
        if not name:
            continue  # an empty entry, or one that starts with `:`, adds nothing
        if len(name) > MAX_NAME:
            raise ForeignInputError(
                where, f"NCCL_IB_HCA entry `{name[:MAX_NAME]}...` is longer than NCCL's {MAX_NAME} characters"
            )
        port = -1
        if colon:
            m = _ATOI_RE.match(port_text)
            port = int(m.group(1)) if m else 0
        entries.append((name, port))
    return HcaFilter(value, exclude, exact, tuple(entries))
